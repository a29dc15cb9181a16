"""A quit never loses what was admitted in silence: with a save failing (SQLite's own full-disk error,
made by capping the state file's pages; tests/session/test_unsaved.py fills a real tmpfs), Ctrl+Q,
SIGTERM and SIGHUP try once more, then ask (or, with the window gone, go) and leave one line for the
command to print, with a non-zero exit; a save that succeeds clears "NOT saving" from the header at once."""

import asyncio
import json
import os
import signal
from pathlib import Path

from tests.ui.helpers import FIXED, TIMEOUT, pushed, reached, say, start_ended
from workbench.persist.sessions import DIRECTORY, PersistedSessions
from workbench.runtime import ModelConfig, build_models
from workbench.session.assemble import assemble
from workbench.ui.app import WorkbenchApp
from workbench.ui.quit_screen import QuitUnsaved
from workbench.ui.quitting import NOT_SAVED_EXIT

SIZE = (140, 40)
FULL = "OperationalError: database or disk is full"


def persisted_app(directory: Path) -> tuple[WorkbenchApp, PersistedSessions]:
    persisted = PersistedSessions(directory, clock=lambda: FIXED, retry_delays=(3600.0,))  # retried by hand here
    return WorkbenchApp(assemble(build_models(ModelConfig()), persisted=persisted)), persisted


def disk_full(persisted: PersistedSessions, full: bool) -> None:
    """The state file's pages capped at what it has (SQLite's SQLITE_FULL, as from ENOSPC), or not."""
    db = persisted.state._db
    with persisted.state._lock:
        (pages,) = db.execute("PRAGMA page_count").fetchone()
        db.execute(f"PRAGMA max_page_count = {pages if full else 1073741823}")


def saved_facts(persisted: PersistedSessions) -> set[str]:
    """The facts the state file holds, read by the next start once this one has ended."""
    persisted.close()
    again = PersistedSessions(persisted.directory)
    try:
        return {f.key for f in again.memory.facts()}
    finally:
        again.close()


async def unsaved_turn(pilot, persisted: PersistedSessions) -> None:
    await start_ended(pilot)
    await say(pilot, "support", "customer=Contoso Ltd 7731")
    disk_full(persisted, True)
    await say(pilot, "support", "version=11.2; environment=prod\n" + "words " * 600)
    assert f"persist: NOT saving: {FULL}" in pilot.app.sub_title


async def test_ctrl_q_with_a_failing_save_asks_and_stay_keeps_the_app_until_the_save_succeeds(tmp_path):
    """Ctrl+Q exited 0 at once, and the restart had lost version and environment."""
    directory = tmp_path / DIRECTORY
    app, persisted = persisted_app(directory)
    async with app.run_test(size=SIZE) as pilot:
        await unsaved_turn(pilot, persisted)
        await pilot.press("ctrl+q")
        question = await pushed(app, QuitUnsaved)
        assert question.unsaved.startswith("the fact(s) environment, version; 2 message(s)")
        assert question.unsaved.endswith(f"(the save failed: {FULL})")
        await pilot.press("escape")  # Stay (focused first)
        await reached(app, "screen_stack", lambda stack: not any(isinstance(s, QuitUnsaved) for s in stack))
        assert app.is_running
        disk_full(persisted, False)  # room again: the quit's one more try saves everything
        await pilot.press("ctrl+q")
    assert app.return_code == 0 and app.not_saved is None
    assert saved_facts(persisted) == {"customer", "version", "environment"}


async def test_quitting_without_saving_exits_non_zero_with_one_line_naming_what_was_not_saved(tmp_path):
    directory = tmp_path / DIRECTORY
    app, persisted = persisted_app(directory)
    async with app.run_test(size=SIZE) as pilot:
        await unsaved_turn(pilot, persisted)
        await pilot.press("ctrl+q")
        await pushed(app, QuitUnsaved)
        await pilot.click("#quit")
    assert app.return_code == NOT_SAVED_EXIT
    assert app.not_saved is not None and "\n" not in app.not_saved
    assert app.not_saved.startswith("the fact(s) environment, version") and "11.2" not in app.not_saved
    assert saved_facts(persisted) == {"customer"}


async def test_export_and_quit_writes_every_message_even_a_conversation_with_no_question(tmp_path, monkeypatch):
    """The palette's export, reused: here the conversation only declares, which the lab cannot score yet."""
    monkeypatch.chdir(tmp_path)
    app, persisted = persisted_app(tmp_path / DIRECTORY)
    async with app.run_test(size=SIZE) as pilot:
        await unsaved_turn(pilot, persisted)
        await pilot.press("ctrl+q")
        await pushed(app, QuitUnsaved)
        await pilot.click("#export")
    assert app.return_code == NOT_SAVED_EXIT and app.not_saved is not None
    exported = tmp_path / "conversation.chronology.json"
    assert app.not_saved.endswith(f"; the conversation was exported to {exported}")
    says = [step["say"] for step in json.loads(exported.read_text())["steps"]]
    assert says[0] == "customer=Contoso Ltd 7731" and says[1].startswith("version=11.2; environment=prod")


async def test_a_save_that_succeeds_clears_not_saving_from_the_header_at_once(tmp_path):
    """The header said "persist: NOT saving" 8 s after two later turns had saved."""
    app, persisted = persisted_app(tmp_path / DIRECTORY)
    async with app.run_test(size=SIZE) as pilot:
        await unsaved_turn(pilot, persisted)
        disk_full(persisted, False)
        await say(pilot, "logs", "and now?")
        assert "NOT saving" not in app.sub_title
        disk_full(persisted, True)
        await say(pilot, "logs", "product=Billing\n" + "words " * 600)
        assert "NOT saving" in app.sub_title
        disk_full(persisted, False)
        persisted._retried()  # the retry's timer, fired: no turn is asked
        await reached(app, "sub_title", lambda title: "NOT saving" not in title)
        await pilot.press("ctrl+q")
    assert app.return_code == 0


def quits_asked(app: WorkbenchApp) -> asyncio.Queue[str | None]:
    """Each quit the app was asked for (a signal's name, or None for Ctrl+Q), once it has been handled."""
    handled: asyncio.Queue[str | None] = asyncio.Queue()
    asked = app.quit_asked

    async def quit_asked(signalled: str | None = None) -> None:
        await asked(signalled)
        handled.put_nowait(signalled)

    app.quit_asked = quit_asked  # type: ignore[method-assign]
    return handled


async def test_sigterm_asks_as_ctrl_q_does_and_a_second_one_goes(tmp_path):
    """SIGTERM ended the process at once, nothing tried: the terminal left raw, the turn unsaved."""
    app, persisted = persisted_app(tmp_path / DIRECTORY)
    handled = quits_asked(app)
    async with app.run_test(size=SIZE) as pilot:
        await unsaved_turn(pilot, persisted)
        assert set(app.quitting.signals) == {signal.SIGTERM, signal.SIGHUP}  # else the kill below ends the test process
        os.kill(os.getpid(), signal.SIGTERM)
        assert await asyncio.wait_for(handled.get(), TIMEOUT) == "SIGTERM"
        question = await pushed(app, QuitUnsaved)
        assert question.why.startswith("SIGTERM received")  # the question opens with it (compose reads it)
        os.kill(os.getpid(), signal.SIGTERM)
        assert await asyncio.wait_for(handled.get(), TIMEOUT) == "SIGTERM"
    assert app.return_code == NOT_SAVED_EXIT and app.not_saved is not None
    assert signal.getsignal(signal.SIGTERM) is signal.SIG_DFL
    assert saved_facts(persisted) == {"customer"}


async def test_sighup_the_window_closing_tries_once_more_and_goes_without_asking(tmp_path):
    app, persisted = persisted_app(tmp_path / DIRECTORY)
    handled = quits_asked(app)
    async with app.run_test(size=SIZE) as pilot:
        await unsaved_turn(pilot, persisted)
        assert set(app.quitting.signals) == {signal.SIGTERM, signal.SIGHUP}
        disk_full(persisted, False)
        os.kill(os.getpid(), signal.SIGHUP)
        assert await asyncio.wait_for(handled.get(), TIMEOUT) == "SIGHUP"
    assert app.return_code == 0 and app.not_saved is None
    assert saved_facts(persisted) == {"customer", "version", "environment"}


async def test_sighup_with_the_save_still_failing_goes_with_the_line_and_a_non_zero_exit(tmp_path):
    app, persisted = persisted_app(tmp_path / DIRECTORY)
    handled = quits_asked(app)
    async with app.run_test(size=SIZE) as pilot:
        await unsaved_turn(pilot, persisted)
        os.kill(os.getpid(), signal.SIGHUP)
        assert await asyncio.wait_for(handled.get(), TIMEOUT) == "SIGHUP"
        assert not any(isinstance(s, QuitUnsaved) for s in app.screen_stack)  # nobody is left to answer
    assert app.return_code == NOT_SAVED_EXIT
    assert app.not_saved is not None and app.not_saved.startswith("the fact(s) environment, version")
