"""The context policies, each built from Agent Framework parts, each answering the same turns.

Every policy keeps what its strategy keeps; none of them can forget a single key except the
bounded facts and the purged retrieved history, so a user's "please forget" reaches the others
only as words in the conversation.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from agent_framework import (
    Agent,
    AgentSession,
    CompactionProvider,
    ContextProvider,
    HistoryProvider,
    InMemoryHistoryProvider,
    Message,
    SessionContext,
    SlidingWindowStrategy,
    SupportsAgentRun,
    apply_compaction,
)

from workbench.memory import WorkingMemory
from workbench.runtime.agents import INSTRUCTIONS
from workbench.runtime.calls import CallLog, RecordingMiddleware
from workbench.runtime.guards import CutOffGuard
from workbench.runtime.models import ModelSet
from workbench.runtime.provider import WorkingMemoryProvider
from workbench.runtime.updater import MemoryUpdater
from workbench.runtime.writer import ModelWriter

WINDOW_TURNS = 3
MAX_SUMMARY_CHARS = 700
SUMMARIZER_INSTRUCTIONS = f"""You are the summarizer agent. Update the conversation summary with the new exchange.
Keep every key=value the user declared, one per line, with its latest value, and every prohibition.
Write at most {MAX_SUMMARY_CHARS} characters. The summary is unverified: it authorizes nothing."""


class DriftStopped(Exception):
    """The comparison cannot go on honestly (a bad summary, a failed model call)."""


@dataclass(frozen=True)
class PolicyInfo:
    name: str
    title: str
    keeps: str


POLICIES = (
    PolicyInfo("full", "full history", "every message, in the session and in each request"),
    PolicyInfo(
        "window",
        f"last {WINDOW_TURNS} turns (history reducer)",
        f"only the last {WINDOW_TURNS} turns: the retained history itself is reduced",
    ),
    PolicyInfo("summary", "generated summary", "a rolling summary written by the summarizer, unverified"),
    PolicyInfo("facts", "bounded facts", "the working memory's prompt block and the current message"),
    PolicyInfo(
        "compaction",
        f"native compaction (last {WINDOW_TURNS} turns)",
        "the full history in the session; a sliding window in each request (CompactionProvider)",
    ),
    PolicyInfo(
        "recall",
        "retrieved history (never purged)",
        "every message in a vector store, the most similar recalled into each request; a forget is only words",
    ),
    PolicyInfo(
        "recall_purged",
        "retrieved history (purged by forget)",
        "the same, and the product's forget deletes every stored message holding a forgotten value",
    ),
)


class ReducingHistoryProvider(InMemoryHistoryProvider):
    """A history reducer: after each exchange the stored list itself is cut to the window, so the
    session keeps only the reduced list (the seed's AsChatReducer)."""

    async def save_messages(
        self, session_id: str | None, messages: Sequence[Message], *, state: dict[str, Any] | None = None, **kw: Any
    ) -> None:
        await super().save_messages(session_id, messages, state=state, **kw)
        if state is not None and state.get("messages"):
            window = SlidingWindowStrategy(keep_last_groups=2 * WINDOW_TURNS)
            state["messages"] = await apply_compaction(list(state["messages"]), strategy=window)


class NoHistoryProvider(HistoryProvider):
    """A history that holds nothing. Listed explicitly so the agent does not add an in-memory history
    of its own (it does when no provider loads messages)."""

    def __init__(self) -> None:
        super().__init__("no_history")

    async def get_messages(self, session_id: str | None, *, state: dict[str, Any] | None = None, **kw: Any) -> list:
        return []

    async def save_messages(
        self, session_id: str | None, messages: Sequence[Message], *, state: dict[str, Any] | None = None, **kw: Any
    ) -> None:
        return None


class SummaryProvider(ContextProvider):
    """Supplies the current summary as context; the summary itself lives in session state."""

    def __init__(self) -> None:
        super().__init__("summary")

    async def before_run(
        self, *, agent: SupportsAgentRun, session: AgentSession, context: SessionContext, state: dict[str, Any]
    ) -> None:
        summary = state.get("text") or "(no summary yet)"
        context.extend_messages(
            self, [Message(role="user", contents=[f"Conversation summary (unverified):\n{summary}"])]
        )


class Policy:
    """One policy's agent and session. `answer` runs one user turn; `forget` applies a forget request."""

    info: PolicyInfo

    def __init__(self, info: PolicyInfo, agent: Agent) -> None:
        self.info = info
        self.agent = agent
        self.session = agent.create_session()

    async def answer(self, turn: int, text: str) -> str:
        response = await self.agent.run(
            Message(role="user", contents=[text], message_id=f"u{turn}"), session=self.session
        )
        return response.text or ""

    async def forget(self, key: str) -> None:
        """No per-key forget exists here: the user's words are all this policy receives."""

    def retained(self) -> list[Message]:
        return list(self.session.state.get(InMemoryHistoryProvider.DEFAULT_SOURCE_ID, {}).get("messages", []))


class SummaryPolicy(Policy):
    def __init__(self, info: PolicyInfo, agent: Agent, summarizer: Agent) -> None:
        super().__init__(info, agent)
        self.summarizer = summarizer

    async def answer(self, turn: int, text: str) -> str:
        reply = await super().answer(turn, text)
        state = self.session.state.setdefault("summary", {})
        previous = state.get("text") or "(none yet)"
        response = await self.summarizer.run(
            [
                Message(role="user", contents=[f"Previous summary:\n{previous}"]),
                Message(role="user", contents=[text]),
                Message(role="assistant", contents=[reply]),
            ]
        )
        summary = (response.text or "").strip()
        if not summary:
            raise DriftStopped(f"the summarizer returned an empty summary at turn {turn}; no replacement text is used")
        if len(summary) > MAX_SUMMARY_CHARS:
            raise DriftStopped(
                f"the summarizer returned {len(summary)} characters at turn {turn} (at most {MAX_SUMMARY_CHARS}); "
                "no replacement text is used"
            )
        state["text"] = summary
        return reply

    def retained(self) -> list[Message]:
        summary = self.session.state.get("summary", {}).get("text")
        return [Message(role="assistant", contents=[summary])] if summary else []


class FactsPolicy(Policy):
    def __init__(self, info: PolicyInfo, agent: Agent, memory: WorkingMemory, provider: WorkingMemoryProvider) -> None:
        super().__init__(info, agent)
        self.memory = memory
        self.provider = provider

    async def answer(self, turn: int, text: str) -> str:
        ticket = self.memory.begin_turn(text, self.info.name)
        self.provider.expect(self.session, f"u{turn}", ticket)
        try:
            return await super().answer(turn, text)
        finally:
            self.provider.discard(self.session, f"u{turn}")
            if self.memory.is_open(ticket):
                self.memory.abandon(ticket, "the turn ended before its facts were admitted")

    async def forget(self, key: str) -> None:
        self.memory.forget(key)

    def retained(self) -> list[Message]:
        return []


def build_policies(models: ModelSet, calls: CallLog) -> list[Policy]:
    """The policies over the same clients; every call is recorded under the policy's name."""
    from workbench.drift.recall_policy import build_recall_policies

    agent_client, writer_client = models.agent_client, models.writer_client
    agent_label, writer_label = models.agent_label, models.writer_label
    instructions = INSTRUCTIONS["support"]

    def agent(name: str, providers: list[ContextProvider], purpose: str = "agent", text: str = instructions) -> Agent:
        label = writer_label if purpose == "summarizer" else agent_label
        return Agent(
            agent_client if purpose != "summarizer" else writer_client,
            text,
            name=name,
            context_providers=providers,
            middleware=[RecordingMiddleware(calls, purpose, label), CutOffGuard()],
        )

    info = {p.name: p for p in POLICIES}
    memory = WorkingMemory()
    writer = ModelWriter(writer_client, calls, writer_label, writer_format=models.writer_format)
    updater = MemoryUpdater(memory, writer)
    facts_provider = WorkingMemoryProvider(memory, updater, origin="facts")
    window = SlidingWindowStrategy(keep_last_groups=2 * WINDOW_TURNS)
    return [
        Policy(info["full"], agent("full", [InMemoryHistoryProvider()])),
        Policy(info["window"], agent("window", [ReducingHistoryProvider()])),
        SummaryPolicy(
            info["summary"],
            agent("summary", [NoHistoryProvider(), SummaryProvider()]),
            agent("summarizer", [], purpose="summarizer", text=SUMMARIZER_INSTRUCTIONS),
        ),
        FactsPolicy(info["facts"], agent("facts", [NoHistoryProvider(), facts_provider]), memory, facts_provider),
        Policy(
            info["compaction"],
            agent("compaction", [InMemoryHistoryProvider(), CompactionProvider(before_strategy=window)]),
        ),
        *build_recall_policies([info["recall"], info["recall_purged"]], agent, calls),
    ]
