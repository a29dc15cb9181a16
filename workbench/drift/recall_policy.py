"""The sixth policy, retrieved history (seed 004): bounded facts' opposite. Every message goes into a
vector store; before each turn the most similar ones are recalled into the request, and nothing else
of the conversation is sent. Two variants show what a forget does: one never purges the store, the
other purges it with the product's forget."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence

from agent_framework import Agent, AgentSession, ContextProvider, Message

from workbench.build.builder import lab_forget
from workbench.drift.policies import NoHistoryProvider, Policy, PolicyInfo, Received
from workbench.memory import Contract, WorkingMemory
from workbench.memory.forget import ForgetPlan, TextHolder
from workbench.recall.embedders import lexical_embedder, logged_embedder
from workbench.recall.provider import Recalled, RecallProvider
from workbench.recall.records import RecallScope, StoredMessage
from workbench.recall.store import RecallStore
from workbench.runtime.agents import AGENT_NAMES, INSTRUCTIONS
from workbench.runtime.calls import CallLog

SCOPE = RecallScope(application_id="drift-lab", user_id="drift-user")


class RecallPolicy(Policy):
    """One policy's agents over their own in-memory vector store (the lab never touches the user's file)."""

    def __init__(
        self,
        info: PolicyInfo,
        agents: dict[str, Agent],
        store: RecallStore,
        kept: list[StoredMessage],
        tally: Counter[str],
        contract: Contract,
    ) -> None:
        super().__init__(info, agents)
        self.store = store
        self.kept = kept  # what the store holds, kept current by the provider and by forget
        self.tally = tally  # messages ever stored and recalled (a purge leaves `kept` shorter)
        # The purged variant runs the product's forget, its memory holding no fact: the plan comes from
        # what the stored messages declare. The other variant's forget is only words to it.
        stored = TextHolder("recall store", "stored message(s) deleted", lambda: [r.text for r in kept], self._purge)
        self.forgetting = lab_forget(WorkingMemory(contract), recall=stored) if info.name == "recall_purged" else None

    async def _purge(self, plan: ForgetPlan) -> int:
        purged = await self.store.erase(plan, SCOPE)
        self.kept[:] = await self.store.records(SCOPE)
        return purged.records

    async def forget(self, key: str | None) -> None:
        if self.forgetting is not None:
            await self.forgetting.forget(key)

    def retained(self) -> list[Message]:
        return [Message(role=r.role, contents=[r.text]) for r in self.kept]

    def received(self) -> Received:
        return Received(stored=self.tally["stored"], recalled=self.tally["recalled"])


# policy name, context providers, instructions
AgentFactory = Callable[[str, list[ContextProvider], str], Agent]


def build_recall_policies(
    infos: Sequence[PolicyInfo], agent: AgentFactory, calls: CallLog, contract: Contract
) -> list[Policy]:
    """Both variants, each with its own InMemoryStore shared by the support and logs agents (each stores
    under its own agent id; both search the whole user scope), on one embedder whose calls are logged."""
    embedder = logged_embedder(lexical_embedder(), calls)
    policies: list[Policy] = []
    for info in infos:
        store, kept, tally = RecallStore(), list[StoredMessage](), Counter[str]()

        def on_store(
            records: list[StoredMessage], kept: list[StoredMessage] = kept, tally: Counter[str] = tally
        ) -> None:
            kept.extend(records)
            tally["stored"] += len(records)

        def on_recall(_: AgentSession, recalled: list[Recalled], tally: Counter[str] = tally) -> None:
            tally["recalled"] += len(recalled)

        agents = {
            role: agent(
                info.name,
                [
                    NoHistoryProvider(),
                    RecallProvider(
                        store,
                        embedder,
                        storage_scope=RecallScope("drift-lab", role, "drift-user"),
                        search_scope=SCOPE,
                        on_store=on_store,
                        on_recall=on_recall,
                    ),
                ],
                INSTRUCTIONS[role],
            )
            for role in AGENT_NAMES
        }
        policies.append(RecallPolicy(info, agents, store, kept, tally, contract))
    return policies
