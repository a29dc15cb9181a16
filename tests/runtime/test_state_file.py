"""The state file is the whole state: whenever no workbench runs, `state.sqlite` alone holds
everything, and a file that does not hold the workbench's tables (a copy made without its log, a cut
file, another app's database) is refused in one line, before anything is written to it."""

import shutil
import sqlite3
import subprocess
import sys
from contextlib import closing
from pathlib import Path

import pytest

from tests.runtime.helpers import facts
from workbench.files import WORK_SUFFIX
from workbench.persist.format import SavedFileError
from workbench.persist.sessions import DIRECTORY, PersistedSessions
from workbench.persist.state import STATE_FILE
from workbench.runtime import ModelConfig, build_models
from workbench.runtime.agents import AgentRuntime
from workbench.session.assemble import assemble

LOG = f"{STATE_FILE}-wal"
CUSTOMER = ("Contoso Ltd 7731", "customer=Contoso Ltd 7731")


def started(directory: Path) -> AgentRuntime:
    return assemble(build_models(ModelConfig()), persisted=PersistedSessions(directory)).runtime


def quit_(runtime: AgentRuntime) -> None:
    assert isinstance(runtime.histories, PersistedSessions)
    runtime.histories.close()


def snapshot(directory: Path) -> dict[str, bytes]:
    """The state file and its companions, as bytes (the folder's lock is the folder's)."""
    return {p.name: p.read_bytes() for p in sorted(directory.iterdir()) if p.is_file() and p.name != "lock"}


async def written(directory: Path) -> dict[str, tuple[str, str]]:
    runtime = started(directory)
    assert (await runtime.ask("support", "customer=Contoso Ltd 7731")).ok
    assert (await runtime.ask("logs", "version=11.2; environment=prod")).ok
    shown = facts(runtime)
    quit_(runtime)
    return shown


async def test_after_a_quit_a_copy_of_the_state_file_alone_resumes_everything(tmp_path):
    """After a clean quit everything was in state.sqlite-wal, and state.sqlite was a 4 KiB shell: a copy
    of it alone started empty."""
    shown = await written(tmp_path / "a")
    assert (tmp_path / "a" / LOG).stat().st_size == 0 if (tmp_path / "a" / LOG).exists() else True
    (tmp_path / "b").mkdir(mode=0o700)
    shutil.copy2(tmp_path / "a" / STATE_FILE, tmp_path / "b" / STATE_FILE)
    copy = started(tmp_path / "b")
    assert facts(copy) == shown and set(shown) == {"customer", "version", "environment"}
    assert copy.status.persisted is not None and "resumed: 4 message(s), 3 fact(s)" in copy.status.summary


async def test_a_copy_made_while_a_workbench_ran_is_refused_and_one_with_its_log_resumes(tmp_path):
    """Copied alone while the workbench ran (or its log lost after a kill), the file holds what was last
    written into it, not the latest turns: it started as if nothing had been said since. A kill leaves
    the log beside it, and with the log it resumes everything."""
    runtime = started(tmp_path / "a")
    assert (await runtime.ask("support", "customer=Contoso Ltd 7731")).ok
    for name, with_log in (("alone", False), ("with its log", True)):
        (tmp_path / name).mkdir(mode=0o700)
        shutil.copy2(tmp_path / "a" / STATE_FILE, tmp_path / name / STATE_FILE)
        if with_log:  # what a kill -9 leaves: the file and its log
            shutil.copy2(tmp_path / "a" / LOG, tmp_path / name / LOG)
    quit_(runtime)
    before = snapshot(tmp_path / "alone")
    with pytest.raises(SavedFileError) as refused:
        PersistedSessions(tmp_path / "alone")
    assert "was copied while a workbench had it open, or its log state.sqlite-wal was lost" in str(refused.value)
    assert snapshot(tmp_path / "alone") == before
    assert facts(started(tmp_path / "with its log")) == {"customer": CUSTOMER}


async def test_a_workbench_killed_right_after_it_opened_the_file_starts_again(tmp_path):
    """Nothing written since it opened: the log a kill leaves is empty, and the file opens."""
    first = started(tmp_path / "a")
    (tmp_path / "killed").mkdir(mode=0o700)
    shutil.copy2(tmp_path / "a" / STATE_FILE, tmp_path / "killed" / STATE_FILE)
    (tmp_path / "killed" / LOG).write_bytes(b"")
    quit_(first)
    assert facts(started(tmp_path / "killed")) == {}


def shell(directory: Path) -> Path:
    """What a copy of state.sqlite alone was while a workbench ran: the header of a WAL database, no table."""
    directory.mkdir(mode=0o700)
    db = sqlite3.connect(directory / STATE_FILE)
    db.execute("PRAGMA journal_mode=WAL")
    db.close()
    return directory / STATE_FILE


@pytest.mark.parametrize("log", ["none", "damaged", "another database's"])
def test_a_state_file_without_the_tables_is_refused_in_one_line_and_nothing_is_written(tmp_path, log):
    """It opened as new, got the schema, and the workbench started empty, in silence."""
    directory = tmp_path / DIRECTORY
    shell(directory)
    if log == "damaged":
        (directory / LOG).write_bytes(b"not a log " * 500)
    elif log == "another database's":  # its frames hold another database's tables
        other = tmp_path / "other.sqlite"
        db = sqlite3.connect(other)
        db.execute("PRAGMA journal_mode=WAL")
        db.execute("CREATE TABLE t (x)")
        shutil.copy(f"{other}-wal", directory / LOG)
        db.close()
    before = snapshot(directory)
    with pytest.raises(SavedFileError) as refused:
        PersistedSessions(directory)
    line = str(refused.value)
    assert "\n" not in line and STATE_FILE in line and "move it away to start afresh" in line
    expected = "is not a workbench state file (its tables: t)" if log == "another database's" else "no table"
    assert expected in line
    after = snapshot(directory)
    after.pop(f"{STATE_FILE}-shm", None)  # SQLite's index of a log it read: no byte of the file or its log
    assert after == before


def test_another_apps_database_is_refused_without_being_given_the_schema(tmp_path):
    directory = tmp_path / DIRECTORY
    directory.mkdir(mode=0o700)
    db = sqlite3.connect(directory / STATE_FILE)
    db.execute("CREATE TABLE notes (body TEXT)")
    db.commit()
    db.close()
    before = snapshot(directory)
    with pytest.raises(SavedFileError, match=r"is not a workbench state file \(its tables: notes\); move it away"):
        PersistedSessions(directory)
    assert snapshot(directory) == before
    with closing(sqlite3.connect(directory / STATE_FILE)) as db:
        tables = db.execute("SELECT name FROM sqlite_master").fetchall()
    assert tables == [("notes",)]


async def test_a_first_start_killed_while_it_created_the_file_leaves_no_shell_and_starts_new(tmp_path):
    """The schema is committed in a work file, renamed into place once whole: a kill meanwhile leaves
    only the work file (and its journal), which the next start removes."""
    directory = tmp_path / DIRECTORY
    directory.mkdir(mode=0o700)
    work = directory / f"{STATE_FILE}{WORK_SUFFIX}"
    work.write_bytes(b"SQLite format 3\0")
    (directory / f"{work.name}-journal").write_bytes(b"half")
    runtime = started(directory)
    assert (await runtime.ask("support", "module=Reporting")).ok
    quit_(runtime)
    assert sorted(p.name for p in directory.iterdir()) == sorted(["lock", STATE_FILE])
    assert facts(started(directory)) == {"module": ("Reporting", "module=Reporting")}


def test_a_log_without_its_state_file_is_refused(tmp_path):
    directory = tmp_path / DIRECTORY
    directory.mkdir(mode=0o700)
    (directory / LOG).write_bytes(b"\x37\x7f\x06\x82" + bytes(28))
    with pytest.raises(SavedFileError, match=rf"{LOG} is the write-ahead log of a state file that is not beside it"):
        PersistedSessions(directory)
    assert not (directory / STATE_FILE).exists()


def test_workbench_persist_on_a_shell_exits_non_zero_in_one_line_before_any_window(tmp_path):
    data = tmp_path / "data"
    data.mkdir(mode=0o700)
    shell(data / DIRECTORY)
    for command in ([], ["remembered"]):
        done = subprocess.run(
            [sys.executable, "-m", "workbench", "--persist", *command],
            env={"WORKBENCH_DATA_DIR": str(data), "PATH": "/usr/bin:/bin", "TERM": "dumb"},
            capture_output=True,
            text=True,
            timeout=60,
            stdin=subprocess.DEVNULL,
        )
        assert done.returncode == 1, done
        assert done.stdout == "" and len(done.stderr.splitlines()) == 1, done.stderr
        assert "holds no saved state (no table" in done.stderr and "move it away" in done.stderr


async def test_the_app_quit_leaves_everything_in_the_state_file_alone(tmp_path, monkeypatch):
    """The app never closed the state file: SQLite's log kept every saved turn after the quit."""
    from tests.ui.helpers import say, start_ended
    from workbench.cli.configs import model_config
    from workbench.cli.parser import build_parser
    from workbench.cli.start import build_app

    monkeypatch.setenv("WORKBENCH_DATA_DIR", str(tmp_path / "data"))
    args = build_parser().parse_args(["--persist"])
    app = build_app(args, model_config(args))
    async with app.run_test(size=(140, 40)) as pilot:
        await start_ended(pilot)
        await say(pilot, "support", "customer=Contoso Ltd 7731")
        await pilot.press("ctrl+q")
    directory = tmp_path / "data" / DIRECTORY
    assert not (directory / LOG).exists() or (directory / LOG).stat().st_size == 0
    (tmp_path / "copy").mkdir(mode=0o700)
    shutil.copy2(directory / STATE_FILE, tmp_path / "copy" / STATE_FILE)
    assert facts(started(tmp_path / "copy")) == {"customer": ("Contoso Ltd 7731", "customer=Contoso Ltd 7731")}


@pytest.mark.parametrize(("flushed", "synchronous"), [(True, 2), (False, 0)])
def test_commits_are_flushed_to_the_disk_unless_the_folder_is_the_drift_labs(tmp_path, flushed, synchronous):
    """FULL (2): a commit is on disk when it returns; OFF (0) only for a folder nothing opens after a crash."""
    from workbench.persist.state import StateFile

    state = StateFile(tmp_path / STATE_FILE, flushed=flushed)
    try:
        assert state._db.execute("PRAGMA synchronous").fetchone() == (synchronous,)
    finally:
        state.close()
