"""On a framework that no longer has extracted memory (agent-framework-core retires it after 2026-12-31):
`--agent-memory extracted` is refused in one line naming the installed version, the lab's `extracted`
policy is unavailable with that reason, and everything else loads and recognises as before."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import warnings
from importlib.metadata import version

import pytest

from workbench.agentmem import extracted
from workbench.agentmem.extracted import ExtractedMemory
from workbench.cli.dispatch import main
from workbench.drift.tally import framework_parts
from workbench.runtime.config import ConfigError

RETIRED = ("MemoryContextProvider", "MemoryStore", "MemoryFileStore", "MemoryTopicRecord", "MemoryIndexEntry")
REASON = "agent-framework-core 9.0.0 no longer has extracted memory: use --agent-memory files"

# A process in which the framework exports none of the retired classes (as a framework that removed them),
# then runs the workbench's own commands and recognises a user's agent.
WITHOUT_THEM = """
import contextlib, io, json, sys
from pathlib import Path
import agent_framework

exported = agent_framework.__getattr__  # the framework's lazy exports (PEP 562)
retired = set(json.loads(sys.argv[1]))


def without_retired(name):
    if name in retired:
        raise AttributeError(name)
    return exported(name)


agent_framework.__getattr__ = without_retired
from agent_framework import Agent, FileHistoryProvider

from workbench import ScriptedChatClient
from workbench.agentmem.recognise import recognise
from workbench.cli import main

folder = Path(sys.argv[2])
refused = io.StringIO()
with contextlib.redirect_stderr(refused):
    code = main(["--agent-memory", "extracted", "--agent-memory-dir", str(folder / "memory")])
lab = io.StringIO()
with contextlib.redirect_stdout(lab):
    lab_code = main(["drift", "--json", "--turns", "10", "--policies", "facts,extracted"])
agent = Agent(ScriptedChatClient(), "You keep notes.", name="desk", context_providers=[FileHistoryProvider(folder)])
print(json.dumps({
    "code": code,
    "refused": refused.getvalue(),
    "lab_code": lab_code,
    "lab": json.loads(lab.getvalue()),
    "recognised": [type(m).__name__ for m in recognise([agent])],
}))
"""


def test_without_the_retired_classes_the_option_is_refused_the_lab_says_why_and_agents_load(tmp_path):
    run = subprocess.run(
        [sys.executable, "-c", WITHOUT_THEM, json.dumps(RETIRED), str(tmp_path)],
        env={**os.environ, "WORKBENCH_DATA_DIR": str(tmp_path / "data")},
        capture_output=True,
        text=True,
        timeout=60,  # a window opened instead of the refusal waits for a terminal
        check=False,
    )
    assert run.returncode == 0, run.stderr
    seen = json.loads(run.stdout.splitlines()[-1])
    reason = (
        f"agent-framework-core {version('agent-framework-core')} no longer has extracted memory "
        "(MemoryContextProvider, retired after 2026-12-31): use --agent-memory files (FileMemoryProvider, the "
        "memory files the model writes)"
    )
    assert seen["code"] == 2 and seen["refused"] == f"workbench: {reason}\n"  # one line, before any window
    assert not (tmp_path / "memory").exists()
    assert seen["lab_code"] == 0 and seen["lab"]["unavailable"] == {"extracted": reason}
    assert "extracted" not in seen["lab"]["matrix"] and "facts" in seen["lab"]["matrix"]
    assert seen["recognised"] == ["FileHistoryMemory"]
    assert "Warning" not in run.stderr


@pytest.fixture
def retired(monkeypatch):
    """This process's framework as one without extracted memory, as far as the workbench asks."""
    monkeypatch.setattr(extracted, "_UNAVAILABLE", REASON)


@pytest.mark.usefixtures("retired")
def test_the_refusal_comes_before_anything_is_built(tmp_path, capsys):
    assert main(["--agent-memory", "extracted", "--agent-memory-dir", str(tmp_path / "memory")]) == 2
    assert capsys.readouterr().err == f"workbench: {REASON}\n"
    assert not (tmp_path / "memory").exists()
    with pytest.raises(ConfigError, match=REASON):  # built from code, without the options
        ExtractedMemory(tmp_path)


@pytest.mark.usefixtures("retired")
def test_the_lab_shows_the_policy_unavailable_in_its_row_and_times_no_part_of_it(monkeypatch, capsys):
    monkeypatch.setenv("COLUMNS", "240")  # each row on one line
    assert main(["drift", "--turns", "10", "--policies", "facts,extracted"]) == 0
    rows = [line for line in capsys.readouterr().out.splitlines() if line.startswith("│ extracted memory")]
    assert len(rows) == 5 and all(REASON in row for row in rows)  # each probe's two tables, and the cost
    assert [cls.__name__ for cls, _ in framework_parts()] == ["FileHistoryProvider"]


def test_while_the_framework_has_them_nothing_is_refused_and_no_deprecation_warning_escapes(tmp_path):
    assert extracted.unavailable() is None
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the framework's DeprecationWarning, had the guard let one out
        memory = ExtractedMemory(tmp_path)
        (provider,) = memory.providers("support")
    assert extracted.is_extracted(provider) and extracted.store_of(provider) == (memory.store, tmp_path)
    assert [cls.__name__ for cls, _ in framework_parts()] == ["FileHistoryProvider", "MemoryContextProvider"]
    assert not extracted.is_extracted(object())
