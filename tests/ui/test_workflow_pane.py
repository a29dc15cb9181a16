"""A workflow's pane as a user sees it: titled as a workflow, its agents' outputs streamed in by
executor, the facts shared; a workflow a message cannot start says why in its pane, as a workflow
(not as an agent's failed call); the notice lists what did not load."""

from pathlib import Path
from typing import Any

from tests.loading.helpers import _fresh_modules  # noqa: F401  (the fixture: each test's folder imported afresh)
from tests.loading.test_workflows import NO_MESSAGE, SOLO, folder_with, pair, session_over
from tests.ui.helpers import answer, say
from workbench.loading import load_folder
from workbench.ui.app import WorkbenchApp
from workbench.ui.chat import ChatPane
from workbench.ui.chat_lines import Notice
from workbench.ui.facts import ForgetRequested
from workbench.ui.replies import AgentAnswer


def app_over(folder: Path) -> WorkbenchApp:
    loaded = load_folder(folder)
    flows = loaded.workflows
    return WorkbenchApp(
        session_over(folder),
        notices={"Your agents": loaded.notice() or ""},
        labels={flow.name: f"{flow.label} · workflow" for flow in flows},
        workflows=[flow.name for flow in flows],
    )


def app_naming_agents(folder: Path) -> WorkbenchApp:
    """The app over `folder`, told the agents each workflow runs (a forget's or a switch's note names them)."""
    workflows = load_folder(folder).workflows
    return WorkbenchApp(
        session_over(folder), workflows={flow.name: [a.name for a in flow.agents] for flow in workflows}
    )


async def test_a_workflow_answers_in_its_pane_and_one_that_cannot_start_says_why(tmp_path, monkeypatch):
    folder = folder_with(
        tmp_path,
        {"pair_flow/__init__.py": pair(), "spam.py": NO_MESSAGE, "broken.py": "import not_installed_here\nagent = 1\n"},
    )
    app = app_over(folder)
    notices: list[str] = []
    notify = app.notify

    def noted(message: str, **how: Any) -> None:
        notices.append(f"{how.get('title')}: {message}")
        notify(message, **how)

    monkeypatch.setattr(app, "notify", noted)
    async with app.run_test(size=(140, 40)) as pilot:
        await pilot.pause()
        titles = [str(pane.border_title) for pane in app.query(ChatPane)]
        assert titles == ["pair_flow (folder name) · workflow", "spam (module name) · workflow"]
        assert any(m.startswith("Your agents: not loaded: broken.py: ModuleNotFoundError") for m in notices)
        await say(pilot, "pair_flow", "customer=Contoso Ltd 7731; hello")
        [answer] = app.pane("pair_flow").query(AgentAnswer)
        assert answer.text.startswith("**drafter**: ") and "\n\n**checker**: " in answer.text
        assert [f.key for f in app.session.state().memory.facts] == ["customer"]
        await say(pilot, "spam", "is this spam?")
        shown = " ".join(n.text for n in app.pane("spam").query(Notice))
        assert "The spam workflow's run failed: its first executor takes EmailRequest, not a message" in shown


async def test_a_forget_says_the_workflows_agents_each_start_a_new_session_naming_them(tmp_path):
    """It said "the pair_flow agent starts a new session" (the tester of issue 36, on the Content Review
    Workflow): a workflow's agents each start one, in its executors, named as F1 names agents."""
    folder = folder_with(tmp_path, {"pair_flow/__init__.py": pair(), "solo.py": SOLO})
    app = app_naming_agents(folder)
    async with app.run_test(size=(140, 40)) as pilot:
        await pilot.pause()
        await say(pilot, "pair_flow", "customer=Contoso Ltd 7731; hello")
        app.post_message(ForgetRequested(("customer",)))
        await answer(pilot, "y")
        [flow_note] = [n.text for n in app.pane("pair_flow").query(Notice)]
        [solo_note] = [n.text for n in app.pane("solo").query(Notice)]
    assert flow_note == (
        "History replaced by forget customer: the agents of pair_flow (drafter and checker) each start a new "
        "session and no longer see the messages that were here."
    )
    assert "the solo agent starts a new session and no longer sees" in solo_note


async def test_a_switch_of_mode_or_recall_names_the_workflows_agents_starting_anew(tmp_path):
    """The switch's note said "the pair_flow agent starts a new session": it names the workflow's agents,
    as the forget's note does."""
    from workbench.runtime.config import Mode
    from workbench.ui.palette import switch_mode

    folder = folder_with(tmp_path, {"pair_flow/__init__.py": pair(), "solo.py": SOLO})
    app = app_naming_agents(folder)
    async with app.run_test(size=(140, 40)) as pilot:
        await pilot.pause()
        await say(pilot, "pair_flow", "customer=Contoso Ltd 7731; hello")
        await switch_mode(app, Mode.PROVIDER)  # what the palette entry runs
        await pilot.pause()
        [flow_note] = [n.text for n in app.pane("pair_flow").query(Notice)]
        [solo_note] = [n.text for n in app.pane("solo").query(Notice)]
        held = await app.session.runtime._workflows["pair_flow"].texts()
    assert flow_note == (
        "Switched to provider mode: the agents of pair_flow (drafter and checker) each start a new session; "
        "the facts are kept."
    )
    assert solo_note == "Switched to provider mode: the solo agent starts a new session; the facts are kept."
    assert held == []
