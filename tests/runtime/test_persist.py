"""`--persist`: both sessions, the facts, the ledger and the counters survive a restart (a second
runtime on the same directory), the files are private from their first byte, and a forget leaves no
byte of a forgotten value in any file under the directory (a raw scan of every file)."""

import asyncio
import json
import os
import secrets
import sqlite3
import stat
from pathlib import Path

import pytest
from agent_framework import Message

from tests.runtime.helpers import facts
from workbench.cli.configs import model_config
from workbench.cli.parser import build_parser
from workbench.cli.start import build_app
from workbench.files import FolderRefused, InUse
from workbench.persist.format import SavedFileError
from workbench.persist.legacy import MEMORY_FILE
from workbench.persist.sessions import DIRECTORY, PersistedSessions
from workbench.persist.state import STATE_FILE
from workbench.runtime import AGENT_NAMES, Mode, ModelConfig, build_models
from workbench.runtime.agents import AgentRuntime
from workbench.session.assemble import assemble

CORRECTION = "module=Billing; database=SQL Server 2022; version=2"


def started(directory: Path, *, delay: float = 0.0, mode: Mode = Mode.MANUAL) -> AgentRuntime:
    """What `workbench --persist` assembles, on `directory`."""
    persisted = PersistedSessions(directory)
    runtime = assemble(build_models(ModelConfig(), scripted_delay=delay), persisted=persisted, mode=mode).runtime
    return runtime


def quit_(runtime: AgentRuntime) -> None:
    """The workbench exits: its lock on the directory goes with it."""
    assert isinstance(runtime.histories, PersistedSessions)
    runtime.histories.close()


def histories(runtime: AgentRuntime) -> dict[str, list[tuple[str, str, str | None]]]:
    return {name: [(str(m.role), m.text or "", m.message_id) for m in runtime.history(name)] for name in AGENT_NAMES}


def files(directory: Path) -> list[Path]:
    return sorted(p for p in directory.rglob("*") if p.is_file())


def holding(directory: Path, values: list[str]) -> dict[str, list[str]]:
    """The raw scan: every file under `directory`, read as bytes, and the values found in it."""
    found = {
        str(p.relative_to(directory)): [v for v in values if v.encode() in p.read_bytes()] for p in files(directory)
    }
    return {name: hits for name, hits in found.items() if hits}


def tagged(*names: str) -> dict[str, str]:
    tag = secrets.token_hex(5)
    return {name: f"{name.capitalize()}-{tag}" for name in names}


async def converse(runtime: AgentRuntime, v: dict[str, str]) -> None:
    assert (await runtime.ask("support", f"module={v['reporting']}; database={v['postgres']}")).ok
    assert (await runtime.ask("logs", f"customer={v['contoso']}; where are the logs?")).ok
    assert (await runtime.ask("support", f"module={v['billing']}")).ok  # a correction
    assert (await runtime.ask("logs", f"colour={v['teal']}")).ok  # a rejected batch: unknown key
    assert (await runtime.ask("support", "and now?")).ok


@pytest.mark.parametrize("mode", list(Mode), ids=str)
async def test_a_restart_resumes_both_histories_the_facts_the_ledger_and_the_counters(tmp_path, mode):
    directory = tmp_path / DIRECTORY
    first = started(directory, mode=mode)
    assert first.status.persisted is not None and not first.status.persisted.resumed
    await converse(first, tagged("reporting", "postgres", "contoso", "billing", "teal"))
    before, saved = histories(first), first.memory.saved()
    assert len(before["support"]) == 6 and len(before["logs"]) == 4

    quit_(first)
    second = started(directory, mode=mode)
    assert histories(second) == before
    assert second.memory.saved() == saved  # facts with provenance, every ledger event, epoch, counters
    persisted = second.status.persisted
    assert persisted is not None and (persisted.resumed, persisted.messages, persisted.facts) == (True, 10, 3)
    assert "resumed: 10 message(s), 3 fact(s)" in second.status.summary
    assert str(directory) in second.status.explained()

    result = await second.ask("support", "priority=high")
    assert result.ok and result.turn.number == saved.turn + 1  # ticket numbering continues
    assert second.memory.ledger.latest(1)[0].seq == saved.ledger_seq + 1
    assert histories(second)["support"][:6] == before["support"]
    assert histories(second)["support"][6][2] == f"user-{saved.turn + 1}"


async def test_the_resumed_agent_is_sent_its_earlier_history(tmp_path):
    directory = tmp_path / DIRECTORY
    v = tagged("reporting")
    first = started(directory)
    assert (await first.ask("logs", f"module={v['reporting']}")).ok
    quit_(first)
    second = started(directory)
    assert (await second.ask("logs", "which module?")).ok
    request = second.last_turn_calls("logs")[0]
    assert any(v["reporting"] in m.text for m in request.messages[:-1])  # the history, not only the facts block
    assert [m[2] for m in histories(second)["logs"] if m[0] == "user"] == ["user-1", "user-2"]


async def test_a_turn_reads_no_row_back_and_a_restart_reads_what_the_turns_kept(tmp_path, monkeypatch):
    """The history is read from the file once; each turn appends its messages to it, parsed as the file
    stores them, and the sessions are written again only when they changed."""
    from workbench.persist.state import Saved, StateFile

    reads: list[str] = []
    saves: list[object] = []
    read, save = StateFile.messages, StateFile.save

    def counted_read(state: StateFile, session: str) -> list[dict[str, object]]:
        reads.append(session)
        return read(state, session)

    def counted_save(state: StateFile, saved: Saved) -> None:
        saves.append(saved)
        save(state, saved)

    monkeypatch.setattr(StateFile, "messages", counted_read)
    monkeypatch.setattr(StateFile, "save", counted_save)
    directory = tmp_path / DIRECTORY
    first = started(directory)
    await converse(first, tagged("reporting", "postgres", "contoso", "billing", "teal"))
    assert len(set(reads)) == len(reads) == 2  # once per agent's session, at its first turn
    turns = len(saves)
    assert (await first.ask("support", "and then?")).ok
    assert len(saves) == turns + 1  # the turn's messages, with the facts; its end writes nothing more
    before = histories(first)

    quit_(first)
    second = started(directory)
    assert histories(second) == before
    quit_(second)


@pytest.mark.parametrize("key", ["module", None], ids=["one-key", "everything"])
async def test_forget_leaves_no_byte_of_a_forgotten_value_in_any_file(tmp_path, key):
    directory = tmp_path / DIRECTORY
    v = tagged("reporting", "postgres", "contoso", "billing", "teal")
    runtime = started(directory)
    await converse(runtime, v)
    forgotten = [v["reporting"], v["billing"]] if key else list(v.values())
    assert set(forgotten) <= {hit for hits in holding(directory, forgotten).values() for hit in hits}

    report = await runtime.forget(key)
    assert report.failures == {} and "persisted sessions" in report.counts
    assert holding(directory, forgotten) == {}
    kept = holding(directory, [v["postgres"], v["contoso"]])
    if key:  # the other facts stay: in the database, and in its log when memory was written since
        assert kept[STATE_FILE] == [v["postgres"], v["contoso"]] and set(kept) <= {STATE_FILE, f"{STATE_FILE}-wal"}
    else:
        assert kept == {}

    quit_(runtime)
    again = started(directory)  # and a restart brings nothing back
    assert again.memory.facts() == runtime.memory.facts()
    assert histories(again) == {name: [] for name in AGENT_NAMES}
    assert (await again.ask("support", "module=Fresh")).ok
    assert holding(directory, forgotten) == {}


async def test_a_turn_running_across_a_forget_writes_nothing_to_disk(tmp_path):
    directory = tmp_path / DIRECTORY
    secret = tagged("crash")["crash"]
    runtime = started(directory, delay=0.01)
    assert (await runtime.ask("logs", "module=Reporting")).ok
    task = asyncio.create_task(runtime.ask("support", f"symptom={secret}"))
    while not runtime.calls.records(origin="support"):
        await asyncio.sleep(0.005)  # the answer is streaming
    await runtime.forget("symptom")
    await asyncio.wait_for(task, 10)
    assert holding(directory, [secret]) == {}
    assert isinstance(runtime.histories, PersistedSessions)
    assert runtime.histories.state.session_ids() == []  # the new sessions have said nothing yet


async def test_only_the_current_sessions_are_written(tmp_path):
    persisted = PersistedSessions(tmp_path / DIRECTORY)
    runtime = assemble(build_models(ModelConfig()), persisted=persisted).runtime
    replaced = persisted.state.sessions()[1]["support"]["session_id"]
    await runtime.forget()
    await persisted.provider("support").save_messages(replaced, [Message(role="user", contents=["symptom=late"])])
    assert persisted.state.session_ids() == []


async def test_files_and_directories_are_private_while_the_runtime_runs(tmp_path):
    directory = tmp_path / DIRECTORY
    directory.mkdir(mode=0o755)
    directory.chmod(0o755)
    old = os.umask(0o022)  # a typical umask: the framework's own appends would make 0644 files
    try:
        runtime = started(directory)
        await converse(runtime, tagged("reporting", "postgres", "contoso", "billing", "teal"))
        modes = {str(p.relative_to(directory)): stat.S_IMODE(p.stat().st_mode) for p in directory.rglob("*")}
    finally:
        os.umask(old)
    assert stat.S_IMODE(directory.stat().st_mode) == 0o700
    assert {name for name, mode in modes.items() if mode == 0o600} == {
        str(p.relative_to(directory)) for p in files(directory)
    }
    assert sorted(modes) == sorted(["lock", STATE_FILE, f"{STATE_FILE}-wal", f"{STATE_FILE}-shm"])


def test_a_folder_made_read_only_is_refused_and_left_as_it_is(tmp_path):
    """The start used to make a `chmod 500` folder 0700 again, silently, and write into it."""
    directory = tmp_path / DIRECTORY
    quit_(started(directory))
    directory.chmod(0o500)
    try:
        with pytest.raises(FolderRefused, match=r"is read-only \(mode 0500\)"):
            PersistedSessions(directory)
        assert stat.S_IMODE(directory.stat().st_mode) == 0o500
    finally:
        directory.chmod(0o700)
    PersistedSessions(directory).close()  # writable again: it starts


async def test_a_new_session_erases_the_file_of_the_one_it_replaces(tmp_path):
    directory = tmp_path / DIRECTORY
    secret = tagged("reporting")["reporting"]
    runtime = started(directory)
    assert (await runtime.ask("support", f"where are the logs of {secret}?")).ok
    await runtime.set_mode(Mode.PROVIDER)  # both agents start new sessions
    assert holding(directory, [secret]) == {}
    quit_(runtime)
    assert histories(started(directory, mode=Mode.PROVIDER)) == {name: [] for name in AGENT_NAMES}


async def test_sessions_saved_under_another_mode_are_not_resumed_and_are_kept_until_a_start_in_it(tmp_path):
    """As switching the mode in a running app starts new sessions, so does starting in another mode; but
    the sessions saved under the other stay in the file (they were deleted, the header saying only
    "resumed: 0 message(s)"), and a start in their mode resumes them (`tests/session/test_other_shape.py`)."""
    directory = tmp_path / DIRECTORY
    secret = tagged("reporting")["reporting"]
    first = started(directory)
    assert (await first.ask("support", f"module={secret}")).ok
    before = histories(first)
    quit_(first)
    second = started(directory, mode=Mode.PROVIDER)
    assert histories(second) == {name: [] for name in AGENT_NAMES}
    assert facts(second) == {"module": (secret, f"module={secret}")}  # the facts are kept, as on a switch
    assert isinstance(second.histories, PersistedSessions) and len(second.histories.state.session_ids()) == 1
    assert (
        "resumed: 0 message(s), 1 fact(s); kept, not resumed: 2 message(s) saved under manual mode, recall off"
        in second.status.summary
    )
    quit_(second)
    assert histories(started(directory)) == before


# memory.json as version 1 wrote it: the three facts of one message, each quoting the whole message, and
# each fact's own declaration beside the facts.
VERSION_1 = {
    "version": 1,
    "memory": {
        "facts": [
            {"key": k, "value": v, "evidence": CORRECTION, "turn": 1, "recorded_at": "2026-01-02T00:00:00Z"}
            for k, v in [("database", "SQL Server 2022"), ("module", "Billing"), ("version", "2")]
        ],
        "declarations": [
            ["database", "database=SQL Server 2022"],
            ["module", "module=Billing"],
            ["version", "version=2"],
        ],
        "ledger": [],
        "ledger_seq": 0,
        "epoch": 0,
        "turn": 1,
        "last_applied": 1,
    },
}


async def test_a_folder_of_the_version_before_the_database_is_moved_into_it_whole(tmp_path):
    """memory.json (version 1), sessions.json and the framework's history files become rows of the
    database, each fact with its own declaration; the old files are erased."""
    directory = tmp_path / DIRECTORY
    (directory / "history").mkdir(parents=True, mode=0o700)
    (directory / MEMORY_FILE).write_text(json.dumps(VERSION_1))
    message = Message(role="user", contents=[CORRECTION], message_id="user-1").to_dict()
    (directory / "history" / "s-1.jsonl").write_text(json.dumps(message) + "\n" + '{"cut off')
    sessions = {"version": 1, "shape": "manual mode, recall off", "sessions": {"support": {"session_id": "s-1"}}}
    (directory / "sessions.json").write_text(json.dumps(sessions))
    runtime = started(directory)
    assert [(f.key, f.declaration) for f in runtime.memory.facts()] == [
        ("database", "database=SQL Server 2022"),
        ("module", "module=Billing"),
        ("version", "version=2"),
    ]
    assert [m[1] for m in histories(runtime)["support"]] == [CORRECTION]  # the line a crash cut off is left out
    assert sorted(p.name for p in directory.iterdir()) == sorted(
        ["lock", STATE_FILE, f"{STATE_FILE}-wal", f"{STATE_FILE}-shm"]
    )
    await runtime.forget("version")
    assert [f.evidence for f in runtime.memory.facts()] == ["database=SQL Server 2022", "module=Billing"]
    assert holding(directory, ["version=2"]) == {} and holding(directory, ["SQL Server 2022"])


async def test_a_move_killed_before_the_old_history_folder_went_removes_it_next_time(tmp_path):
    directory = tmp_path / DIRECTORY
    quit_(started(directory))
    (directory / "history").mkdir(mode=0o700)  # every file in it was erased; the folder was not
    quit_(started(directory))
    assert not (directory / "history").exists()


@pytest.mark.parametrize("row", ['{"foo": 1}', '{"type": "message", "role": 5, "contents": 7}'])
async def test_a_hand_edited_message_row_stops_start_up_with_the_files_name(tmp_path, row):
    """A row that is JSON but not a message stopped start-up with a bare TypeError, naming nothing."""
    directory = tmp_path / DIRECTORY
    first = started(directory)
    assert (await first.ask("support", "module=Reporting")).ok
    quit_(first)
    edited = sqlite3.connect(directory / STATE_FILE)
    edited.execute("UPDATE messages SET message = ? WHERE seq = 1", (row,))
    edited.commit()
    edited.close()
    with pytest.raises(SavedFileError, match=rf"{STATE_FILE}: a message of session .* is not a saved message"):
        started(directory)


async def test_a_full_disk_is_said_at_once_and_nothing_shown_as_saved_is_lost(tmp_path):
    """SQLite's own full-disk error (SQLITE_FULL, as from ENOSPC), made by capping the file's pages. A
    turn's messages that did not fit were lost while the turn said it was saved: the sessions, saved
    right after, fitted and cleared the failure; and SQLite's ended transaction made the reason "cannot
    rollback". Now the turn says it was not saved and why, the status says so, the ledger notes it
    once, the messages stay in the history and the next save with room writes them."""
    directory = tmp_path / DIRECTORY
    runtime = started(directory)
    persisted = runtime.histories
    assert isinstance(persisted, PersistedSessions)
    assert (await runtime.ask("support", "module=Reporting")).unsaved is None
    db = persisted.state._db  # the state file's own connection: the cap holds for it alone
    (pages,) = db.execute("PRAGMA page_count").fetchone()
    db.execute(f"PRAGMA max_page_count = {pages}")

    full = [await runtime.ask("support", f"database=D{i}; " + "words " * 600) for i in range(3)]

    assert [(r.ok, r.unsaved) for r in full] == [(True, "OperationalError: database or disk is full")] * 3
    assert runtime.status.persisted is not None
    assert runtime.status.persisted.failure == "OperationalError: database or disk is full"
    assert [e.origin for e in runtime.memory.ledger.latest()].count("persist") == 1
    assert len(runtime.history("support")) == 8  # the turns the disk could not take are still there
    db.execute("PRAGMA max_page_count = 1073741823")  # room again
    after = await runtime.ask("logs", "customer=Contoso")
    assert after.unsaved is None and runtime.status.persisted.failure is None
    shown, before = facts(runtime), histories(runtime)
    quit_(runtime)
    restarted = started(directory)
    assert facts(restarted) == shown and set(shown) == {"module", "database", "customer"}
    assert histories(restarted) == before


async def test_a_damaged_database_stops_start_up_with_its_name_and_is_left_as_it_is(tmp_path):
    directory = tmp_path / DIRECTORY
    first = started(directory)
    await first.ask("support", "module=Reporting")
    quit_(first)
    broken = directory / STATE_FILE
    broken.write_bytes(b"\0" * 4096)
    with pytest.raises(SavedFileError, match=STATE_FILE):
        started(directory)
    assert broken.read_bytes() == b"\0" * 4096
    with pytest.raises(SavedFileError):  # not InUse: the failed start let the directory go
        started(directory)


async def test_without_persist_nothing_is_written_and_with_it_the_data_directory_is_used(tmp_path, monkeypatch):
    monkeypatch.setenv("WORKBENCH_DATA_DIR", str(tmp_path / "data"))
    for options in ([], ["--persist"]):
        args = build_parser().parse_args(options)
        start = build_app(args, model_config(args))._start
        assert start is not None
        runtime = start().runtime
        assert (await runtime.ask("support", "module=Reporting")).ok
        assert ("persisted sessions" in runtime.forgetting.holders) == bool(options)
        written = files(tmp_path / "data") if (tmp_path / "data").exists() else []
        assert [p.relative_to(tmp_path / "data").parts[0] for p in written] == ([DIRECTORY] * 4 if options else [])
        if options:
            quit_(runtime)


async def test_a_second_workbench_on_the_same_directory_is_refused_while_the_first_runs(tmp_path):
    first = started(tmp_path / DIRECTORY)
    with pytest.raises(InUse, match=rf"another workbench \(PID {os.getpid()}\) is using the persisted sessions in"):
        started(tmp_path / DIRECTORY)
    quit_(first)
    assert started(tmp_path / DIRECTORY).status.persisted is not None


def test_a_failing_save_comes_first_in_the_header_even_a_narrow_one():
    from workbench.runtime.view import Persisted, RuntimeStatus

    status = RuntimeStatus("scripted", Mode.MANUAL, "host parse", recall="DuckDB, lexical", memories=("files: a",))
    failing = RuntimeStatus(**{**vars(status), "persisted": Persisted("~/x", failure="OSError: No space left")})
    assert failing.ranked[0] == "persist: NOT saving: OSError: No space left"
    assert failing.summary.startswith("persist: NOT saving")
    saving = RuntimeStatus(**{**vars(status), "persisted": Persisted("~/x")})
    assert saving.ranked[-1] == "persist: on, nothing to resume"
