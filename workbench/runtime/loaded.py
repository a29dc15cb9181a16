"""How the runtime runs an agent the user built (`workbench.loading`): as the user configured it, with
the workbench's working memory added.

The user's `Agent` is left as it is: the runtime runs a new `Agent` made from its public attributes
(client, instructions and options, tools, context providers, middleware), with the workbench's
context providers after the user's and its call recorder after the user's middleware. An agent with
no history provider of its own gets the runtime's (in memory, or `--persist`), as the framework
would give it an in-memory one.
"""

from __future__ import annotations

from collections.abc import Sequence

from agent_framework import (
    Agent,
    AgentSession,
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
    watching: Sequence[MiddlewareTypes] = (),
) -> Agent:
    """A new agent that runs as `agent` does, with `providers` after its own, `watching` after its
    middleware and `recording` last; on `client` instead of its own when one is given (the lab's `--model`)."""
    options = dict(agent.default_options)
    tools = [*options.pop("tools", []), *agent.mcp_tools]
    if client is not None:
        options.pop("model", None)  # the agent's own model belongs to its own client
    return Agent(
        client or agent.client,
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
    if isinstance(agent.client, RawScriptedChatClient):
        return SCRIPTED_LABEL
    model = agent.default_options.get("model") or getattr(agent.client, "model", None)
    kind = type(agent.client).__name__
    return f"{kind} {model}" if isinstance(model, str) and model else kind
