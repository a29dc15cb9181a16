"""The folders the memories on the user's agents keep their files in are the workbench's while it runs
them, as its own are: locked against a second workbench (a TUI, `workbench remembered`, `workbench
forget`), refused when read-only, and every file in them readable by the user only, whatever the umask
the framework writes them with. Real processes, as a user starts them (`tests/test_startup.py`)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.test_startup import AS_USER, HANG, holding, refused

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "agents"
TURNS = """
import asyncio, os, sys
from workbench.cli.configs import model_config
from workbench.cli.parser import parse
from workbench.cli.start import load_agents, session_start
os.umask(0o022)  # the usual umask: the framework's files would be readable by everyone
args = parse(sys.argv[1:])
start = session_start(args, model_config(args), load_agents(args))  # holds what it opened
session = start()
async def turns():
    for agent in ("triage", "notes"):
        assert (await session.runtime.ask(agent, "customer=Contoso; module=Billing")).ok
asyncio.run(turns())
"""


def _env(tmp_path: Path) -> dict[str, str]:
    return {
        **os.environ,
        "WORKBENCH_DATA_DIR": str(tmp_path / "data"),
        "EXAMPLE_AGENTS_DATA": str(tmp_path / "agents"),
        "TERM": "xterm-256color",
    }


def workbench(
    tmp_path: Path, *words: str, cwd: Path | None = None, as_user: bool = False
) -> subprocess.CompletedProcess[str]:
    """`workbench WORDS`; `as_user`: without root's power to write whatever a file's mode says."""
    command = [sys.executable, "-m", "workbench", *words]
    if as_user and os.geteuid() == 0:
        command = [shutil.which("setpriv") or "setpriv", f"--inh-caps={AS_USER}", f"--bounding-set={AS_USER}", *command]
    return subprocess.run(
        command,
        env=_env(tmp_path),
        cwd=cwd,
        umask=0o022,  # the usual one: the framework's files would be readable by everyone
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=HANG,
    )


def refused_as(command: str, result: subprocess.CompletedProcess[str]) -> str:
    """The one line a script refused at its start printed (exit 1, nothing on stdout)."""
    assert (result.returncode, result.stdout) == (1, ""), result.stderr
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"workbench {command}: "), result.stderr
    return lines[0]


def test_a_second_workbench_on_the_same_agents_is_refused_naming_the_first_and_the_folder(tmp_path):
    history, notes = tmp_path / "agents" / "triage-history", tmp_path / "agents" / "notes-memory"
    with holding(tmp_path, str(EXAMPLES), env=_env(tmp_path)) as pid:
        line = refused(workbench(tmp_path, str(EXAMPLES)))
        assert line.startswith("workbench: your agents' memory could not be opened: ")
        assert f"another workbench (PID {pid}) is using {notes}" in line
        forget = refused_as("forget", workbench(tmp_path, "forget", "module", str(EXAMPLES), "--yes"))
        assert f"another workbench (PID {pid}) is using" in forget
        remembered = refused_as("remembered", workbench(tmp_path, "remembered", str(EXAMPLES)))
        assert f"another workbench (PID {pid}) is using" in remembered
        # One agent of the folder, loaded by module:attribute, shares the history folder: refused too.
        by_reference = workbench(tmp_path, "remembered", "--agents", "triage:agent", cwd=EXAMPLES)
        assert {p.name for p in history.iterdir()} == {".workbench.lock"}  # the lock, and nothing written
    assert f"another workbench (PID {pid}) is using {history}" in refused_as("remembered", by_reference)
    assert list(history.iterdir()) == list(notes.iterdir()) == []  # the first one quit: its locks went with it
    assert workbench(tmp_path, "remembered", str(EXAMPLES)).returncode == 0
    assert list(history.iterdir()) == []  # and the script's, as it ended


def test_a_lock_a_killed_workbench_left_in_your_folder_is_taken_over_and_removed_at_the_next_quit(tmp_path):
    history = tmp_path / "agents" / "triage-history"
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLDS, str(EXAMPLES)], env=_env(tmp_path), stdin=subprocess.PIPE, stdout=subprocess.PIPE
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline() == b"open\n"
        holder.kill()  # kill -9: nothing of it runs again
    finally:
        holder.communicate(timeout=HANG)
    assert {p.name for p in history.iterdir()} == {".workbench.lock"}  # left behind, locked by no one
    assert (history / ".workbench.lock").read_text().strip() == str(holder.pid)
    result = workbench(tmp_path, "remembered", str(EXAMPLES))  # stale: taken over, not refused
    assert result.returncode == 0, result.stderr
    assert list(history.iterdir()) == []


def test_a_lock_let_go_in_a_folder_of_yours_is_deleted_and_a_deleted_one_is_not_held(tmp_path):
    from workbench.files import InUse, OthersFolderLock

    folder = tmp_path / "history"
    first = OthersFolderLock(folder, ".workbench.lock", "the history")
    with pytest.raises(InUse):
        OthersFolderLock(folder, ".workbench.lock", "the history")
    first.release()
    assert list(folder.iterdir()) == []
    again = OthersFolderLock(folder, ".workbench.lock", "the history")  # a new file, locked
    with pytest.raises(InUse):
        OthersFolderLock(folder, ".workbench.lock", "the history")
    again.release()
    assert list(folder.iterdir()) == []


HOLDS = """
import sys
from workbench.cli.configs import model_config
from workbench.cli.parser import parse
from workbench.cli.start import load_agents, session_start
args = parse(sys.argv[1:])
start = session_start(args, model_config(args), load_agents(args))
print("open", flush=True)
sys.stdin.read()
"""


def test_a_read_only_history_folder_is_refused_and_left_as_it_is(tmp_path):
    history = tmp_path / "agents" / "triage-history"
    history.mkdir(parents=True)
    history.chmod(0o500)
    line = refused_as("remembered", workbench(tmp_path, "remembered", str(EXAMPLES)))
    assert line.endswith(
        f"your agents' memory could not be opened: {history} is read-only (mode 0500) and workbench writes "
        "there; it was left as it is: make it writable (chmod u+rwx) or choose another folder"
    )
    assert history.stat().st_mode & 0o777 == 0o500 and list(history.iterdir()) == []


def test_the_files_the_agents_memories_write_are_the_users_only_whatever_the_umask(tmp_path):
    history = tmp_path / "agents" / "triage-history"
    history.mkdir(parents=True, mode=0o755)
    earlier = history / "earlier.jsonl"  # a session another program wrote with the usual umask
    earlier.write_text("")
    earlier.chmod(0o644)
    run = subprocess.run(
        [sys.executable, "-c", TURNS, str(EXAMPLES)],
        env=_env(tmp_path),
        capture_output=True,
        text=True,
        timeout=HANG,
        check=False,
    )
    assert run.returncode == 0, run.stderr
    modes = {str(p.relative_to(tmp_path)): p.stat().st_mode & 0o777 for p in (tmp_path / "agents").rglob("*")}
    assert any(name.endswith(".md") for name in modes) and len([n for n in modes if n.endswith(".jsonl")]) == 2
    assert {name: mode for name, mode in modes.items() if mode not in (0o600, 0o700)} == {}


KINDS = """
import os
from pathlib import Path
from typing import Any
from agent_framework import (
    Agent, FileHistoryProvider, FileMemoryProvider, FileSystemAgentFileStore, MemoryContextProvider, MemoryFileStore,
)
from workbench import ScriptedChatClient

DATA = Path(os.environ["EXAMPLE_AGENTS_DATA"])


class Owned(MemoryContextProvider):
    async def before_run(self, *, agent: Any, session: Any, context: Any, state: Any) -> None:
        session.state["owner"] = "ana"
        await super().before_run(agent=agent, session=session, context=context, state=state)


shared = DATA / "shared"  # a history and per-session memory files in one folder: one lock
agents = [
    Agent(ScriptedChatClient(uses_tools=True), "You keep notes.", name="desk", context_providers=[
        FileHistoryProvider(shared), FileMemoryProvider(FileSystemAgentFileStore(shared))]),
    Agent(ScriptedChatClient(), "You coach.", name="coach", context_providers=[
        Owned(store=MemoryFileStore(DATA / "extracted", owner_state_key="owner"))]),
]
"""
EVERYTHING = """
import asyncio, sys
from workbench.cli.configs import model_config
from workbench.cli.parser import parse
from workbench.cli.start import load_agents, session_start
args = parse(sys.argv[1:])
start = session_start(args, model_config(args), load_agents(args))
runtime = start().runtime
async def story():
    for agent in ("desk", "coach"):
        assert (await runtime.ask(agent, "customer=Contoso; module=Billing")).ok
    listed = [item.name for system in (await runtime.remembered()).systems for item in system.items]
    print("listed", sorted(name for name in listed if "lock" in name), flush=True)
    report = await runtime.forget(None)
    assert not report.failures, report.failures
asyncio.run(story())
print("open", flush=True)
sys.stdin.read()
"""


def test_each_kind_of_folder_is_locked_once_the_lock_is_no_memory_and_outlives_a_forget_of_everything(tmp_path):
    (tmp_path / "kinds.py").write_text(KINDS)
    forgetting = subprocess.Popen(
        [sys.executable, "-c", EVERYTHING, str(tmp_path)],
        env=_env(tmp_path),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert forgetting.stdout is not None
        assert forgetting.stdout.readline() == "listed []\n", forgetting.communicate()[1]  # F3 lists no lock
        assert forgetting.stdout.readline() == "open\n", forgetting.communicate()[1]
        data = tmp_path / "agents"
        locks = sorted(str(p.relative_to(data)) for p in data.rglob(".workbench.lock"))
        assert locks == ["extracted/.workbench.lock", "shared/.workbench.lock"]  # still there after the forget
        line = refused_as("remembered", workbench(tmp_path, "remembered", str(tmp_path)))
        assert f"another workbench (PID {forgetting.pid}) is using {data / 'extracted'}" in line
    finally:
        forgetting.communicate(timeout=HANG)


def test_the_first_forget_over_your_agents_records_itself_in_a_data_directory_it_makes(tmp_path):
    """Your agents alone (no --persist, no --recall) make no data directory before the first forget,
    whose record (the journal that makes it complete after a crash) goes there."""
    result = workbench(tmp_path, "forget", "customer", str(EXAMPLES), "--yes")
    assert result.returncode == 0 and "forget record" not in result.stdout, result.stdout + result.stderr
    assert (tmp_path / "data").stat().st_mode & 0o777 == 0o700 and list((tmp_path / "data").iterdir()) == []


def test_the_drift_lab_copies_your_agents_folders_and_leaves_them_as_they_were(tmp_path):
    """The lab runs your agents' memories on copies of their folders (`workbench.drift.copies`): it is
    refused while another workbench uses them, as a start is, and otherwise reads them and writes,
    locks and changes nothing there."""
    yours = "yours:notes,yours:notes+facts,yours:triage,yours:triage+facts"
    drift = ("drift", str(EXAMPLES), "--turns", "10", "--json", "--policies", yours)
    with holding(tmp_path, str(EXAMPLES), env=_env(tmp_path)) as pid:
        held = workbench(tmp_path, *drift)
    assert (held.returncode, held.stdout) == (1, ""), held.stderr
    assert held.stderr.splitlines()[-1].startswith(
        f"workbench drift: your agents' memory could not be opened: another workbench (PID {pid}) is using "
    )

    def folders() -> dict[str, tuple[int, bytes]]:
        found = sorted((tmp_path / "agents").rglob("*"))
        return {str(p.relative_to(tmp_path)): (p.stat().st_mode, p.read_bytes() if p.is_file() else b"") for p in found}

    before = folders()
    ran = workbench(tmp_path, *drift)
    assert ran.returncode == 0, ran.stderr
    assert folders() == before


def test_the_lock_on_a_folder_others_write_tightens_the_umask_until_it_is_released(tmp_path):
    from workbench.files import InUse, OthersFolderLock

    folder = tmp_path / "history"
    folder.mkdir(mode=0o755)
    (folder / "earlier.jsonl").write_text("")
    (folder / "earlier.jsonl").chmod(0o644)
    before = os.umask(0o022)
    try:
        lock = OthersFolderLock(folder, ".workbench.lock", "the history")
        assert os.umask(0o077) == 0o077  # held: what the framework creates now is user-only
        with pytest.raises(InUse, match=f"another workbench \\(PID {os.getpid()}\\) is using the history"):
            OthersFolderLock(folder, ".workbench.lock", "the history")
        assert os.umask(0o077) == 0o077  # the refused one left the umask as it was
        lock.release()
        assert os.umask(0o022) == 0o022  # released: the umask is the process's own again
        modes = {p.name: p.stat().st_mode & 0o777 for p in (folder, *folder.iterdir())}
        assert modes == {"history": 0o700, "earlier.jsonl": 0o600}  # the lock's file went with it
    finally:
        os.umask(before)


def test_a_history_file_you_made_read_only_is_left_as_it_is_and_the_forget_says_so(tmp_path):
    """A rename would replace it whatever its mode: the forget refuses it, as a write in place would be."""
    from agent_framework import Message

    history = tmp_path / "agents" / "triage-history"
    history.mkdir(parents=True)
    session = history / "earlier.jsonl"
    said = ("customer=Contoso", "module=Billing")
    session.write_text("".join(json.dumps(Message(role="user", contents=[t]).to_dict()) + "\n" for t in said))
    session.chmod(0o400)
    before = session.read_bytes()
    result = workbench(tmp_path, "forget", "customer", str(EXAMPLES), "--yes", as_user=True)
    assert result.returncode == 3, result.stdout + result.stderr
    assert "triage: FileHistoryProvider: NOT reached: PermissionError" in result.stdout
    assert (session.stat().st_mode & 0o777, session.read_bytes()) == (0o400, before)
