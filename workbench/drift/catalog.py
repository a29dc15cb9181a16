"""Every policy the lab compares, built over the same clients: the one place that knows them all."""

from __future__ import annotations

from collections.abc import Callable, Sequence

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
    ReducingHistoryProvider,
    SummaryPolicy,
    SummaryProvider,
)
from workbench.drift.recall_policy import build_recall_policies
from workbench.drift.yours_policy import build_your_policies
from workbench.loading import LoadedAgent
from workbench.memory import Contract, WorkingMemory
from workbench.runtime.agents import AGENT_NAMES, INSTRUCTIONS
from workbench.runtime.calls import CallLog, RecordingMiddleware
from workbench.runtime.models import ModelSet
from workbench.runtime.provider import WorkingMemoryProvider
from workbench.runtime.updater import MemoryUpdater
from workbench.runtime.writer import ModelWriter


def build_policies(
    models: ModelSet,
    calls: CallLog,
    *,
    contract: Contract,
    mem0: Mem0Config | None = None,
    yours: Sequence[LoadedAgent] = (),
) -> list[Policy]:
    """The policies over the same clients; every call is recorded under the policy's name. Each
    policy has a support and a logs agent with their own providers; the bounded facts are shared.
    `mem0` is Mem0's model and embedder (the Mem0 policy runs only with a live model and it). The
    user's own agents (`yours`) follow, on their own clients (`workbench.drift.yours_policy`)."""
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

    info = {p.name: p for p in POLICIES}
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
    updater = MemoryUpdater(memory, writer)
    facts_provider = WorkingMemoryProvider(memory, updater, origin="facts")
    window = SlidingWindowStrategy(keep_last_groups=2 * WINDOW_TURNS)
    return [
        Policy(info["full"], agents("full", lambda: [InMemoryHistoryProvider()])),
        Policy(info["window"], agents("window", lambda: [ReducingHistoryProvider()])),
        SummaryPolicy(
            info["summary"],
            agents("summary", lambda: [NoHistoryProvider(), SummaryProvider()]),
            agent("summarizer", [], SUMMARIZER_INSTRUCTIONS, purpose="summarizer"),
        ),
        FactsPolicy(info["facts"], agents("facts", lambda: [NoHistoryProvider(), facts_provider]), memory),
        Policy(
            info["compaction"],
            agents(
                "compaction",
                lambda: [
                    CompactedHistoryProvider(),
                    CompactionProvider(before_strategy=window, after_strategy=window),
                ],
            ),
        ),
        *build_recall_policies([info["recall"], info["recall_purged"]], agent, calls, contract),
        PersistedHistoryPolicy(info["persisted"], agent, contract),
        *build_agent_memory_policies([info["memory_files"], info["extracted"]], agent, contract),
        build_mem0_policy(info["mem0"], agent, mem0, contract),
        *build_your_policies(yours, models, calls, contract),
    ]
