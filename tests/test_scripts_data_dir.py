"""`workbench forget` and `workbench remembered` see the whole data directory, whatever options they
were given: a store there that the options leave out is opened as its own option opens it (and said on
stderr), or the start is refused in one line naming the options it needs. Never "no fact removed"
while a store they did not open holds the value. Each command runs in a process of its own."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from tests.test_scripts import holding_value, run
from workbench.cli.configs import model_config
from workbench.cli.parser import build_parser
from workbench.cli.start import session_start

CUSTOMER = "Contoso Ltd 7731"


def written(data: Path, monkeypatch: pytest.MonkeyPatch, *options: str) -> None:
    """One turn declaring the customer, said through the session `workbench OPTIONS` starts, then its quit."""
    monkeypatch.setenv("WORKBENCH_DATA_DIR", str(data))
    args = build_parser().parse_args(list(options))
    session = session_start(args, model_config(args))()
    try:
        assert asyncio.run(session.ask("support", f"customer={CUSTOMER}")).result.ok
    finally:
        session.close()
    assert holding_value(data, CUSTOMER), "the turn was written to the data directory"


def test_forget_without_persist_reaches_the_saved_state_the_data_directory_holds(tmp_path, monkeypatch):
    """It exited 0 with "forgot customer: no fact removed", and the value stayed in the state file."""
    data = tmp_path / "data"
    written(data, monkeypatch, "--persist")
    done = run(data, "forget", "customer", "--yes")
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[0] == "forgot customer: the fact(s) customer removed"
    assert "persisted sessions: 1 file(s)" in done.stdout
    assert done.stderr.splitlines() == [
        f"workbench forget: also opened saved state ({data / 'sessions'}), as --persist does: the data directory "
        "holds it"
    ]
    assert holding_value(data, CUSTOMER) == []


def test_remembered_without_persist_lists_the_saved_state(tmp_path, monkeypatch):
    """It listed 0 facts, with no hint that saved state existed."""
    data = tmp_path / "data"
    written(data, monkeypatch, "--persist")
    done = run(data, "remembered", "--json")
    assert done.returncode == 0, done.stderr
    assert "also opened saved state" in done.stderr
    listed = json.loads(done.stdout)
    assert listed["values"] == {"customer": [CUSTOMER]}
    assert "persisted sessions" in {s["name"] for s in listed["systems"]}


def test_forget_without_agent_memory_reaches_the_extracted_memory_the_data_directory_holds(tmp_path, monkeypatch):
    data = tmp_path / "data"
    written(data, monkeypatch, "--agent-memory", "extracted")
    assert holding_value(data / "agent-memory" / "extracted", CUSTOMER)
    done = run(data, "forget", "customer", "--yes")
    assert done.returncode == 0, done.stderr
    assert "also opened extracted agent memory" in done.stderr and "as --agent-memory extracted does" in done.stderr
    assert holding_value(data, CUSTOMER) == []


@pytest.mark.parametrize(
    ("options", "needed"),
    [
        ([], "--agent-memory mem0 --model ... --embedding-model ..."),
        (["--agent-memory", "files"], "--agent-memory mem0 --model ... --embedding-model ..."),
    ],
)
def test_a_store_the_start_cannot_open_is_refused_in_one_line_naming_the_options(
    tmp_path, monkeypatch, options, needed
):
    """Mem0 needs its models; nothing is forgotten anywhere, not even in the stores that could be opened."""
    data = tmp_path / "data"
    written(data, monkeypatch, "--persist")
    mem0 = data / "agent-memory" / "mem0"
    mem0.mkdir(parents=True)
    (mem0 / "history.db").write_bytes(f"customer={CUSTOMER}".encode())
    done = run(data, "forget", "customer", "--yes", *options)
    assert done.returncode == 1 and done.stdout == ""
    [line] = done.stderr.splitlines()
    assert f"the data directory holds mem0 agent memory ({mem0})" in line
    assert f"run again with {needed} to reach it (nothing was done)" in line
    assert holding_value(data / "sessions", CUSTOMER)


def test_two_agent_memories_are_refused_naming_the_other(tmp_path, monkeypatch):
    """One agent memory runs at a time: the start names the one it would leave out."""
    data = tmp_path / "data"
    written(data, monkeypatch, "--agent-memory", "extracted")
    files = data / "agent-memory" / "files"
    files.mkdir(parents=True)
    (files / "notes.md").write_text("nothing of note\n")
    done = run(data, "remembered")
    assert done.returncode == 1
    [line] = done.stderr.splitlines()
    assert "extracted agent memory" in line and "(one agent memory at a time: --agent-memory files runs)" in line
    assert "run again with --agent-memory extracted to reach it" in line
