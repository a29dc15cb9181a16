"""Every request bounds its reply: the agents and the summarizer by --max-tokens, the writer by what an
extraction of the message can need. A model that loops (the loopback server's `ramble`, which generates
until the bound or, with none, its whole context) is cut off in seconds and the failure says so."""

import json

from tests.live.helpers import is_writer
from tests.support.openai_server import Canned
from workbench.cli import main
from workbench.memory import MAX_FACTS, EventKind, ReasonCode
from workbench.runtime import ModelConfig, build_models
from workbench.runtime.agents import AgentRuntime
from workbench.runtime.bounds import ReplyBound, writer_max_tokens
from workbench.runtime.config import DEFAULT_MAX_TOKENS
from workbench.session.assemble import assemble

# Unbounded, a rambling reply takes 3,600 x 0.01 s = 36 s: far past every --timeout below.
RAMBLE = 0.01


def runtime(base_url: str, *, max_tokens: int = DEFAULT_MAX_TOKENS, timeout: float = 10.0) -> AgentRuntime:
    config = ModelConfig(
        model="loopback-model", base_url=base_url, timeout=timeout, max_retries=0, max_tokens=max_tokens
    )
    return assemble(build_models(config), timeout=timeout).runtime


async def test_every_request_carries_its_bound_under_both_names(loopback):
    await runtime(loopback.base_url).ask("support", "module=Billing")
    writer = next(body for body in loopback.requests if is_writer(body))
    agent = next(body for body in loopback.requests if not is_writer(body))
    assert agent["max_tokens"] == agent["max_completion_tokens"] == DEFAULT_MAX_TOKENS
    assert writer["max_tokens"] == writer["max_completion_tokens"] == writer_max_tokens("module=Billing", MAX_FACTS)


def test_the_writer_bound_is_a_few_hundred_tokens_for_five_facts():
    five = "module=Billing; database=SQL Server 2022; priority=high; customer=Contoso; version=12.4"
    assert writer_max_tokens("Where are the logs?", MAX_FACTS) == 256
    assert 300 < writer_max_tokens(five, MAX_FACTS) < 700
    # OpenAI and Azure read the framework's max_tokens as max_completion_tokens; nothing more is sent.
    assert ReplyBound().options(64) == {"max_tokens": 64}
    assert ReplyBound(compatible_server=True).options(64) == {"max_tokens": 64, "extra_body": {"max_tokens": 64}}


async def test_a_rambling_agent_fails_fast_naming_max_tokens(loopback):
    loopback.state.responder = lambda body: None if is_writer(body) else Canned(ramble=RAMBLE)
    result = await runtime(loopback.base_url, max_tokens=32).ask("support", "Where are the logs?")
    assert not result.ok and "cut off at the token limit" in result.error and "--max-tokens" in result.error
    assert "timed out" not in result.error


async def test_a_rambling_writer_is_a_rejected_batch_with_its_reason(loopback):
    loopback.state.responder = lambda body: Canned(ramble=RAMBLE / 10) if is_writer(body) else None
    work = runtime(loopback.base_url, timeout=3.0)
    assert (await work.ask("support", "module=Billing")).ok
    event = work.memory.ledger.latest(1)[0]
    assert event.kind is EventKind.REJECTED and event.reasons[0].code is ReasonCode.MALFORMED_OUTPUT
    assert "the writer's reply was cut off at 325 tokens" in event.describe() and "rambled" in event.describe()


async def test_a_server_that_reads_only_max_completion_tokens_is_bounded_too(loopback):
    loopback.state.reads_max_completion_tokens = True
    loopback.state.responder = lambda body: None if is_writer(body) else Canned(ramble=RAMBLE)
    result = await runtime(loopback.base_url, max_tokens=32).ask("support", "Where are the logs?")
    assert not result.ok and "cut off at the token limit" in result.error


def test_the_drift_lab_and_its_summarizer_are_bounded_by_the_option(loopback, capsys):
    code = main(["drift", "--model", "m", "--base-url", loopback.base_url, "--max-tokens", "77", "--json"])
    assert code == 0 and json.loads(capsys.readouterr().out)["failures"] == {}
    summarizer = [b for b in loopback.requests if "summarizer agent" in json.dumps(b["messages"][0])]
    agents = [b for b in loopback.requests if not is_writer(b) and b not in summarizer]
    assert summarizer and agents and {b["max_tokens"] for b in summarizer + agents} == {77}


def _yours(folder, loopback_url: str, max_tokens: int):
    """A folder with one agent of the user's on the built-in script, and the run's options naming a model."""
    (folder / "desk.py").write_text(
        "from agent_framework import Agent\nfrom workbench import ScriptedChatClient\n"
        "agent = Agent(ScriptedChatClient(), 'You help.', name='desk')\n"
    )
    return ["--model", "m", "--base-url", loopback_url, "--max-tokens", str(max_tokens)]


async def test_your_agents_on_the_runs_model_are_bounded_by_the_option(loopback):
    """`workbench examples/agents --model smollm2 --base-url … --max-tokens 200` sent the user's agents'
    requests with no bound at all: SmolLM2-135M on llama-cpp-python's server looped for thousands of
    tokens a reply, two minutes each, where the built-in agents were cut off at the bound."""
    from agent_framework import Agent

    from workbench import ScriptedChatClient
    from workbench.runtime.config import WriterKind

    own = Agent(ScriptedChatClient(), "You help.", name="desk")
    config = ModelConfig(model="loopback-model", base_url=loopback.base_url, timeout=10.0, max_retries=0, max_tokens=41)
    work = assemble(build_models(config), agents=[own], writer=WriterKind.HOST, timeout=10.0).runtime
    assert (await work.ask("desk", "Where are the logs?")).ok
    (request,) = loopback.requests
    assert request["max_tokens"] == request["max_completion_tokens"] == 41
    assert "max_tokens" not in own.default_options  # the user's agent is left as it was


async def test_your_rambling_agent_on_the_runs_model_fails_fast_naming_max_tokens(loopback):
    from agent_framework import Agent

    from workbench import ScriptedChatClient
    from workbench.runtime.config import WriterKind

    loopback.state.responder = lambda body: Canned(ramble=RAMBLE)
    config = ModelConfig(model="loopback-model", base_url=loopback.base_url, timeout=10.0, max_retries=0, max_tokens=32)
    own = Agent(ScriptedChatClient(), "You help.", name="desk")
    result = await assemble(build_models(config), agents=[own], writer=WriterKind.HOST, timeout=10.0).runtime.ask(
        "desk", "Where are the logs?"
    )
    assert not result.ok and "cut off at the token limit" in result.error and "timed out" not in result.error


def test_the_drift_labs_rows_of_your_agents_on_its_model_are_bounded_too(loopback, tmp_path, capsys):
    """The lab ran the user's agents on --model unbounded: its `notes` rows over SmolLM2-135M timed out
    at 120 s with `--max-tokens 256` (3,866 tokens generated), and the line said to raise --timeout."""
    options = _yours(tmp_path, loopback.base_url, 77)
    code = main(["drift", str(tmp_path), *options, "--policies", "yours:desk,yours:desk+facts", "--json"])
    assert code == 0 and json.loads(capsys.readouterr().out)["failures"] == {}
    agents = [b for b in loopback.requests if not is_writer(b)]
    assert agents and {b["max_tokens"] for b in agents} == {77}
