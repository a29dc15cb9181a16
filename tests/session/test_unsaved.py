"""No quit loses what was admitted: on a real full file system (a 2 MiB tmpfs), a save that fails is
retried until it succeeds, the success clears the failure at once, and the session's end tries once
more and says in one line what is still not on disk (`SessionController.unsaved`), through the
session `workbench --persist` starts, without Textual."""

import errno
import os
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.runtime.helpers import facts
from workbench.cli.configs import model_config
from workbench.cli.parser import build_parser
from workbench.cli.start import session_start
from workbench.memory import EventKind
from workbench.memory.outcome import Outcome
from workbench.persist.sessions import DIRECTORY, PersistedSessions
from workbench.runtime import ModelConfig, build_models
from workbench.runtime.view import NOT_SAVED, SAVED_AGAIN
from workbench.session.assemble import assemble
from workbench.session.controller import SessionController

FULL = "OperationalError: database or disk is full"
CUSTOMER = ("Contoso Ltd 7731", "customer=Contoso Ltd 7731")


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    """A 2 MiB tmpfs, mounted for the test: a file system that really fills (ENOSPC from the kernel)."""
    if os.geteuid() != 0:
        pytest.skip("mounting a small tmpfs needs root; the full-disk path is also tested by capping SQLite's pages")
    disk = tmp_path / "disk"
    disk.mkdir()
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=2m", "tmpfs", str(disk)], capture_output=True)
    if mounted.returncode != 0:
        pytest.skip(f"this machine cannot mount a tmpfs: {mounted.stderr.decode().strip()}")
    try:
        yield disk
    finally:
        subprocess.run(["umount", "-l", str(disk)], check=False)


def fill(disk: Path) -> Path:
    """Write zeros until the kernel says the disk is full (`dd if=/dev/zero of=D/fill`)."""
    filler = disk / "fill"
    descriptor = os.open(filler, os.O_WRONLY | os.O_CREAT, 0o600)
    try:
        while True:
            os.write(descriptor, bytes(1 << 12))
    except OSError as exc:
        assert exc.errno == errno.ENOSPC
    finally:
        os.close(descriptor)
    return filler


def started(monkeypatch: pytest.MonkeyPatch, data: Path) -> SessionController:
    """The session `WORKBENCH_DATA_DIR=data workbench --persist` starts (its one start path)."""
    monkeypatch.setenv("WORKBENCH_DATA_DIR", str(data))
    args = build_parser().parse_args(["--persist"])
    return session_start(args, model_config(args))()


async def test_a_quit_after_room_came_back_saves_what_the_full_disk_refused(small_disk, monkeypatch):
    """The repro: a declaration refused by the full disk ("NOT saved ... kept in this run"), the space
    freed, then a quit: it exited 0 in silence and the restart had lost version and environment."""
    data = small_disk / "d"
    session = started(monkeypatch, data)
    assert (await session.ask("support", CUSTOMER[1])).result.unsaved is None
    filler = fill(small_disk)
    declared = await session.ask("support", "version=11.2; environment=prod")
    assert declared.result.ok and declared.result.unsaved == FULL
    assert (kept := session.state().status.persisted) is not None and kept.failure == FULL

    still = session.unsaved()  # the quit's one more try, on a disk still full
    assert still is not None and still.startswith("the fact(s) environment, version; 2 message(s)")
    assert still.endswith(f"(the save failed: {FULL})") and "11.2" not in still and "prod" not in still

    filler.unlink()  # room again; the quit tries once more
    assert session.unsaved() is None
    assert (kept := session.state().status.persisted) is not None and kept.failure is None
    session.close()

    restarted = started(monkeypatch, data)
    try:
        assert facts(restarted.runtime) == {
            "customer": CUSTOMER,
            "version": ("11.2", "version=11.2"),
            "environment": ("prod", "environment=prod"),
        }
        assert "resumed: 4 message(s), 3 fact(s)" in restarted.state().status.summary
    finally:
        restarted.close()


async def test_a_failing_save_is_retried_and_its_success_clears_the_failure_at_once(small_disk):
    """The header said "persist: NOT saving" long after later saves had succeeded: nothing told it.
    Now the retry after the disk has room again saves everything, with no turn asked, and says so in
    the ledger (a note every surface draws at once)."""
    directory = small_disk / DIRECTORY
    persisted = PersistedSessions(directory, retry_delays=(0.05,))
    session = assemble(build_models(ModelConfig()), persisted=persisted)
    saved_again = threading.Event()

    def noted(outcome: Outcome) -> None:
        if any(e.kind is EventKind.NOTE and e.origin == SAVED_AGAIN for e in outcome.events):
            saved_again.set()

    persisted.memory.subscribe(noted)
    assert (await session.ask("support", CUSTOMER[1])).result.unsaved is None
    filler = fill(small_disk)
    assert (await session.ask("logs", "version=11.2; environment=prod")).result.unsaved == FULL
    assert not saved_again.is_set()
    filler.unlink()
    assert saved_again.wait(timeout=30), "the retry saved nothing once the disk had room"
    assert (kept := session.state().status.persisted) is not None and kept.failure is None
    origins = [e.origin for e in persisted.memory.ledger.latest() if e.kind is EventKind.NOTE]
    assert origins == [NOT_SAVED, SAVED_AGAIN]
    assert session.unsaved() is None
    session.close()
    persisted.close()

    again = PersistedSessions(directory)
    try:
        assert {f.key for f in again.memory.facts()} == {"customer", "version", "environment"}
    finally:
        again.close()


async def test_a_session_that_saved_everything_has_nothing_unsaved(tmp_path):
    persisted = PersistedSessions(tmp_path / DIRECTORY)
    session = assemble(build_models(ModelConfig()), persisted=persisted)
    assert (await session.ask("support", CUSTOMER[1])).result.unsaved is None
    assert session.unsaved() is None
    assert assemble(build_models(ModelConfig())).unsaved() is None  # nothing kept on disk
    persisted.close()


async def test_a_quit_without_saving_on_a_full_disk_leaves_what_was_saved_to_resume(small_disk, monkeypatch):
    """Quit without saving while the disk is still full: the state file could not be marked closed, yet
    SQLite wrote its log into it and removed the log as it closed, and the next start refused the file
    as a copy taken while a workbench ran ("put its log back"): the only way out was to move it away,
    and with it the facts that had been saved."""
    data = small_disk / "d"
    session = started(monkeypatch, data)
    assert (await session.ask("support", CUSTOMER[1])).result.unsaved is None
    filler = fill(small_disk)
    assert (await session.ask("support", "version=11.2")).result.unsaved == FULL
    assert session.unsaved() is not None  # the one more try fails: the user quits without it
    session.close()
    filler.unlink()

    restarted = started(monkeypatch, data)
    try:
        assert facts(restarted.runtime) == {"customer": CUSTOMER}
    finally:
        restarted.close()
