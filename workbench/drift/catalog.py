"""Every policy the lab compares, built over the same clients: the one place that knows them all."""

from __future__ import annotations

from collections.abc import Callable, Container, Iterable, Sequence
from dataclasses import dataclass

from agent_framework import Agent, CompactionProvider, ContextProvider, InMemoryHistoryProvider, SlidingWindowStrategy

from workbench.agentmem.mem0_config import Mem0Config
from workbench.drift.agentmem_policy import build_agent_memory_policies
from workbench.drift.persisted_policy import PersistedHistoryPolicy
from workbench.drift.policies import (
    AGENT_MEMORY_ROWS,
    POLICIES,
    SUMMARIZER_INSTRUCTIONS,
    WINDOW_TURNS,
    CompactedHistoryProvider,
    FactsPolicy,
    NoHistoryProvider,
    Policy,
    PolicyInfo,
    ReducingHistoryProvider,
    SummaryPolicy,
    SummaryProvider,
)
from workbench.drift.recall_policy import build_recall_policies
from workbench.drift.yours_policy import build_your_policies, your_policy_names
from workbench.loading import LoadedAgent
from workbench.memory import Contract, WorkingMemory
from workbench.memory.shown import quoted
from workbench.runtime.agents import AGENT_NAMES, INSTRUCTIONS
from workbench.runtime.calls import CallLog, RecordingMiddleware
from workbench.runtime.models import ModelSet
from workbench.runtime.provider import WorkingMemoryProvider
from workbench.runtime.updater import MemoryUpdater
from workbench.runtime.writer import ModelWriter
from workbench.text import clip, visible


class UnknownPolicy(ValueError):
    """Policies asked for by a name no policy of this run has; the message names it and the known names."""


def policy_names(yours: Sequence[LoadedAgent] = ()) -> list[str]:
    """The name of every policy a run can compare, in the report's order: the built-in ones, then those
    of the user's agents (`yours`)."""
    return [*(p.name for p in POLICIES), *your_policy_names(yours)]


# The known names in an UnknownPolicy's line, at most (the user's agents' names are theirs, any length).
MAX_NAMES_CHARS = 600


def chosen_policies(names: Iterable[str] | None, yours: Sequence[LoadedAgent] = ()) -> frozenset[str] | None:
    """`names` checked against the run's policies (None: every policy); UnknownPolicy, one line, for the
    first name no policy has, or for none at all."""
    if names is None:
        return None
    asked, known = list(names), policy_names(yours)
    listed = visible(clip(", ".join(known), MAX_NAMES_CHARS))
    if not asked:
        raise UnknownPolicy(f"names no policy; the policies: {listed}")
    for name in asked:
        if name not in known:
            raise UnknownPolicy(f"no policy is named {quoted(name, 40)}; the policies: {listed}")
    return frozenset(asked)


def build_policies(
    models: ModelSet,
    calls: CallLog,
    *,
    contract: Contract,
    mem0: Mem0Config | None = None,
    yours: Sequence[LoadedAgent] = (),
    names: Container[str] | None = None,
    allow_your_stores: bool = False,
) -> list[Policy]:
    """The policies over the same clients; every call is recorded under the policy's name. Each
    policy has a support and a logs agent with their own providers. `mem0` is Mem0's model and
    embedder (the Mem0 policy runs only with a live model and it). The user's own agents (`yours`)
    follow, on their own clients (`workbench.drift.yours_policy`). With `names` (`chosen_policies`),
    only the policies named there are built; `allow_your_stores`: `build_your_policies`'."""
    info = {p.name: p for p in POLICIES}
    policies: list[Policy] = []
    for group, build in _BuiltIn(models, calls, contract, mem0).builders():
        if wanted := [info[name] for name in group if names is None or name in names]:
            policies += build(wanted)
    return [*policies, *build_your_policies(yours, models, calls, contract, names, allow_your_stores=allow_your_stores)]


# The names of the policies one builder makes, and the builder, handed those of them to build.
_Builder = tuple[tuple[str, ...], Callable[[list[PolicyInfo]], list[Policy]]]


@dataclass(frozen=True)
class _BuiltIn:
    """The lab's own policies, each built over the run's clients, its call log and its contract."""

    models: ModelSet
    calls: CallLog
    contract: Contract
    mem0: Mem0Config | None

    def builders(self) -> list[_Builder]:
        """In the report's order."""

        def each(build: Callable[[PolicyInfo], Policy]) -> Callable[[list[PolicyInfo]], list[Policy]]:
            return lambda infos: [build(info) for info in infos]

        return [
            (("full",), each(self.full)),
            (("window",), each(self.window)),
            (("summary",), each(self.summary)),
            (("facts",), each(self.facts)),
            (("compaction",), each(self.compaction)),
            (
                ("recall", "recall_purged"),
                lambda infos: build_recall_policies(infos, self.agent, self.calls, self.contract),
            ),
            (("persisted",), each(lambda info: PersistedHistoryPolicy(info, self.agent, self.contract))),
            (
                AGENT_MEMORY_ROWS,  # those of `workbench.agentmem.config.AGENT_MEMORIES`, in its order
                lambda infos: build_agent_memory_policies(infos, self.agent, self.contract, self.mem0),
            ),
        ]

    def agent(self, name: str, providers: list[ContextProvider], instructions: str, purpose: str = "agent") -> Agent:
        """An agent whose calls are recorded under `purpose`; a summarizer's go to the writer's client."""
        models = self.models
        summarizer = purpose == "summarizer"
        return Agent(
            models.writer_client if summarizer else models.agent_client,
            instructions,
            name=name,
            context_providers=providers,
            middleware=[
                RecordingMiddleware(
                    self.calls,
                    purpose,
                    models.writer_label if summarizer else models.agent_label,
                    timeout=models.timeout,
                )
            ],
            default_options=models.reply_options,  # type: ignore[arg-type]
        )

    def agents(self, name: str, providers: Callable[[], list[ContextProvider]]) -> dict[str, Agent]:
        return {role: self.agent(name, providers(), INSTRUCTIONS[role]) for role in AGENT_NAMES}

    def full(self, info: PolicyInfo) -> Policy:
        return Policy(info, self.agents(info.name, lambda: [InMemoryHistoryProvider()]))

    def window(self, info: PolicyInfo) -> Policy:
        return Policy(info, self.agents(info.name, lambda: [ReducingHistoryProvider()]))

    def summary(self, info: PolicyInfo) -> Policy:
        return SummaryPolicy(
            info,
            self.agents(info.name, lambda: [NoHistoryProvider(), SummaryProvider()]),
            self.agent("summarizer", [], SUMMARIZER_INSTRUCTIONS, purpose="summarizer"),
        )

    def facts(self, info: PolicyInfo) -> Policy:
        memory = WorkingMemory(self.contract)
        writer = ModelWriter.on(self.models, self.calls, contract=self.contract)
        updater = MemoryUpdater(memory, writer, self.models.explain)
        provider = WorkingMemoryProvider(memory, updater, origin="facts")  # both agents'
        return FactsPolicy(info, self.agents(info.name, lambda: [NoHistoryProvider(), provider]), memory)

    def compaction(self, info: PolicyInfo) -> Policy:
        window = SlidingWindowStrategy(keep_last_groups=2 * WINDOW_TURNS)
        return Policy(
            info,
            self.agents(
                info.name,
                lambda: [CompactedHistoryProvider(), CompactionProvider(before_strategy=window, after_strategy=window)],
            ),
        )
