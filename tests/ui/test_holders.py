"""Every holder of text in the app is registered with the one forget: the list is enumerated here, and
a residue scan of everything the running app holds, after a forget from a pane, proves that no other
holder kept a forgotten value (a new holder of text that is not registered fails it)."""

import secrets

from tests.support.residue import residue
from tests.ui.helpers import answer, make_app, make_recall_app, say
from workbench.ui.composer import Composer

HOLDERS = ("agent sessions", "call log", "transcript", "turns in flight", "input undo")


async def test_the_app_registers_every_holder_of_text_with_the_one_forget():
    app = make_app()
    async with app.run_test(size=(140, 40)):
        assert app.session.runtime.forgetting.holders == HOLDERS
    recall = make_recall_app()
    async with recall.run_test(size=(140, 40)):
        assert sorted(recall.session.runtime.forgetting.holders) == sorted((*HOLDERS, "recall store"))


async def test_a_forget_of_one_key_leaves_no_value_of_it_anywhere_in_the_app_input_undo_included():
    tag = secrets.token_hex(6)
    billing, contoso, typed = f"Billing-{tag}", f"Contoso-{tag}", f"Typed-{tag}"
    app = make_app()
    async with app.run_test(size=(160, 50), notifications=True) as pilot:
        await say(pilot, "support", f"module={billing}; customer={contoso}", typed=True)
        logs = app.pane("logs").prompt
        logs.focus()
        await pilot.press(*f"module={typed}")  # typed, never sent: only the undo history keeps it
        logs.clear()
        assert {billing, typed} <= set(residue([billing, typed], app))
        await say(pilot, "logs", "forget module")
        await answer(pilot, "y")
        assert residue([billing, typed], app) == {}
        assert set(residue([contoso], app)) == {contoso}  # the other fact stays
        assert all(not c.history.undo_stack for c in app.query(Composer))
