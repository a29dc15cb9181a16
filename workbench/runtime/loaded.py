"""How the runtime runs an agent the user built (`workbench.loading`): as the user configured it, with
the workbench's working memory added.

The user's `Agent` is left as it is: the runtime runs a new `Agent` made from its public attributes
(client, instructions and options, tools, context providers, middleware), with the workbench's
context providers after the user's and its call recorder after the user's middleware. An agent with
no history provider of its own gets the runtime's (in memory, or `--persist`), as the framework
would give it an in-memory one.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from agent_framework import (
    Agent,
    AgentSession,
    BaseChatClient,
    ChatMiddlewareLayer,
    ContextProvider,
    HistoryProvider,
    InMemoryHistoryProvider,
    Message,
    MiddlewareTypes,
    SupportsChatGetResponse,
)

from workbench.runtime.scripted import SCRIPTED_LABEL, RawScriptedChatClient


def own_history(agent: Agent) -> bool:
    """Whether the agent brings a history provider that loads its messages."""
    return any(isinstance(p, HistoryProvider) and p.load_messages for p in agent.context_providers)


def derived(
    agent: Agent,
    providers: Sequence[ContextProvider],
    recording: MiddlewareTypes,
    client: SupportsChatGetResponse | None = None,
    *,
    bound: Mapping[str, Any] | None = None,
    watching: Sequence[MiddlewareTypes] = (),
) -> Agent:
    """A new agent that runs as `agent` does, with `providers` after its own, `watching` after its
    middleware and `recording` last; on `client` instead of its own when one is given (the run's
    `--model`), its replies then bounded by `bound` (the run's `--max-tokens` options, `reply_options`),
    as the built-in agents' are on that model: unbounded, a small model that loops generated thousands
    of tokens a reply, minutes each, until the call timed out."""
    options = dict(agent.default_options)
    tools = [*options.pop("tools", []), *agent.mcp_tools]
    if client is not None:
        options.pop("model", None)  # the agent's own model belongs to its own client
        run = dict(bound or {})
        if isinstance(run.get("extra_body"), Mapping) and isinstance(options.get("extra_body"), Mapping):
            run["extra_body"] = {**options["extra_body"], **run["extra_body"]}  # the user's other fields stay
        options |= run
    return Agent(
        client or layered(agent.client),
        id=agent.id,
        name=agent.name,
        description=agent.description,
        tools=tools or None,
        default_options=options,  # type: ignore[arg-type]
        context_providers=[*agent.context_providers, *providers],
        middleware=[*(agent.middleware or []), *watching, recording],
        require_per_service_call_history_persistence=agent.require_per_service_call_history_persistence,
        compaction_strategy=agent.compaction_strategy,
        tokenizer=agent.tokenizer,
        additional_properties=dict(agent.additional_properties),
    )


def in_memory_messages(agent: Agent, session: AgentSession) -> list[Message]:
    """What the agent's in-memory history providers hold for `session` (their messages live in its state)."""
    messages: list[Message] = []
    for provider in agent.context_providers:
        if isinstance(provider, InMemoryHistoryProvider):
            messages += session.state.get(provider.source_id, {}).get("messages", [])
    return messages


def client_label(agent: Agent) -> str:
    """The user's agent's model as the header shows it: the client's class and its model, if it says
    (the built-in model says it qualifies no model)."""
    return label_of(agent.client, agent.default_options.get("model"))


def label_of(client: object, model: object = None) -> str:
    """A chat client as the header and F2 name it: its class and its model (`model`, else its own)."""
    if isinstance(client, RawScriptedChatClient):
        return SCRIPTED_LABEL
    model = model or getattr(client, "model", None)
    kind = type(client).__name__
    return f"{kind} {model}" if isinstance(model, str) and model else kind


def layered(client: SupportsChatGetResponse) -> SupportsChatGetResponse:
    """`client`, or, when it lacks Agent Framework's middleware layer (a `BaseChatClient` subclass of the
    user's without it), `client` behind one: the framework hands an agent's chat middleware, the
    workbench's call recorder among them, only to a client that has the layer, so F2 showed no call of
    an agent on such a client."""
    if isinstance(client, ChatMiddlewareLayer) or not isinstance(client, BaseChatClient):
        return client
    return _Layered(client)


class _Layered(ChatMiddlewareLayer[Any], BaseChatClient[Any]):
    """The user's client behind the middleware layer: each call goes to it as the agent would make it."""

    def __init__(self, inner: BaseChatClient[Any]) -> None:
        super().__init__()
        self.inner = inner
        self.model = getattr(inner, "model", None)

    def _inner_get_response(self, *, messages: Any, stream: bool, options: Any, **kwargs: Any) -> Any:
        if stream:
            return self.inner.get_response(messages, stream=True, options=options, client_kwargs=kwargs)
        return self.inner.get_response(messages, stream=False, options=options, client_kwargs=kwargs)


def provider_clients(agent: Agent) -> Iterator[tuple[SupportsChatGetResponse, str]]:
    """Each chat client a context provider of `agent` holds (an attribute, or an item of a list, tuple or
    dict attribute), with the provider's class: the client its own model calls go to (the framework's
    sample keeps it as `self._chat_client`). Attributes only, read without running its code."""
    for provider in agent.context_providers:
        for value in list(getattr(provider, "__dict__", {}).values()):
            items = value.values() if isinstance(value, dict) else value if isinstance(value, list | tuple) else [value]
            for item in items:
                if isinstance(item, BaseChatClient):
                    yield item, type(provider).__name__
