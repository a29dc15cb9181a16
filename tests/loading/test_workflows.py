"""A workflow an entry exports is never dropped: it runs in a pane of its own (the message in, its
agents' outputs streamed out, the message's declarations admitted to the shared facts), the agents its
executors run have their memories recognised, shown in what is remembered and reached by the one
forget, and a workflow a message cannot start says why."""

import asyncio
import textwrap
from pathlib import Path

from agent_framework import Agent, AgentExecutorResponse, Executor, WorkflowBuilder, WorkflowContext, handler

from tests.loading.helpers import _fresh_modules  # noqa: F401  (the fixture, used by every test here)
from workbench import ScriptedChatClient
from workbench.cli import main
from workbench.loading import load_folder
from workbench.runtime import build_models
from workbench.runtime.config import ModelConfig, WriterKind
from workbench.session.assemble import assemble

PAIR = """
from agent_framework import Agent, WorkflowBuilder
from workbench import ScriptedChatClient
drafter = Agent(ScriptedChatClient(), "You draft.", name="drafter"{providers})
checker = Agent(ScriptedChatClient(), "You check.", name="checker")
workflow = WorkflowBuilder(start_executor=drafter).add_edge(drafter, checker).build()
"""
# As the framework's workflow_spam sample: its first executor takes a request object, not a message.
NO_MESSAGE = """
from dataclasses import dataclass
from agent_framework import Executor, WorkflowBuilder, WorkflowContext, handler

@dataclass
class EmailRequest:
    email: str

class Preprocessor(Executor):
    @handler
    async def handle(self, request: EmailRequest, ctx: WorkflowContext[str]) -> None:
        await ctx.yield_output(request.email)

workflow = WorkflowBuilder(start_executor=Preprocessor(id="pre")).build()
"""
DECLARED = "customer=Contoso Ltd 7731; hello"
SOLO = """
from agent_framework import Agent
from workbench import ScriptedChatClient
agent = Agent(ScriptedChatClient(), "You help.", name="solo")
"""


def folder_with(tmp_path: Path, entries: dict[str, str]) -> Path:
    folder = tmp_path / "agents"
    for name, body in entries.items():
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(body))
    return folder


def pair(history: Path | None = None) -> str:
    if history is None:
        return PAIR.format(providers="")
    return "from agent_framework import FileHistoryProvider\n" + PAIR.format(
        providers=f", context_providers=[FileHistoryProvider({str(history)!r})]"
    )


def session_over(folder: Path):
    loaded = load_folder(folder)
    flows = [(flow.name, flow.workflow, flow.cannot_run) for flow in loaded.workflows]
    return assemble(
        build_models(ModelConfig()), agents=[a.agent for a in loaded.agents], workflows=flows, writer=WriterKind.HOST
    )


def test_a_folder_holding_only_a_workflow_loads_it_with_the_agents_it_runs(tmp_path):
    loaded = load_folder(folder_with(tmp_path, {"pair_flow/__init__.py": pair()}))
    assert loaded.agents == ()
    [flow] = loaded.workflows
    assert (flow.name, flow.label, flow.cannot_run) == ("pair_flow", "pair_flow (folder name)", None)
    assert [a.name for a in flow.agents] == ["drafter", "checker"]


def test_a_workflow_runs_in_its_pane_and_your_declarations_join_the_shared_facts(tmp_path):
    runtime = session_over(folder_with(tmp_path, {"pair_flow.py": pair()})).runtime
    assert runtime.names == ("pair_flow",)
    streamed: list[str] = []
    result = asyncio.run(runtime.ask("pair_flow", DECLARED, on_text=streamed.append))
    assert result.ok, result.error
    assert result.reply == "".join(streamed)
    assert result.reply.startswith("**drafter**: ") and "\n\n**checker**: " in result.reply
    [fact] = runtime.memory.facts()
    assert (fact.key, fact.value) == ("customer", "Contoso Ltd 7731")


def test_the_workflows_agents_sessions_are_shown_and_replaced_by_the_one_forget(tmp_path):
    runtime = session_over(folder_with(tmp_path, {"pair_flow.py": pair()})).runtime

    async def story():
        assert (await runtime.ask("pair_flow", DECLARED)).ok
        before = await runtime.remembered()
        report = await runtime.forget("customer")
        after = await runtime.remembered()
        second = await runtime.ask("pair_flow", "hello again")
        return before, report, after, second

    before, report, after, second = asyncio.run(story())
    held = {item.name: item for system in before.systems for item in system.items}
    assert held["pair_flow/drafter"].keys == ("customer",) and held["pair_flow/checker"].keys == ("customer",)
    assert "workflow sessions" in report.describe()
    assert not [item.name for system in after.systems for item in system.items if item.keys]
    assert "History: none" in second.reply  # the drafter started a new session: nothing of the first run


def test_the_memories_of_a_workflows_agents_are_recognised_and_forgotten(tmp_path):
    history = tmp_path / "drafter-history"
    runtime = session_over(folder_with(tmp_path, {"pair_flow.py": pair(history)})).runtime

    async def story():
        assert (await runtime.ask("pair_flow", DECLARED)).ok
        before = await runtime.remembered()
        await runtime.forget("customer")
        return before

    before = asyncio.run(story())
    system = next(s for s in before.systems if s.name == "drafter: FileHistoryProvider")
    assert system.keys == ("customer",) and system.items  # the drafter's session file
    assert not any(b"Contoso" in p.read_bytes() for p in history.rglob("*") if p.is_file())


def test_a_workflow_a_message_cannot_start_says_why_in_its_pane(tmp_path):
    folder = folder_with(tmp_path, {"workflow_spam/__init__.py": NO_MESSAGE})
    [flow] = load_folder(folder).workflows
    assert (
        flow.cannot_run
        == "its first executor takes EmailRequest, not a message: the workbench cannot start it from a pane"
    )
    runtime = session_over(folder).runtime
    result = asyncio.run(runtime.ask("workflow_spam", DECLARED))
    assert result.error == flow.cannot_run
    assert runtime.memory.facts() == ()  # nothing ran: nothing admitted


def test_remembered_lists_a_workflows_agents_from_the_command_line(tmp_path, capsys):
    folder = folder_with(tmp_path, {"pair_flow/__init__.py": pair(), "workflow_spam.py": NO_MESSAGE})
    assert main(["remembered", str(folder)]) == 0
    out = capsys.readouterr().out
    assert 'history "pair_flow/drafter"' in out and 'history "pair_flow/checker"' in out


async def test_a_forget_during_a_workflows_run_leaves_nothing_its_executors_wrote_after_it():
    """The forget is a barrier for a workflow's turn as for an agent's: what its executors keep after the
    run it cut through holds no value it forgot."""
    arrived, release = asyncio.Event(), asyncio.Event()

    class Gate(Executor):
        @handler
        async def hold(self, prior: AgentExecutorResponse, ctx: WorkflowContext[AgentExecutorResponse]) -> None:
            arrived.set()
            await release.wait()
            await ctx.send_message(prior)

    drafter = Agent(ScriptedChatClient(), "You draft.", name="drafter")
    checker = Agent(ScriptedChatClient(), "You check.", name="checker")
    gate = Gate(id="gate")
    flow = WorkflowBuilder(start_executor=drafter).add_edge(drafter, gate).add_edge(gate, checker).build()
    runtime = assemble(build_models(ModelConfig()), workflows=[("gated", flow, None)], writer=WriterKind.HOST).runtime
    turn = asyncio.ensure_future(runtime.ask("gated", DECLARED))
    await arrived.wait()  # the drafter has answered: its session holds the value
    forgetting = asyncio.ensure_future(runtime.forget("customer"))
    release.set()
    report, result = await forgetting, await turn
    assert result.ok and not report.failures
    held = [text for pane in runtime._workflows.values() for text in await pane.texts()]
    assert not [text for text in held if "Contoso" in text]
    assert runtime.memory.facts() == ()  # the turn's declaration came before the forget: not admitted after it


def test_a_workflows_agents_calls_carry_the_facts_block_and_are_shown_in_what_the_model_saw(tmp_path):
    """They got no facts block and F2 said the pane's calls were not recorded: each agent executor's calls
    now carry the block (as context its executor does not keep) and are listed under its id."""
    from workbench.ui.screens import render_calls

    session = session_over(folder_with(tmp_path, {"pair_flow.py": pair(), "solo.py": SOLO}))
    runtime = session.runtime

    async def story():
        assert (await runtime.ask("pair_flow", DECLARED)).ok
        assert (await runtime.ask("pair_flow", "which customer?")).ok

    asyncio.run(story())
    calls = session.pane("pair_flow").calls
    assert [c.purpose for c in calls] == ["drafter", "checker"]
    assert {c.model for c in calls} == {"scripted (built-in; qualifies no model)"}
    for call in calls:  # the block, before the message: the fact the first turn declared
        [block] = [text for role, text in call.sent if text.startswith("<working-memory>")]
        assert '- customer = "Contoso Ltd 7731"' in block
    held = asyncio.run(runtime._workflows["pair_flow"].texts())
    assert held and not [text for text in held if "<working-memory>" in text]  # not kept by the executors
    said = render_calls("pair_flow", calls, session.pane("pair_flow").unrecorded).plain
    assert said.startswith("drafter call #") and "No call" not in said
    assert session.pane("pair_flow").unrecorded is None
    # Counted as any pane's calls are (the built-in model reports no usage: unknown, not zero).
    assert [c.usage for c in calls] == [None, None] and session.pane("pair_flow").usage is None
    assert session.pane("pair_flow").usage == runtime.calls.total("pair_flow")


def test_a_subfolder_whose_package_exports_nothing_is_read_from_its_workflow_py_as_devui_does(tmp_path):
    """The framework's workflow_fanout and workflow_declarative samples: an empty __init__.py beside workflow.py."""
    folder = folder_with(
        tmp_path, {"fan/__init__.py": '"""A sample."""\n', "fan/workflow.py": pair(), "spam.py": NO_MESSAGE}
    )
    loaded = load_folder(folder)
    assert [(w.name, w.source.endswith("workflow.py")) for w in loaded.workflows] == [("fan", True), ("spam", False)]
    runtime = session_over(folder).runtime
    listed = asyncio.run(runtime.remembered())
    items = {item.name: item.description for system in listed.systems for item in system.items}
    assert items["spam"] == "the spam workflow runs no agent (its executors: pre): what they keep is not known"


def test_a_switch_of_mode_or_recall_starts_the_workflows_agents_anew_as_it_says(tmp_path):
    """The switch's note said "the pair_flow agent starts a new session", but only the agents' sessions
    were rebuilt: the workflow's agents kept theirs, and the earlier messages still went to the model."""
    from workbench.recall.config import RecallConfig
    from workbench.runtime.calls import CallLog
    from workbench.runtime.config import Mode

    folder = folder_with(tmp_path, {"pair_flow.py": pair()})
    loaded = load_folder(folder)
    calls = CallLog()
    session = assemble(
        build_models(ModelConfig()),
        workflows=[(flow.name, flow.workflow, flow.cannot_run) for flow in loaded.workflows],
        writer=WriterKind.HOST,
        calls=calls,
        recall=RecallConfig(store="memory").build(calls),
    )
    flow = session.runtime._workflows["pair_flow"]

    async def story():
        assert (await session.ask("pair_flow", DECLARED)).result.ok
        held = await flow.texts()
        await session.switch(mode=Mode.PROVIDER)
        after_mode = await flow.texts()
        assert (await session.ask("pair_flow", "hello again")).result.ok
        assert await session.switch(recall=True)
        after_recall = await flow.texts()
        third = await session.ask("pair_flow", "and once more")
        return held, after_mode, after_recall, third

    held, after_mode, after_recall, third = asyncio.run(story())
    assert any("Contoso" in text for text in held)
    assert after_mode == [] and after_recall == []  # each executor holds none of the earlier messages
    assert "History: none" in third.result.reply
    sent = [text for call in session.pane("pair_flow").calls for _, text in call.sent]
    assert not [text for text in sent if "hello again" in text or "Contoso Ltd 7731; hello" in text]
