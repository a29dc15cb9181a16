"""What a model service keeps of the user's agents' conversations, watched where a pane's own recording
does not reach: the calls a context provider makes on a client of its own, and a workflow's agent
executors' calls. Each is handed to the store of that client or agent (`ServiceStore`), so the ids the
service keeps are listed and a forget deletes them."""

from __future__ import annotations

from collections.abc import Collection, Sequence

from agent_framework import Agent, ChatMiddlewareLayer

from workbench.runtime.calls import ClientCalls
from workbench.runtime.loaded import label_of, provider_clients
from workbench.runtime.memories import AgentMemory
from workbench.runtime.service_store import AgentSessionsOf, ServiceStore
from workbench.runtime.workflows import WorkflowPane


def attach_stores(
    memories: Sequence[AgentMemory],
    agents: Collection[str],
    agent_sessions: AgentSessionsOf,
    *,
    on_own_client: bool,
    persisted: bool,
) -> dict[str, ServiceStore]:
    """The stores of what the model service keeps of the user's `agents`' conversations, each attached to
    the `agent_sessions`; returns those recorded from the agent's calls, by agent: when it answers on its own
    client (`on_own_client`; on the run's `--model`, nothing of this run goes to its service)."""
    on_service = [m for m in memories if isinstance(m, ServiceStore) and m.agent in agents]
    # (A store of the client a provider calls itself records those calls whatever the agent answers on.)
    recorded = {m.agent: m for m in on_service if not m.holder and on_own_client}
    for store in on_service:
        by_calls = bool(store.holder) or store.agent in recorded
        store.attach(agent_sessions, recorded=by_calls, persisted=persisted)
    return recorded


def watch_service_calls(
    workflows: Collection[WorkflowPane], agents: Sequence[Agent], memories: Sequence[AgentMemory]
) -> None:
    """The calls a pane's recording does not reach, watched for the service's stores: a workflow's agent
    executors', and those of the user's `agents`' (and the workflows' agents') context providers on
    clients of their own."""
    _watch_workflows(workflows, memories)
    in_flows = [e.agent for f in workflows for e in f.executors() if isinstance(e.agent, Agent)]
    _record_provider_calls([*agents, *in_flows], [m for m in memories if isinstance(m, ServiceStore)])


def _record_provider_calls(agents: Sequence[Agent], stores: Sequence[ServiceStore]) -> None:
    """Each chat client a context provider of the user's agents holds records the provider's own calls
    during a pane's turn (`ClientCalls`, added to the client's own middleware list: it does nothing
    outside a turn). A client without the framework's middleware layer cannot take it. A client that keeps
    what it is sent on the model service hands those calls to the store of that client (`stores`: the
    agent's own, or one for the provider's client), so their ids are listed and a forget deletes them."""
    of_client = {id(store.client): store for store in stores}
    for agent in agents:
        for client, holder in provider_clients(agent):
            on = client.chat_middleware if isinstance(client, ChatMiddlewareLayer) else None
            if on is None:
                continue
            store = of_client.get(id(client))
            watch = store.recorder().ended if store is not None else None
            present = next((m for m in on if isinstance(m, ClientCalls)), None)
            if present is None:
                on.append(ClientCalls(f"{holder}'s own call", label_of(client), watch))
            else:  # an earlier runtime's (a restart over the same agents): this runtime's store records
                present.watch = watch


def _watch_workflows(workflows: Collection[WorkflowPane], memories: Sequence[AgentMemory]) -> None:
    """An agent a workflow runs, whose service keeps its conversation: its executor's calls are watched
    by its store's recorder, as a pane's agent's are (but on a client without the middleware layer,
    where nothing of the workbench's reaches its calls: its store says so)."""
    stores = {m.agent: m for m in memories if isinstance(m, ServiceStore) and not m.holder}
    for flow in workflows:
        unlayered = set(flow.unlayered())
        for executor in flow.executors():
            store = stores.get(executor.agent.name or "") if isinstance(executor.agent, Agent) else None
            if store is None or executor.id in unlayered:
                continue
            flow.watchers[executor.id] = store.recorder()
            if flow.name not in store.workflows:
                store.runs_inside(flow.name, flow.session_ids)
