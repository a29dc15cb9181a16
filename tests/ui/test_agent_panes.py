"""A pane per agent the session runs (the user's own agents, issue 29): titled with its name, as many
side by side as fit, the others one key away (F4)."""

import pytest
from agent_framework import Agent
from textual.app import App, ComposeResult
from textual.containers import Horizontal

from tests.ui.helpers import FIXED, PaneHost, pushed, start_ended
from workbench import ScriptedChatClient
from workbench.memory import WorkingMemory
from workbench.runtime import ModelConfig, build_models
from workbench.session.assemble import assemble
from workbench.session.controller import SessionController
from workbench.ui.app import WorkbenchApp
from workbench.ui.chat import ChatPane
from workbench.ui.chat_lines import Hint
from workbench.ui.drift_screen import DriftScreen
from workbench.ui.facts import FactPanel
from workbench.ui.panes import Panes

NAMES = ("planner", "Release notes", "triage", "reviewer")


def session_of(*names: str) -> SessionController:
    """A session over the user's agents `names`, each on the built-in scripted model."""
    agents = [Agent(ScriptedChatClient(), f"You are the {name} agent.", name=name) for name in names]
    return assemble(build_models(ModelConfig()), memory=WorkingMemory(clock=lambda: FIXED), agents=agents)


def shown(app: WorkbenchApp) -> list[str]:
    return [pane.agent for pane in app.query_one(Panes).shown()]


def footer_keys(app: WorkbenchApp) -> set[str]:
    return {b.key for _, b, enabled, _ in app.screen.active_bindings.values() if enabled and b.show}


async def test_the_panes_are_the_sessions_agents_titled_with_their_names():
    session = session_of(*NAMES[:3])
    assert session.agent_names == NAMES[:3]
    app = WorkbenchApp(session)
    async with app.run_test(size=(140, 40)) as pilot:
        await pilot.pause()
        panes = app.query_one(Panes).panes
        assert [(p.agent, str(p.border_title)) for p in panes] == [(n, n) for n in NAMES[:3]]
        assert shown(app) == list(NAMES[:3]) and all(p.display for p in panes)  # three side by side at 140
        hint = str(panes[1].query_one(Hint).render())
        assert hint.startswith("Release notes: your agent as you built it") and "support" not in hint
        assert "f4" not in footer_keys(app)  # every agent shows: no key to the others
        assert app.focused is panes[0].prompt


async def test_at_80_columns_two_panes_show_and_f4_brings_the_others():
    app = WorkbenchApp(session_of(*NAMES))
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        assert shown(app) == ["planner", "Release notes"] and "f4" in footer_keys(app)
        assert [p.agent for p in app.query_one(Panes).panes if p.display] == ["planner", "Release notes"]
        await pilot.press("f4")
        await pilot.pause()
        assert shown(app) == ["triage", "reviewer"]
        assert app.focused is app.pane("triage").prompt  # the focus left the pane that no longer shows
        await pilot.press("f4")
        await pilot.pause()
        assert shown(app) == ["planner", "Release notes"]


async def test_the_drift_lab_offers_neither_f5_nor_f4_and_neither_acts_there():
    """F5 on the lab opened a second one with the same id (DuplicateIds ended the app); F4 turned the
    hidden main screen's panes, and the lab's footer offered it after a resize. Both are the main screen's."""
    app = WorkbenchApp(session_of(*NAMES[:3]))
    async with app.run_test(size=(140, 40)) as pilot:
        await pilot.pause()
        await pilot.press("f5")
        lab = await pushed(app, DriftScreen)
        await pilot.resize_terminal(80, 24)  # two of the three panes fit: F4 has others to bring
        await pilot.pause()
        assert not {"f4", "f5"} & footer_keys(app) and "escape" in footer_keys(app)
        assert not [c.title for c in app.get_system_commands(app.screen) if "rift lab" in c.title]  # nor the palette
        await pilot.press("f5", "f4")
        await pilot.pause()
        assert app.screen is lab and app.screen_stack == [app.screen_stack[0], lab]
        assert shown(app) == list(NAMES[:2])  # the panes did not turn
        await pilot.press("escape")
        await pilot.pause()
        assert {"f4", "f5"} <= footer_keys(app)  # back on the main screen: both offered again
        await pilot.press("f4")
        await pilot.pause()
        assert shown(app) == [NAMES[2], NAMES[0]]


class PanesHost(App[None]):
    """The panes of four agents beside the fact panel, styled as in the app, without a session."""

    CSS_PATH = WorkbenchApp.CSS_PATH
    HORIZONTAL_BREAKPOINTS = WorkbenchApp.HORIZONTAL_BREAKPOINTS

    def compose(self) -> ComposeResult:
        with Horizontal(id="main"):
            yield Panes(*(ChatPane(n, title=n, placeholder="type", hint="hint") for n in NAMES), id="panes")
            yield FactPanel()


@pytest.mark.parametrize(
    ("size", "first", "then"),
    [
        ((140, 40), list(NAMES[:3]), ["reviewer", "planner", "Release notes"]),
        ((200, 50), list(NAMES), list(NAMES)),  # four fit: nothing out of view, nothing turns
        ((80, 24), list(NAMES[:2]), list(NAMES[2:])),
    ],
)
async def test_as_many_panes_show_side_by_side_as_fit_and_the_others_come_in_turn(size, first, then):
    host = PanesHost()
    async with host.run_test(size=size) as pilot:
        panes = host.query_one(Panes)
        await pilot.pause()
        assert [p.agent for p in panes.shown()] == first == [p.agent for p in panes.panes if p.display]
        assert panes.out_of_view == len(NAMES) - len(first)
        panes.turn()
        await pilot.pause()
        assert [p.agent for p in panes.panes if p.display] == [n for n in NAMES if n in then]
        assert [p.agent for p in panes.shown()] == then


@pytest.mark.parametrize("widths", [(140, 80), (140, 80, 200), (80, 200, 80, 200, 80)])
async def test_resizing_shows_the_panes_that_fit_at_each_width(widths):
    """Textual lays the panes out at a new width before the width's breakpoint class restyles them:
    from 140 to 80 columns, three panes share the 16 columns the wide fact panel leaves, for a frame."""
    host = PanesHost()
    async with host.run_test(size=(widths[0], 24)) as pilot:
        panes = host.query_one(Panes)
        for width in widths[1:]:
            await pilot.resize_terminal(width, 24)
            await pilot.pause()
        await pilot.pause()
        fit = {80: 2, 140: 3, 200: 4}[widths[-1]]
        assert [p.agent for p in panes.panes if p.display] == list(NAMES[:fit])
        assert all(p.prompt.content_size.width > 0 for p in panes.shown())


async def test_a_user_agents_pane_runs_its_turn_and_the_facts_are_shared():
    host = PaneHost(session_of(*NAMES[:3]), "triage")
    async with host.run_test(size=(80, 24)) as pilot:
        await host.say(pilot, "module=Billing")
        session = host.session
        assert [(f.key, f.value) for f in session.state().memory.facts] == [("module", "Billing")]
        assert host.pane.turns == 1 and session.runtime.history("triage") != []
        assert session.runtime.history("planner") == []  # the planner was not asked: only the facts are shared


async def test_a_session_started_after_the_first_frame_brings_its_agents_panes_and_keeps_the_draft():
    def start() -> SessionController:
        app.query_one(Panes).panes[0].prompt.insert("module=")  # typed while the session starts
        return session_of("planner", "triage")

    app = WorkbenchApp(start=start)
    async with app.run_test(size=(140, 40)) as pilot:
        await start_ended(pilot)
        await app.workers.wait_for_complete()  # the agents' panes are mounted
        assert [p.agent for p in app.query_one(Panes).panes] == ["planner", "triage"]
        assert app.ready and app.pane("planner").prompt.text == "module="
