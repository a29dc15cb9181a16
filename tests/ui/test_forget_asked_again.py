"""The question shows one plan and the answer Forget applies it: when a turn changed memory while the
question was up, nothing is forgotten, the user is told, and the question is asked again as it is now."""

from tests.ui.helpers import answer, drawn, make_app, say
from workbench.ui.confirm import ConfirmForget
from workbench.ui.facts import FactTable


async def test_a_fact_replaced_while_the_question_is_up_forgets_nothing_and_asks_again():
    app = make_app()
    async with app.run_test(size=(140, 40), notifications=True) as pilot:
        await say(pilot, "support", "customer=Contoso; module=Billing")
        app.query_one(FactTable).focus()
        await pilot.press("enter")
        first = await drawn(pilot)
        assert (await app.session.ask("logs", "customer=Fabrikam")).result.ok  # a turn replaced it meanwhile
        await answer(pilot, "y")
        said = [n.message for n in app._notifications]
        assert "memory changed since the forget of customer was asked: nothing was forgotten; asked again." in said
        assert {f.key: f.value for f in app.session.state().memory.facts} == {
            "customer": "Fabrikam",
            "module": "Billing",
        }
        again = await drawn(pilot)
        assert again is not first and isinstance(app.screen, ConfirmForget)
        await answer(pilot, "y")
        assert [f.key for f in app.session.state().memory.facts] == ["module"]
