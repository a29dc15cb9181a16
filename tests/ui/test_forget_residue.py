"""After a forget in the app, no string the app holds (runtime, widgets, screens, notifications)
contains a forgotten value: proved by searching every string reachable from the app."""

import secrets

import pytest

from tests.support.residue import residue
from tests.ui.helpers import answer, make_app, say
from workbench.runtime import Mode


@pytest.mark.parametrize("mode", [Mode.MANUAL, Mode.PROVIDER])
async def test_forget_all_in_the_app_leaves_no_residue(mode):
    tag = secrets.token_hex(6)
    reporting, billing, postgres, contoso = (
        f"{name}-{tag}" for name in ("Reporting", "Billing", "Postgres", "Contoso")
    )
    app = make_app(mode)
    async with app.run_test(size=(160, 50), notifications=True) as pilot:
        await say(pilot, "support", f"module={reporting}; database={postgres}")
        await say(pilot, "logs", f"customer={contoso}", typed=True)
        await say(pilot, "support", f"module={billing}; where are the logs?")
        await say(pilot, "logs", "mem")  # a notice that lists every fact
        await pilot.press("f2")  # what the model saw
        await pilot.pause()
        await pilot.press("escape")
        app.query_one("#fact-table").focus()
        await pilot.press("enter")  # asks to forget the first fact, naming its value
        await pilot.pause()
        await pilot.press("n")  # keep it
        await pilot.pause()
        values = [reporting, billing, postgres, contoso]
        assert set(residue(values, app)) == set(values)  # the search sees them before the forget
        await say(pilot, "support", "forget", typed=True)
        await answer(pilot, "y")
        assert residue(values, app) == {}
        assert not app.session.state().memory.facts


async def test_forget_one_fact_in_the_app_keeps_the_others():
    tag = secrets.token_hex(6)
    reporting, billing, postgres = (f"{name}-{tag}" for name in ("Reporting", "Billing", "Postgres"))
    app = make_app()
    async with app.run_test(size=(160, 50), notifications=True) as pilot:
        await say(pilot, "support", f"module={reporting}; database={postgres}")
        await say(pilot, "logs", f"module={billing}")
        await say(pilot, "logs", "forget module")
        await answer(pilot, "y")
        found = residue([reporting, billing, postgres], app)
        assert set(found) == {postgres}
