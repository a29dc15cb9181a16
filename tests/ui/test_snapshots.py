"""Snapshots of the screens a person sees, on the built-in model with a fixed clock.
SVGs live under snapshots/test_snapshots/; update with --snapshot-update after looking at them."""

import pytest

from tests.ui.helpers import answer, make_app, say
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
