"""F2 shows every call a turn of the user's agents made, whatever their clients: an agent on a chat client
of its own without the framework's middleware layer, a context provider calling its own client (the
framework's `simple_context_provider.py` sample extracts the user's name and age that way), and a
workflow's agents. Real calls to the loopback server, which reports usage."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import pytest
from agent_framework import (
    Agent,
    BaseChatClient,
    ChatResponse,
    ChatResponseUpdate,
    Content,
    Message,
    WorkflowBuilder,
)
from agent_framework.openai import OpenAIChatCompletionClient

from tests.support.openai_server import LoopbackOpenAI
from tests.support.residue import residue
from tests.support.sample_providers import EXTRACT, UserInfoMemory
from workbench import ScriptedChatClient
from workbench.runtime import ModelConfig, Usage, build_models
from workbench.runtime.config import Mode, WriterKind
from workbench.session.assemble import assemble


class OwnClient(BaseChatClient):
    """A chat client of the user's, as the framework's docs show one: no middleware layer."""

    def _inner_get_response(self, *, messages: Any, stream: bool, options: Any, **kwargs: Any) -> Any:
        said = f"seen {len(messages)} message(s)"
        if not stream:

            async def one() -> ChatResponse:
                return ChatResponse(messages=[Message(role="assistant", contents=[said])], finish_reason="stop")

            return one()

        async def pieces() -> AsyncIterator[ChatResponseUpdate]:
            yield ChatResponseUpdate(role="assistant", contents=[Content.from_text(said)], finish_reason="stop")

        return self._build_response_stream(pieces())


def runtime_over(*agents: Agent, workflows: Any = ()) -> Any:
    return assemble(
        build_models(ModelConfig()), agents=agents, workflows=workflows, mode=Mode.PROVIDER, writer=WriterKind.HOST
    ).runtime


def loopback_client(server: LoopbackOpenAI, model: str = "smollm2") -> OpenAIChatCompletionClient:
    return OpenAIChatCompletionClient(model=model, base_url=server.base_url, api_key="local")


def test_an_agent_on_its_own_client_lists_each_turns_call_until_the_forget():
    """F2 said "No call of the accounts agent to show" after two turns, and the forget that the call log
    held nothing: the framework hands the recorder only to a client with its middleware layer."""
    accounts = Agent(OwnClient(), "You keep accounts.", name="accounts")
    runtime = runtime_over(accounts)
    asyncio.run(runtime.ask("accounts", "customer=Contoso"))
    asyncio.run(runtime.ask("accounts", "which customer?"))
    [call] = runtime.last_turn_calls("accounts")
    assert (call.purpose, call.turn, call.model, call.reply) == ("accounts", 2, "OwnClient", "seen 4 message(s)")
    assert call.instructions == "You keep accounts." and call.messages[-1].text == "which customer?"
    report = asyncio.run(runtime.forget("customer"))
    assert report.removed["call log"] == 2  # it said the call log "held nothing"
    assert accounts.client.__class__ is OwnClient  # the user's agent keeps its own client object


def test_a_providers_own_call_is_shown_with_the_turn_that_caused_it_on_a_shared_or_separate_client():
    with LoopbackOpenAI() as server:
        shared = loopback_client(server)
        one = Agent(shared, "You help.", name="one", context_providers=[UserInfoMemory(client=shared)])
        other = loopback_client(server, "extractor")
        two = Agent(loopback_client(server), "You help.", name="two", context_providers=[UserInfoMemory(client=other)])
        runtime = runtime_over(one, two)
        for name in ("one", "two"):
            assert asyncio.run(runtime.ask(name, "my name is Ana; customer=Contoso")).ok
        recorded = len(runtime.calls.records())

        async def outside_a_turn() -> None:
            await shared.get_response([Message(role="user", contents=["hi"])])

        asyncio.run(outside_a_turn())
        assert len(runtime.calls.records()) == recorded  # the recorder on the user's client stays inert there
        asked = [r["model"] for r in server.requests]
    assert asked == ["smollm2", "smollm2", "smollm2", "extractor", "smollm2"]
    first, second = runtime.last_turn_calls("one"), runtime.last_turn_calls("two")
    assert [(c.purpose, c.model) for c in first] == [
        ("one", "OpenAIChatCompletionClient smollm2"),
        ("UserInfoMemory's own call", "OpenAIChatCompletionClient smollm2"),
    ]
    assert [(c.purpose, c.model) for c in second] == [
        ("two", "OpenAIChatCompletionClient smollm2"),
        ("UserInfoMemory's own call", "OpenAIChatCompletionClient extractor"),
    ]
    extraction = first[1]
    assert extraction.instructions == EXTRACT and extraction.finished and extraction.usage is not None
    assert extraction.messages[-1].role == "assistant"  # the conversation the provider sent, its answer last
    total = runtime.usage("one")
    assert total is not None and total == first[0].usage + extraction.usage  # counted in the pane's usage


def test_a_workflows_agents_calls_are_recorded_with_the_usage_their_server_reported():
    with LoopbackOpenAI() as server:
        drafter = Agent(loopback_client(server), "You draft.", name="drafter")
        checker = Agent(OwnClient(), "You check.", name="checker")  # no layer: neither block nor record
        flow = WorkflowBuilder(start_executor=drafter).add_edge(drafter, checker).build()
        runtime = runtime_over(workflows=[("pair", flow, None)])
        assert asyncio.run(runtime.ask("pair", "customer=Contoso")).ok
        assert asyncio.run(runtime.ask("pair", "which one?")).ok
        [request] = server.requests[-1:]
    [call] = runtime.last_turn_calls("pair")
    assert (call.purpose, call.model) == ("drafter", "OpenAIChatCompletionClient smollm2")
    assert call.usage is not None and call.usage.input_tokens
    sent = [m["content"] for m in request["messages"] if m["role"] == "user"]
    assert any('- customer = "Contoso"' in str(text) for text in sent)  # the facts block went to the server
    assert runtime.usage("pair") is None  # checker's calls are not known: not a partial sum
    assert runtime.unrecorded("pair") == (
        "the pair workflow's checker answer(s) on a client without Agent Framework's middleware layer, where the "
        "workbench can neither record a call nor add the facts block"
    )
    assert runtime.calls.total("pair") == Usage(
        sum(c.usage.input_tokens or 0 for c in runtime.calls.records(origin="pair") if c.usage),
        sum(c.usage.output_tokens or 0 for c in runtime.calls.records(origin="pair") if c.usage),
    )


@pytest.mark.parametrize("barrier", [True, False], ids=["barrier", "without-it"])
def test_a_providers_call_after_a_forget_its_turn_ran_through_leaves_no_record_holding_the_value(
    monkeypatch: pytest.MonkeyPatch, barrier: bool
) -> None:
    """The turn's provider calls its client once the forget has ended (in `after_run`, on the old
    session): the record of that call quotes the forgotten value, and the call log drops it when the
    turn ends, as every holder a turn may write to after a forget does (`Forgetting.again`)."""
    value = "Zoë North Ltd"
    forgot, held = asyncio.Event(), asyncio.Event()

    class Late(UserInfoMemory):
        async def after_run(self, **kwargs: Any) -> None:
            held.set()
            await forgot.wait()
            await super().after_run(**kwargs)

    client = ScriptedChatClient()
    runtime = runtime_over(Agent(client, "You help.", name="mine", context_providers=[Late(client=client)]))
    if not barrier:  # what the test would see without it: the record holding the value
        monkeypatch.setattr(type(runtime.forgetting), "turn_ended", lambda self, turn: [])

    async def story() -> None:
        turn = asyncio.create_task(runtime.ask("mine", f"customer={value}"))
        await held.wait()
        assert not (await runtime.forget("customer")).failures
        forgot.set()
        assert (await turn).ok

    asyncio.run(story())
    late = [c.purpose for c in runtime.calls.records()]
    assert late == ([] if barrier else ["Late's own call"])
    assert (residue([value], runtime) == {}) is barrier
