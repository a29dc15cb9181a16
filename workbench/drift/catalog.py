"""Every policy the lab compares, built over the same clients: the one place that knows them all."""

from __future__ import annotations

from collections.abc import Callable, Container, Iterable, Sequence

from agent_framework import Agent, CompactionProvider, ContextProvider, InMemoryHistoryProvider, SlidingWindowStrategy

from workbench.agentmem.mem0_config import Mem0Config
from workbench.drift.agentmem_policy import build_agent_memory_policies
from workbench.drift.mem0_policy import build_mem0_policy
from workbench.drift.persisted_policy import PersistedHistoryPolicy
from workbench.drift.policies import (
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
    agent_client, writer_client = models.agent_client, models.writer_client
    agent_label, writer_label = models.agent_label, models.writer_label

    def agent(name: str, providers: list[ContextProvider], instructions: str, purpose: str = "agent") -> Agent:
        summarizer = purpose == "summarizer"
        return Agent(
            writer_client if summarizer else agent_client,
            instructions,
            name=name,
            context_providers=providers,
            middleware=[
                RecordingMiddleware(calls, purpose, writer_label if summarizer else agent_label, timeout=models.timeout)
            ],
            default_options=models.reply_options,  # type: ignore[arg-type]
        )

    def agents(name: str, providers: Callable[[], list[ContextProvider]]) -> dict[str, Agent]:
        return {role: agent(name, providers(), INSTRUCTIONS[role]) for role in AGENT_NAMES}

    def facts(info: PolicyInfo) -> Policy:
        memory = WorkingMemory(contract)
        writer = ModelWriter(
            writer_client,
            calls,
            writer_label,
            timeout=models.timeout,
            writer_format=models.writer_format,
            bound=models.bound,
            contract=contract,
        )
        updater = MemoryUpdater(memory, writer, models.explain)
        provider = WorkingMemoryProvider(memory, updater, origin="facts")  # both agents'
        return FactsPolicy(info, agents(info.name, lambda: [NoHistoryProvider(), provider]), memory)

    def compaction(info: PolicyInfo) -> Policy:
        window = SlidingWindowStrategy(keep_last_groups=2 * WINDOW_TURNS)
        return Policy(
            info,
            agents(
                info.name,
                lambda: [CompactedHistoryProvider(), CompactionProvider(before_strategy=window, after_strategy=window)],
            ),
        )

    def each(build: Callable[[PolicyInfo], Policy]) -> Callable[[list[PolicyInfo]], list[Policy]]:
        return lambda infos: [build(info) for info in infos]

    # In the report's order; a builder of several policies is handed those of them to build.
    builders: list[tuple[tuple[str, ...], Callable[[list[PolicyInfo]], list[Policy]]]] = [
        (("full",), each(lambda info: Policy(info, agents(info.name, lambda: [InMemoryHistoryProvider()])))),
        (("window",), each(lambda info: Policy(info, agents(info.name, lambda: [ReducingHistoryProvider()])))),
        (
            ("summary",),
            each(
                lambda info: SummaryPolicy(
                    info,
                    agents(info.name, lambda: [NoHistoryProvider(), SummaryProvider()]),
                    agent("summarizer", [], SUMMARIZER_INSTRUCTIONS, purpose="summarizer"),
                )
            ),
        ),
        (("facts",), each(facts)),
        (("compaction",), each(compaction)),
        (("recall", "recall_purged"), lambda infos: build_recall_policies(infos, agent, calls, contract)),
        (("persisted",), each(lambda info: PersistedHistoryPolicy(info, agent, contract))),
        (("memory_files", "extracted"), lambda infos: build_agent_memory_policies(infos, agent, contract)),
        (("mem0",), each(lambda info: build_mem0_policy(info, agent, mem0, contract))),
    ]
    info = {p.name: p for p in POLICIES}
    policies: list[Policy] = []
    for group, build in builders:
        if wanted := [info[name] for name in group if names is None or name in names]:
            policies += build(wanted)
    return [*policies, *build_your_policies(yours, models, calls, contract, names, allow_your_stores=allow_your_stores)]
