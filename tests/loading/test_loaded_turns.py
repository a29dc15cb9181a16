"""A loaded agent runs as its author configured it, with the workbench's working memory added:
its own client, instructions, tools and providers; the author's Agent object is left untouched."""

import asyncio
import sys
from pathlib import Path

import pytest
from agent_framework import Agent, InMemoryHistoryProvider, tool

from workbench import ScriptedChatClient
from workbench.loading import from_folder
from workbench.runtime import build_models
from workbench.runtime.config import Mode, ModelConfig, WriterKind
from workbench.session.assemble import assemble

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "agents"


@pytest.fixture
def examples(monkeypatch, tmp_path):
    before = set(sys.modules)
    monkeypatch.setenv("EXAMPLE_AGENTS_DATA", str(tmp_path))
    yield from_folder(EXAMPLES)
    for name in set(sys.modules) - before:
        del sys.modules[name]


def session_over(agents, mode=Mode.PROVIDER):
    return assemble(build_models(ModelConfig()), agents=agents, mode=mode, writer=WriterKind.HOST)


def test_the_example_agents_share_the_facts_and_keep_their_own_memories(examples, tmp_path):
    runtime = session_over([a.agent for a in examples]).runtime
    assert runtime.names == ("notes", "triage")

    async def story():
        await runtime.ask("triage", "module=Reporting; database=PostgreSQL")
        return await runtime.ask("notes", "module=Billing; database=SQL Server 2022")

    corrected = asyncio.run(story())
    assert corrected.ok
    assert "database=PostgreSQL, module=Reporting" in corrected.reply  # the facts block, from triage's turn
    assert {f.key: f.value for f in runtime.memory.facts()} == {"module": "Billing", "database": "SQL Server 2022"}
    history = list((tmp_path / "triage-history").glob("*.jsonl"))
    assert len(history) == 1 and "module=Reporting" in history[0].read_text()
    notes = tmp_path / "notes-memory" / "user"
    assert (notes / "module.md").read_text() == "module=Billing"  # the model wrote it with file_memory_write


def test_the_authors_agent_is_left_as_it_was():
    @tool
    def where(module: str) -> str:
        """Where a module logs."""
        return f"/var/log/{module}"

    history = InMemoryHistoryProvider()
    mine = Agent(ScriptedChatClient(), "You help.", name="mine", tools=[where], context_providers=[history])
    before = (list(mine.context_providers), mine.middleware, dict(mine.default_options))
    runtime = session_over([mine]).runtime
    asyncio.run(runtime.ask("mine", "priority=high"))
    assert (list(mine.context_providers), mine.middleware, dict(mine.default_options)) == before
    assert [m.text for m in runtime.history("mine") if m.role == "user"] == ["priority=high"]
    [call] = runtime.last_turn_calls("mine")
    assert call.instructions.startswith("You help.") and call.model == "scripted (built-in; qualifies no model)"


def test_manual_mode_puts_the_block_in_the_message_of_a_loaded_agent_too():
    mine = Agent(ScriptedChatClient(), "You help.", name="mine")
    runtime = session_over([mine], mode=Mode.MANUAL).runtime

    async def two():
        await runtime.ask("mine", "module=Billing")
        return await runtime.ask("mine", "what now?")

    asyncio.run(two())
    sent = runtime.history("mine")[-2].text
    assert "<working-memory>" in sent and "module" in sent


def test_a_forget_over_your_agents_is_recorded_even_before_the_data_folder_exists(examples, tmp_path, monkeypatch):
    """Their stores are on disk: the forget's journal goes to the data folder, made for it if need be."""
    from workbench.cli.configs import model_config
    from workbench.cli.parser import parse
    from workbench.cli.start import session_start

    data = tmp_path / "data-not-made-yet"
    monkeypatch.setenv("WORKBENCH_DATA_DIR", str(data))
    args = parse([str(EXAMPLES)])
    session = session_start(args, model_config(args), examples)()

    async def story():
        await session.ask("triage", "customer=Contoso")
        return await session.forget("customer")

    try:
        report = asyncio.run(story())
    finally:
        session.close()  # the quit: its agents' folders are unlocked and the process umask is its own again
    assert report.failures == {} and report.removed["triage: FileHistoryProvider"] == 1
    assert not (data / "forget-pending.json").exists() and data.is_dir()


def test_what_is_remembered_lists_each_history_once_where_it_is_kept(examples):
    """triage keeps its history in files (listed by its recognised memory), `mine` in its own in-memory
    history (listed with the sessions), notes in the runtime's."""
    mine = Agent(ScriptedChatClient(), name="mine", context_providers=[InMemoryHistoryProvider()])
    runtime = session_over([*(a.agent for a in examples), mine]).runtime

    async def story():
        for name in runtime.names:
            await runtime.ask(name, f"module=Billing-{name}")
        return await runtime.remembered()

    listed = {system.name: system for system in asyncio.run(story()).systems}
    sessions = {item.name for item in listed["agent sessions"].items}
    assert sessions == {"notes", "mine"}
    assert any("Billing-triage" in item.content for item in listed["triage: FileHistoryProvider"].items)


def test_a_history_line_cut_short_is_blamed_on_the_file_not_on_the_server(tmp_path):
    """A kill while the framework appended a line leaves it cut short: every later turn fails to parse it."""
    from agent_framework import FileHistoryProvider

    mine = Agent(ScriptedChatClient(), name="mine", context_providers=[FileHistoryProvider(tmp_path)])
    runtime = session_over([mine]).runtime

    async def story():
        await runtime.ask("mine", "module=Billing")
        [history] = tmp_path.glob("*.jsonl")
        history.write_bytes(history.read_bytes() + b'{"type": "mess')
        return await runtime.ask("mine", "and now?")

    failed = asyncio.run(story())
    assert "a file the agent's memory reads is not JSON" in failed.error and "_sessions.py" in failed.error
    assert "base-url" not in failed.error


def test_the_example_agents_answer_from_a_local_server_without_a_key(monkeypatch, tmp_path):
    """The line docs/your-agents.md gives (EXAMPLE_MODEL, OPENAI_BASE_URL, no key) stopped the load with
    "SettingNotFoundError: Exactly one of 'base_url', 'endpoint' must be provided"."""
    from tests.support.openai_server import LoopbackOpenAI

    with LoopbackOpenAI() as server:
        monkeypatch.delenv("OPENAI_API_KEY", raising=False)
        monkeypatch.setenv("EXAMPLE_MODEL", "smollm2")
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        monkeypatch.setenv("EXAMPLE_AGENTS_DATA", str(tmp_path))
        before = set(sys.modules)
        try:
            runtime = session_over([a.agent for a in from_folder(EXAMPLES)]).runtime
            result = asyncio.run(runtime.ask("triage", "customer=Contoso"))
        finally:
            for name in set(sys.modules) - before:
                del sys.modules[name]
        assert result.ok and [r["model"] for r in server.requests] == ["smollm2"]
        assert runtime.status.model == "OpenAIChatCompletionClient smollm2"
        assert "local-server" not in runtime.status.summary


def test_the_example_agents_say_what_a_real_model_needs_when_it_is_not_there(monkeypatch):
    from workbench.loading import LoadFailed, load_folder

    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    monkeypatch.setenv("EXAMPLE_MODEL", "gpt-4o-mini")
    before = set(sys.modules)
    try:
        with pytest.raises(LoadFailed) as failed:
            load_folder(EXAMPLES)
    finally:
        for name in set(sys.modules) - before:
            del sys.modules[name]
    problems = {skipped.problem for skipped in failed.value.skipped}
    assert problems == {
        "RuntimeError: EXAMPLE_MODEL=gpt-4o-mini needs OPENAI_API_KEY for OpenAI, or OPENAI_BASE_URL for a local server"
    }


def test_with_model_your_agents_answer_on_it_and_the_window_and_header_say_so(examples, tmp_path, monkeypatch):
    """`workbench examples/agents --model smollm2 --base-url …` ran the agents on their built-in script in
    silence: the header said "scripted (built-in; qualifies no model)" and the server got no request. Now
    they answer on --model, as the drift lab runs them, tools included (notes writes its memory file by
    calling the function), and the notice, the header and F2 name it."""
    from tests.support.openai_server import LoopbackOpenAI, memory_file_writer
    from workbench.cli.configs import model_config
    from workbench.cli.parser import parse
    from workbench.cli.start import on_your_model, session_start
    from workbench.loading import Loaded

    monkeypatch.setenv("WORKBENCH_DATA_DIR", str(tmp_path / "data"))
    with LoopbackOpenAI() as server:
        server.state.responder = memory_file_writer()
        args = parse([str(EXAMPLES), "--model", "smollm2", "--base-url", server.base_url])
        config = model_config(args)
        notice = on_your_model(config, Loaded(examples))
        assert notice is not None and notice.startswith("--model smollm2: your agents answer on it instead of")
        assert on_your_model(model_config(parse([str(EXAMPLES)])), Loaded(examples)) is None
        session = session_start(args, config, examples)()

        async def story():
            for name in ("triage", "notes"):
                assert (await session.runtime.ask(name, f"customer=Contoso-{name}")).ok

        try:
            asyncio.run(story())
        finally:
            session.close()
        asked = [r["model"] for r in server.requests]
    label = f"smollm2 @ {server.base_url.split('//')[1].split('/')[0]}"
    assert asked and set(asked) == {"smollm2"}
    assert session.runtime.status.model == label
    assert {c.model for c in session.runtime.calls.records()} == {label}
    assert (tmp_path / "notes-memory" / "user" / "customer.md").read_text() == "customer=Contoso-notes"


def test_each_pane_is_named_with_what_it_answers_on_when_they_differ(tmp_path):
    from agent_framework.openai import OpenAIChatCompletionClient

    own = Agent(OpenAIChatCompletionClient(model="gpt-4o", api_key="k"), "You help.", name="accounts")
    built_in = Agent(ScriptedChatClient(), "You help.", name="desk")
    status = session_over([own, built_in]).runtime.status
    assert status.model == "accounts: OpenAIChatCompletionClient gpt-4o; desk: scripted (built-in; qualifies no model)"


def test_the_forget_question_says_which_of_your_memories_hold_the_value(examples):
    """It said "It is also removed from the notes: FileMemoryProvider and the triage: FileHistoryProvider"
    though the notes held nothing of it: it named the memories the forget reaches. Now each as F3 sees it."""
    from workbench.scripts import question
    from workbench.ui.confirm import ConfirmForget

    session = assemble(
        build_models(ModelConfig()), agents=[a.agent for a in examples], mode=Mode.PROVIDER, writer=WriterKind.HOST
    )

    async def story():
        await session.ask("triage", "module=Reporting")
        await session.ask("notes", "database=PostgreSQL")
        held = {s.name: s.keys for s in (await session.remembered()).systems}
        return held, await session.forget_preview(["module"])

    held, preview = asyncio.run(story())
    notes, triage = "notes: FileMemoryProvider", "triage: FileHistoryProvider"
    assert "module" in held[triage] and "module" not in held[notes]  # what F3 shows
    assert preview.holding == {notes: False, triage: True}
    lines = question(preview, {"module": "Reporting"}).splitlines()
    assert f"  also removed from: {triage}" in lines
    assert f"  also reaches, holding none of them now: {notes}" in lines
    screen = ConfirmForget(["module"], {"module": ["Reporting"]}, agents=preview.agents, reaches=preview.reaches)
    assert screen._where(True) == (  # without the preview's holding: not known, never "removed from"
        f" Whether it is in the {notes} and the {triage} is not known (the forget reaches them all the same)."
    )
    screen.holding = dict(preview.holding)
    assert screen._where(True) == f" It is also removed from the {triage}. None of it is in the {notes} now."
