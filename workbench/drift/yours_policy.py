"""The user's own agents as lab policies (`workbench drift PATH`), beside the built-in policies and
scored the same way, each in two rows:

- **as configured**: the agent as its author built it (its client, instructions, tools, history and
  memories, `workbench.runtime.loaded.derived`), in new sessions; a request to forget reaches it
  only as words, as it does every policy without a forget of its own;
- **in the workbench**: the same agent with the working memory as a context provider and the host's
  parse as the writer, as the app runs it; a forget is the product's on the facts and the sessions
  (replaced by new ones: their in-memory history goes with them). Unlike the app's, it leaves the
  stores the agents keep on disk or on a server alone.

Its memories receive the chronology's messages as they would in any conversation, on stores of the
lab's own, each row its own, made from the user's when the row is built and removed when the lab closes
it (`workbench.drift.copies`): the lab never writes into the user's stores. An agent with a memory the lab
cannot redirect is run only when the user allows it to write there (`allow_your_stores`), else its rows
say why they did not run. One pair of rows per agent, both chronology roles (support and logs) on its two
sessions; or, when the agents are named as the chronology's roles, one pair of them all, each role on its
agent."""

from __future__ import annotations

from collections.abc import Container, Sequence
from dataclasses import replace

from agent_framework import Agent, ContextProvider, InMemoryHistoryProvider, Message

from workbench.chronology_file import AGENTS
from workbench.drift.copies import LabStores, withheld
from workbench.drift.policies import AgentInfo, FactsPolicy, Policy, PolicyInfo, Removal
from workbench.loading import LoadedAgent
from workbench.memory import Contract, WorkingMemory
from workbench.runtime.calls import CallLog, RecordingMiddleware
from workbench.runtime.holders import agent_sessions
from workbench.runtime.loaded import client_label, derived, in_memory_messages, own_history
from workbench.runtime.models import ModelSet
from workbench.runtime.provider import WorkingMemoryProvider
from workbench.runtime.updater import MemoryUpdater
from workbench.runtime.writer import HostWriter

PREFIX = "yours:"  # a policy of the user's agents; no built-in policy's name starts with it


def memory_names(agent: Agent) -> str:
    """The context providers the agent brings, by class, as the report names its memories."""
    names = [type(p).__name__ for p in agent.context_providers]
    return ", ".join(names) if names else "none: the framework's in-memory history"


def in_memory_history(policy: Policy) -> list[Message]:
    """What a policy's agents' in-memory histories hold; a history they keep elsewhere is on disk or on
    a server, counted by the memory that keeps it (`LabStores.messages`), not here."""
    return [m for role, agent in policy.agents.items() for m in in_memory_messages(agent, policy.agent_sessions[role])]


class _OnLabStores(Policy):
    """A row of the user's agents on the lab's stores (`stores`): what it retained is what its histories
    hold for its current sessions, there and in memory; its bytes on disk are its copies' now, measured
    before they are removed; closing removes them, and says what it removed."""

    stores: LabStores

    async def retained_now(self) -> list[Message]:
        kept = in_memory_history(self)
        for role, agent in self.agents.items():
            kept += await self.stores.messages(agent, self.agent_sessions[role])
        return kept

    def on_disk(self) -> int | None:
        return self.stores.on_disk()

    async def close(self) -> None:
        await self.stores.close()

    def removed(self) -> list[Removal]:
        return self.stores.removed()


class YourAgentsPolicy(_OnLabStores):
    """The user's agents by chronology role, as configured."""

    def __init__(self, info: PolicyInfo, agents: dict[str, Agent], stores: LabStores) -> None:
        super().__init__(info, agents)
        self.stores = stores

    def retained(self) -> list[Message]:
        return in_memory_history(self)


class YourAgentsInWorkbench(FactsPolicy, _OnLabStores):
    """The user's agents with the working memory, as the app runs them, and the product's forget."""

    def __init__(self, info: PolicyInfo, agents: dict[str, Agent], memory: WorkingMemory, stores: LabStores) -> None:
        """Its forget reaches the facts and the sessions (their in-memory history), not the stores the
        agents keep."""
        holder = agent_sessions(self._texts, self._new_agent_sessions)
        super().__init__(info, agents, memory, [holder])
        self.stores = stores

    def _texts(self) -> list[str]:
        return [m.text or "" for m in self.retained()]

    def _new_agent_sessions(self, _: object) -> int:
        dropped = len(self.retained())
        self.agent_sessions = {role: agent.create_session() for role, agent in self.agents.items()}
        return dropped

    def retained(self) -> list[Message]:
        return in_memory_history(self)


def _label(item: LoadedAgent, models: ModelSet) -> str:
    """The model that answers the agent in the lab: its own client's (class and model), or the lab's
    with `--model`."""
    return client_label(item.agent) if models.scripted else models.agent_label


def _built(
    roles: dict[str, LoadedAgent],
    added: list[ContextProvider],
    models: ModelSet,
    calls: CallLog,
    stores: LabStores,
) -> dict[str, Agent]:
    """Each role's agent as its author built it, its memories on the lab's `stores`, with `added` after its
    providers, recorded by the lab; on the lab's model when `--model` names one, else on its own client."""
    built: dict[str, Agent] = {}
    for role, item in roles.items():
        recording = RecordingMiddleware(calls, "agent", _label(item, models), timeout=models.timeout)
        extra = [*([] if own_history(item.agent) else [InMemoryHistoryProvider()]), *added]
        on = None if models.scripted else models.agent_client
        agent = derived(item.agent, extra, recording, on, bound=models.reply_options)
        own = len(item.agent.context_providers)  # `derived` puts the agent's own first, in its order
        agent.context_providers[:own] = [stores.provider(p) for p in item.agent.context_providers]
        stores.unstored(agent, item.agent)  # its service keeps nothing of the lab's (`copies.unstored`)
        built[role] = agent
    return built


def _described(roles: dict[str, LoadedAgent], models: ModelSet, stores: LabStores) -> tuple[AgentInfo, ...]:
    return tuple(
        AgentInfo(item.name, _label(item, models), stores.describe(item.agent))
        for item in dict.fromkeys(roles.values())
    )


def _groups(agents: Sequence[LoadedAgent]) -> list[dict[str, LoadedAgent]]:
    """The agents by chronology role, one group per pair of rows (see the module's docstring)."""
    by_name = {item.name: item for item in agents}
    if set(AGENTS) <= set(by_name):
        return [{role: by_name[role] for role in AGENTS}]
    return [dict.fromkeys(AGENTS, item) for item in agents]


def _named(roles: dict[str, LoadedAgent]) -> list[str]:
    return list(dict.fromkeys(item.name for item in roles.values()))


def _row_names(named: list[str]) -> tuple[str, str]:
    """The names of a group's two rows: as configured, and in the workbench."""
    configured = f"{PREFIX}{'+'.join(named)}"
    return configured, f"{configured}+facts"


def your_policy_names(agents: Sequence[LoadedAgent]) -> list[str]:
    """The names of the lab's policies of the user's agents, in the report's order, without building them."""
    return [name for roles in _groups(agents) for name in _row_names(_named(roles))]


def build_your_policies(
    agents: Sequence[LoadedAgent],
    models: ModelSet,
    calls: CallLog,
    contract: Contract,
    names: Container[str] | None = None,
    *,
    allow_your_stores: bool = False,
) -> list[Policy]:
    """The lab's policies of the user's agents (see the module's docstring), their facts under `contract`;
    with `names`, only the rows named there are built. Each row's memories on stores of the lab's own; a
    row whose agents carry a memory the lab cannot redirect is run, on the user's own store, only with
    `allow_your_stores`, and otherwise built with nothing to run and the reason (`PolicyInfo.withheld`)."""
    policies: list[Policy] = []
    for roles in _groups(agents):
        named = _named(roles)
        configured, in_workbench = _row_names(named)
        title = f"your agent{'s' if len(named) > 1 else ''} {', '.join(named)}"
        refused = "" if allow_your_stores else withheld([item.agent for item in dict.fromkeys(roles.values())])
        memories = "; ".join(f"{item.name}: {memory_names(item.agent)}" for item in dict.fromkeys(roles.values()))
        kept = f"its memories ({memories}) receive the chronology's messages and keep them, on stores of the lab's own"
        if names is None or configured in names:
            info = PolicyInfo(configured, f"{title}, as configured", f"as you configured it; {kept}", withheld=refused)
            if refused:
                policies.append(Policy(info, {}))
            else:
                stores = LabStores()
                agents_run = _built(roles, [], models, calls, stores)
                info = replace(info, agents=_described(roles, models, stores))
                policies.append(YourAgentsPolicy(info, agents_run, stores))
        if names is None or in_workbench in names:
            info = PolicyInfo(
                in_workbench,
                f"{title}, in the workbench",
                f"with the working memory (host parse) as the app adds it; {kept}; the product's forget removes "
                "the facts and replaces its sessions (the lab leaves your agents' stores alone)",
                withheld=refused,
            )
            if refused:
                policies.append(Policy(info, {}))
                continue
            stores = LabStores()
            memory = WorkingMemory(contract)
            facts = WorkingMemoryProvider(memory, MemoryUpdater(memory, HostWriter()), origin="facts")
            agents_run = _built(roles, [facts], models, calls, stores)
            info = replace(info, agents=_described(roles, models, stores))
            policies.append(YourAgentsInWorkbench(info, agents_run, memory, stores))
    return policies
