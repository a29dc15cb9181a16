"""Snapshots of the screens a person sees, on the built-in model with a fixed clock.
SVGs live under snapshots/test_snapshots/; update with --snapshot-update after looking at them."""

import asyncio
import os
import time

import pytest

from tests.ui.helpers import FIXED, answer, make_app, make_persisted_app, release, say
from workbench.persist.state import STATE_FILE
from workbench.session.assemble import assemble
from workbench.ui.facts import FactTable

WIDE = (140, 40)
SEED = "module=Reporting; database=PostgreSQL"
CORRECTION = "module=Billing; database=SQL Server 2022"


def test_first_screen(snap_compare):
    assert snap_compare(make_app(), terminal_size=WIDE)


def test_after_the_correction_replaced_keys_are_highlighted(snap_compare):
    async def run(pilot):
        await say(pilot, "support", SEED)
        await say(pilot, "support", CORRECTION)

    assert snap_compare(make_app(), terminal_size=WIDE, run_before=run)


def test_after_an_eviction(snap_compare):
    async def run(pilot):
        await say(pilot, "support", "constraint=no downtime during business hours; " + SEED)
        await say(pilot, "logs", "customer=Contoso; version=12.4")
        await say(pilot, "logs", "environment=production")

    assert snap_compare(make_app(), terminal_size=WIDE, run_before=run)


def test_after_a_rejected_batch(snap_compare):
    async def run(pilot):
        await say(pilot, "support", SEED)
        await say(pilot, "support", "module=Billing; password=hunter2; m\u043edule=Billing")

    assert snap_compare(make_app(), terminal_size=WIDE, run_before=run)


def test_forget_confirmation(snap_compare):
    async def run(pilot):
        await say(pilot, "support", CORRECTION)
        await pilot.click(FactTable, offset=(3, 2))
        await pilot.pause()

    assert snap_compare(make_app(), terminal_size=WIDE, run_before=run)


def test_after_forget_all(snap_compare):
    async def run(pilot):
        await say(pilot, "support", CORRECTION)
        await say(pilot, "logs", "Where can I find logs?")
        await pilot.press("f8")
        await answer(pilot, "y")

    assert snap_compare(make_app(), terminal_size=WIDE, run_before=run)


def test_what_the_model_saw(snap_compare):
    async def run(pilot):
        await say(pilot, "support", SEED)
        await say(pilot, "support", CORRECTION)
        await pilot.press("f2")
        await pilot.pause()

    assert snap_compare(make_app(), terminal_size=WIDE, run_before=run)


SMALL = {"80x24": (80, 24), "60x20": (60, 20)}


@pytest.mark.parametrize("size", SMALL)
def test_main_screen_small(snap_compare, size):
    async def run(pilot):
        await say(pilot, "support", SEED)
        await say(pilot, "logs", "Where can I find logs?")

    assert snap_compare(make_app(), terminal_size=SMALL[size], run_before=run)


@pytest.mark.parametrize("size", SMALL)
def test_after_the_correction_small(snap_compare, size):
    """The new value of a correction is shown whole in a narrow fact panel; the change box names the old."""

    async def run(pilot):
        await say(pilot, "support", SEED)
        await say(pilot, "support", CORRECTION)

    assert snap_compare(make_app(), terminal_size=SMALL[size], run_before=run)


@pytest.mark.parametrize("size", SMALL)
def test_confirmation_small(snap_compare, size):
    async def run(pilot):
        await say(pilot, "support", CORRECTION)
        pilot.app.query_one(FactTable).focus()
        await pilot.press("delete")
        await pilot.pause()

    assert snap_compare(make_app(), terminal_size=SMALL[size], run_before=run)


@pytest.mark.parametrize("size", ["160x45", *SMALL])
def test_drift_screen(snap_compare, size):
    """The report with the per-turn request-size chart above it."""
    sizes = {"160x45": (160, 45), **SMALL}

    async def run(pilot):
        await pilot.press("f5")
        await pilot.app.workers.wait_for_complete()
        await pilot.pause()

    assert snap_compare(make_app(), terminal_size=sizes[size], run_before=run)


def test_what_the_model_saw_with_recalled_messages(snap_compare):
    from tests.ui.helpers import make_recall_app

    async def run(pilot):
        await say(pilot, "support", SEED)
        await say(pilot, "logs", "Which database holds the logs?")
        await pilot.press("f2")
        await pilot.pause()

    assert snap_compare(make_recall_app(), terminal_size=WIDE, run_before=run)


def test_what_the_model_saw_80x24(snap_compare):
    async def run(pilot):
        await say(pilot, "support", SEED)
        await say(pilot, "support", CORRECTION)
        await say(pilot, "support", "Where do I start?")
        await pilot.press("f2")
        await pilot.pause()

    assert snap_compare(make_app(), terminal_size=(80, 24), run_before=run)


@pytest.fixture
def utc(monkeypatch):
    """Local time is UTC for the test (a resumed session's saved time is shown in local time)."""
    monkeypatch.setenv("TZ", "UTC")
    time.tzset()
    yield
    monkeypatch.undo()
    time.tzset()


def test_resumed_after_a_restart(snap_compare, tmp_path, monkeypatch, utc):
    """A second `workbench --persist`: each pane shows what its agent resumed, between two dividers."""
    from workbench.persist.sessions import PersistedSessions
    from workbench.runtime import ModelConfig, build_models

    monkeypatch.setenv("HOME", str(tmp_path))  # the divider writes the home directory as ~
    directory = tmp_path / "data" / "sessions"

    async def first_run() -> None:
        persisted = PersistedSessions(directory, clock=lambda: FIXED)
        runtime = assemble(build_models(ModelConfig()), persisted=persisted).runtime
        for agent, text in (("support", SEED), ("logs", "Where can I find logs?"), ("support", CORRECTION)):
            assert (await runtime.ask(agent, text)).ok
        persisted.close()

    asyncio.run(first_run())
    os.utime(directory / STATE_FILE, (FIXED.timestamp(), FIXED.timestamp()))
    app = make_persisted_app(directory)
    assert snap_compare(app, terminal_size=WIDE)
    release(app)


@pytest.mark.parametrize("size", ["140x40", "80x24"])
def test_your_agents_panes(snap_compare, size):
    """Four of the user's agents: a pane each, titled with its name; three side by side at 140 columns,
    two at 80, and F4 in the footer brings the others."""
    from tests.ui.test_agent_panes import NAMES, session_of
    from workbench.ui.app import WorkbenchApp

    async def run(pilot):
        await say(pilot, "planner", SEED)

    sizes = {"140x40": WIDE, "80x24": (80, 24)}
    assert snap_compare(WorkbenchApp(session_of(*NAMES)), terminal_size=sizes[size], run_before=run)
