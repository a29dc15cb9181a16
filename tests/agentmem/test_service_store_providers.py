"""A context provider's own model call on a client that keeps what it is sent on the model service: the
framework's `simple_context_provider.py` sample asks its chat client to extract the user's name and age,
with `store` unset, after each run. On `OpenAIChatClient` (the Responses API) the service keeps that
response, which quotes the whole conversation. Its id is recorded beside the agent's own (a shared
client: the agent's store) or in a store of the provider's client (a separate one), listed in F3, named
in the forget's question, deleted by the forget and checked gone. Real calls to the loopback Responses
server (`tests/support/responses_server.py`), which keeps every response it is not told not to keep."""

from __future__ import annotations

import asyncio
from typing import Any

from agent_framework import Agent
from agent_framework_openai import OpenAIChatClient

from tests.support.residue import residue
from tests.support.responses_server import KEY, LoopbackResponses
from tests.support.sample_providers import EXTRACT, UserInfoMemory
from workbench.runtime import ModelConfig, build_models
from workbench.runtime.config import Mode, WriterKind
from workbench.runtime.service_store import ServiceStore
from workbench.session.assemble import assemble

VALUE = "Contoso Ltd 7731"
AGENTS = "accounts: the service's store (OpenAIChatClient)"
OWN = "accounts: UserInfoMemory's own calls, the service's store (OpenAIChatClient)"


def client(service: LoopbackResponses, model: str = "gpt-loopback") -> OpenAIChatClient:
    return OpenAIChatClient(model=model, base_url=service.base_url, api_key=KEY)


def session_over(agent: Agent) -> Any:
    return assemble(build_models(ModelConfig()), agents=[agent], mode=Mode.PROVIDER, writer=WriterKind.HOST)


def created(service: LoopbackResponses) -> list[tuple[str, dict[str, Any]]]:
    """Each response the service was asked to create: its model and what the request said of storing."""
    return [
        (b["model"], {k: b[k] for k in ("store", "previous_response_id") if k in b})
        for m, p, b in service.requests
        if m == "POST" and p.endswith("/responses") and b is not None
    ]


async def listed(runtime: Any, name: str) -> Any:
    return next(s for s in (await runtime.remembered()).systems if s.name == name)


def test_on_the_agents_own_client_the_providers_stored_response_is_listed_and_deleted_with_the_agents():
    """Before, the forget deleted the agent's response and left the extraction's on the service, holding
    the value, and exited 0 saying nothing of it."""
    with LoopbackResponses() as service:
        shared = client(service)
        agent = Agent(shared, "You help.", name="accounts", context_providers=[UserInfoMemory(client=shared)])
        session = session_over(agent)
        runtime = session.runtime
        assert [m.name for m in runtime.memories if isinstance(m, ServiceStore)] == [AGENTS]  # one store: one client

        async def story() -> None:
            assert (await runtime.ask("accounts", f"customer={VALUE}")).ok
            assert created(service) == [("gpt-loopback", {}), ("gpt-loopback", {})]  # both with store unset
            kept = list(service.state.responses)
            assert len(kept) == 2 and all(VALUE in str(service.state.responses[i].input) for i in kept)

            store = await listed(runtime, AGENTS)
            stored = [i for i in store.items if i.kind == "stored"]
            assert [i.name for i in stored] == kept and all(i.keys == ("customer",) for i in stored)
            assert f"instructions: {EXTRACT}" in stored[1].content  # the extraction, as it was sent
            [looked] = [i for i in store.items if i.kind == "looked"]
            assert "2 request(s), 2 with store unset,\n1 of them a context provider's own call" in looked.content

            preview = await session.forget_preview(["customer"])
            [said] = [r for r in preview.reaches if r.startswith(AGENTS)]
            assert (
                f"deletes 2 id(s) there with the agent's own client and key, then asks for each again: {kept[0]}, {kept[1]}"
                in said
            )

            report = await runtime.forget("customer")
            assert report.failures == {} and report.unreached == {}, report
            assert report.outcomes[AGENTS] == dict.fromkeys(kept, "deleted, verified gone (asked again: 404)")
            assert service.state.responses == {} and not any(VALUE in t for t in service.state.texts())
            assert residue([VALUE], runtime) == {}

            # The workbench's own record is not the provider's memory: its walk of the provider's attributes
            # (client, middleware) neither named it nor took the recorder out of the user's client.
            provider = await listed(runtime, "accounts: UserInfoMemory")
            assert not any("chat_middleware" in i.name for i in provider.items)
            assert [type(m).__name__ for m in shared.chat_middleware] == ["ClientCalls"]
            assert (await runtime.ask("accounts", "hello again")).ok
            again = [i.name for i in (await listed(runtime, AGENTS)).items if i.kind == "stored"]
            assert again == list(service.state.responses) and len(again) == 2  # both calls recorded again

        asyncio.run(story())


def test_on_a_client_of_its_own_the_providers_calls_get_a_store_of_that_client_reached_by_the_forget():
    with LoopbackResponses() as service:
        own = client(service, "extractor")
        agent = Agent(client(service), "You help.", name="accounts", context_providers=[UserInfoMemory(client=own)])
        session = session_over(agent)
        runtime = session.runtime

        async def story() -> None:
            assert (await runtime.ask("accounts", f"customer={VALUE}")).ok
            assert [m for m, _ in created(service)] == ["gpt-loopback", "extractor"]
            first, second = service.state.responses
            assert [i.name for i in (await listed(runtime, AGENTS)).items if i.kind == "stored"] == [first]
            store = await listed(runtime, OWN)
            assert store.location == f"{service.base_url}/ (the model service)"
            assert "UserInfoMemory calls OpenAIChatClient itself, which leaves store unset" in store.description
            [stored] = [i for i in store.items if i.kind == "stored"]
            assert stored.name == second and stored.keys == ("customer",)
            [looked] = [i for i in store.items if i.kind == "looked"]
            assert "from the calls UserInfoMemory makes itself during accounts's turns: 1 request(s)" in looked.content

            preview = await session.forget_preview(["customer"])
            assert any(r.startswith(OWN) and second in r for r in preview.reaches)
            report = await runtime.forget("customer")
            assert report.failures == {} and report.unreached == {}, report
            assert report.outcomes[OWN] == {second: "deleted, verified gone (asked again: 404)"}
            assert service.state.responses == {} and not any(VALUE in t for t in service.state.texts())
            assert "UserInfoMemory of accounts calls itself" not in report.describe()
            assert residue([VALUE], runtime) == {}

        asyncio.run(story())


def test_a_providers_call_after_a_forget_its_turn_ran_through_is_deleted_when_the_turn_ends():
    """The turn's provider calls its client once the forget has ended, on the old session: the response the
    service keeps of it quotes the forgotten value, and is deleted when the turn ends (`Forgetting.again`)."""
    forgot, held = asyncio.Event(), asyncio.Event()

    class Late(UserInfoMemory):
        async def after_run(self, **kwargs: Any) -> None:
            held.set()
            await forgot.wait()
            await super().after_run(**kwargs)

    with LoopbackResponses() as service:
        shared = client(service)
        runtime = session_over(
            Agent(shared, "You help.", name="accounts", context_providers=[Late(client=shared)])
        ).runtime

        async def story() -> None:
            turn = asyncio.create_task(runtime.ask("accounts", f"customer={VALUE}"))
            await held.wait()
            assert not (await runtime.forget("customer")).failures
            assert service.state.responses == {}  # the agent's answer, deleted
            forgot.set()
            assert (await turn).ok
            assert len(created(service)) == 2  # the extraction was made after the forget
            assert service.state.responses == {} and not any(VALUE in t for t in service.state.texts())

        asyncio.run(story())


def test_the_loopback_server_streams_a_response_format_as_openai_does():
    """The framework's OpenAIChatClient streams a request with a response format through the openai SDK's
    stream helper, which refused the server's deltas before their output item ("Received a content event
    for output index 0 before receiving its output item") and its non-JSON text: the samples' Content
    Review Workflow failed on the loopback server with ChatClientException at its reviewer."""
    from agent_framework import Message
    from pydantic import BaseModel

    class Review(BaseModel):
        score: int
        feedback: str

    with LoopbackResponses() as service:

        async def ask() -> Any:
            stream = client(service).get_response(
                [Message(role="user", contents=["review this"])], stream=True, options={"response_format": Review}
            )
            return await stream.get_final_response()

        response = asyncio.run(ask())
        [kept] = service.state.responses
    assert isinstance(response.value, Review) and response.value.score == 1
    assert response.response_id == kept
