"""F1 names the agents each memory serves, and the panes, when they are the user's: it said "memory: …
(both agents; forget reaches it)" and "the model that answers in both panes" for one agent of the user's,
for three, and for memories that serve only one of two (issue 36, item 9)."""

from __future__ import annotations

import sys
from pathlib import Path

from agent_framework import Agent, FileHistoryProvider

from workbench import ScriptedChatClient
from workbench.loading import from_folder
from workbench.runtime import Mode, ModelConfig, WriterKind, build_models
from workbench.session.assemble import assemble
from workbench.ui.app import WorkbenchApp
from workbench.ui.screens import HelpScreen, help_text

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "agents"


def status_of(agents: list[Agent]):
    return (
        assemble(build_models(ModelConfig()), agents=agents, mode=Mode.PROVIDER, writer=WriterKind.HOST).state().status
    )


def lines(said: str, start: str) -> list[str]:
    return [line for line in said.splitlines() if line.startswith(start)]


def test_the_example_agents_memories_each_name_the_agent_they_serve(tmp_path, monkeypatch):
    monkeypatch.setenv("EXAMPLE_AGENTS_DATA", str(tmp_path))
    monkeypatch.setattr(sys, "path", list(sys.path))
    before = set(sys.modules)
    try:
        status = status_of([loaded.agent for loaded in from_folder(EXAMPLES)])
    finally:
        for name in set(sys.modules) - before:
            del sys.modules[name]
    said = status.explained()
    assert "both" not in said
    [notes] = lines(said, "memory: notes: FileMemoryProvider")
    [triage] = lines(said, "memory: triage: FileHistoryProvider")
    assert notes.endswith("(used by notes; forget reaches it).")
    assert triage.endswith("(used by triage; forget reaches it).")
    assert lines(said, "model: ")[0].endswith("the model each of notes and triage answers on.")
    helped = help_text(status.contract, status.agents)
    assert "both" not in helped and "either pane" not in helped
    assert "Either forget also replaces the histories of notes and triage with new, empty sessions." in helped


def test_one_agent_and_three_are_named_and_a_memory_shared_by_two_names_both(tmp_path):
    one = Agent(ScriptedChatClient(), "You help.", name="desk", context_providers=[FileHistoryProvider(tmp_path / "d")])
    said = status_of([one]).explained()
    assert lines(said, "memory: desk: FileHistoryProvider")[0].endswith("(used by desk; forget reaches it).")
    assert lines(said, "model: ")[0].endswith("the model desk answers on.")
    assert "Type in the pane to talk to that agent." in help_text(None, ("desk",))

    shared = FileHistoryProvider(tmp_path / "shared")
    three = [
        Agent(ScriptedChatClient(), "You help.", name=n, context_providers=[shared] if n != "c" else [])
        for n in ("a", "b", "c")
    ]
    said = status_of(three).explained()
    assert "both" not in said
    assert lines(said, "memory: a, b: FileHistoryProvider")[0].endswith("(used by a and b; forget reaches it).")
    assert lines(said, "model: ")[0].endswith("the model each of a, b and c answers on.")
    assert "the histories of a, b and c" in help_text(None, ("a", "b", "c"))


def test_the_built_in_pair_still_reads_both():
    status = assemble(build_models(ModelConfig())).state().status
    assert status.agents == ()
    assert "the model that answers in both panes." in status.explained()
    assert "Either forget also replaces both agents' histories" in help_text(status.contract, status.agents)


async def test_f1_in_the_window_shows_the_agents_names(tmp_path):
    desk = Agent(ScriptedChatClient(), "You help.", name="desk", context_providers=[FileHistoryProvider(tmp_path)])
    session = assemble(build_models(ModelConfig()), agents=[desk], mode=Mode.PROVIDER, writer=WriterKind.HOST)
    app = WorkbenchApp(session, agents=session.agent_names)
    async with app.run_test(size=(140, 40)) as pilot:
        await pilot.pause()
        await pilot.press("f1")
        await pilot.pause()
        assert isinstance(app.screen, HelpScreen)
        shown = "\n".join(str(w.render()) for w in app.screen.query("Static"))
        assert "(used by desk; forget reaches it)." in shown and "both agents" not in shown
