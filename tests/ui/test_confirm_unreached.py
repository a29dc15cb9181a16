"""The forget question names a memory the forget cannot reach before it is answered (a provider the
workbench does not know, on a user's agent), and does not count it among those it empties."""

import os

from tests.ui.helpers import ScreenHost, answer, say
from tests.ui.test_confirmation import consequence, drawn, keys
from workbench.agentmem.recognise import Unreached
from workbench.recall.config import RecallConfig
from workbench.runtime import ModelConfig, build_models
from workbench.session.assemble import assemble
from workbench.ui.app import WorkbenchApp
from workbench.ui.confirm import ConfirmForget


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


async def test_the_question_names_a_recall_store_that_could_not_be_read_with_its_reason_as_written(tmp_path):
    """Recall off, an earlier run's file that is corrupt, in a folder whose name looks like markup: the
    question (given the session's preview, as the app gives it) names the store and why, literally."""
    folder = tmp_path / "[bold]x"
    folder.mkdir()
    path = folder / "recall.duckdb"
    path.write_bytes(os.urandom(64 * 1024))
    session = assemble(build_models(ModelConfig()), recall=RecallConfig(store=str(path)).memory())
    await session.ask("support", "customer=Contoso")
    preview = await session.forget_preview(["customer"])
    host = ScreenHost(
        ConfirmForget(
            ["customer"], agents=preview.agents, kept=preview.kept, reaches=preview.reaches, unreached=preview.unreached
        )
    )
    async with host.run_test(size=(140, 40)) as pilot:
        await drawn(pilot)
        said = consequence(host)
    assert f'Forget cannot reach recall store (could not be read: IOException: IO Error: The file "{path}"' in said
    assert said.endswith("is not a valid DuckDB database file!): what it holds stays.")
