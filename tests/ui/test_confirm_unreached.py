"""The forget question names a memory the forget cannot reach before it is answered (a provider the
workbench does not know, on a user's agent), and does not count it among those it empties."""

from tests.ui.helpers import answer, say
from tests.ui.test_confirmation import consequence, drawn, keys
from workbench.agentmem.recognise import Unreached
from workbench.runtime import ModelConfig, build_models
from workbench.session.assemble import assemble
from workbench.ui.app import WorkbenchApp


async def test_the_question_names_what_the_forget_cannot_reach():
    session = assemble(build_models(ModelConfig()), memories=[Unreached("support: Topics")])
    app = WorkbenchApp(session)
    async with app.run_test(size=(140, 40)) as pilot:
        await say(pilot, "support", "customer=Contoso")
        await say(pilot, "support", "forget customer")
        await drawn(pilot)
        said = consequence(app)
        assert "Forget cannot reach support: Topics: what it holds stays." in said
        assert "removed from" not in said  # it is not among the memories the forget empties
        await answer(pilot, "y")
        assert keys(app) == []
