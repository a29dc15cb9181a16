"""The context policies, each built from Agent Framework parts, each answering the same turns.

Every policy keeps what its strategy keeps; none of them can forget a single key except the
bounded facts, the purged retrieved history, Agent Framework's memories (agentmem_policy.py) and Mem0
(mem0_policy.py), so a user's "please forget" reaches the others only as words in the conversation.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agent_framework import (
    EXCLUDED_KEY,
    Agent,
    AgentSession,
    ContextProvider,
    HistoryProvider,
    InMemoryHistoryProvider,
    Message,
    SessionContext,
    SlidingWindowStrategy,
    SupportsAgentRun,
    apply_compaction,
)

from workbench.agentmem.config import AGENT_MEMORIES
from workbench.build.builder import lab_forget
from workbench.memory import Outcome, Status, WorkingMemory
from workbench.memory.forget import Holder

WINDOW_TURNS = 3
MAX_SUMMARY_CHARS = 700
SUMMARIZER_INSTRUCTIONS = f"""You are the summarizer agent. Update the conversation summary with the new exchange.
Keep every key=value the user declared, one per line, with its latest value, and every prohibition.
Write at most {MAX_SUMMARY_CHARS} characters. The summary is unverified: it authorizes nothing."""


@dataclass(frozen=True)
class Received:
    """What a policy's memory was handed over a run, where it can refuse it: the writer's batches the
    host settled (bounded facts), or the messages stored for recall. The lab adds the memory's own calls."""

    batches: int = 0
    batches_rejected: int = 0  # rejected by the host's checks, or abandoned (the writer's call failed)
    first_reason: str = ""
    stored: int | None = None  # messages stored for recall; None: not a memory that stores messages
    recalled: int | None = None  # messages recalled into requests, over every turn


@dataclass(frozen=True)
class Removal:
    """What the lab removed after a row of the user's agents: `done` False when something it wrote may be
    left (`line` says what, and where)."""

    line: str
    done: bool


class PolicyFailed(Exception):
    """This policy cannot go on honestly (a bad summary); the lab fails its cells from this turn on."""


@dataclass(frozen=True)
class AgentInfo:
    """One of the user's agents in a lab row: its name, the client that answers it (its class and model, as
    the client holds them) and each of its memories with where the row keeps it (`workbench.drift.copies`)."""

    name: str
    client: str
    memories: tuple[str, ...]


@dataclass(frozen=True)
class PolicyInfo:
    name: str
    title: str
    keeps: str
    calls_functions: bool = False  # needs a model that calls functions: the built-in one does not
    # needs a live model that extracts memories and --embedding-model to find them (Mem0)
    needs_embedding_model: bool = False
    # runs the framework's extracted memory, which a framework that retired it no longer has
    needs_extracted_memory: bool = False
    agents: tuple[AgentInfo, ...] = ()  # the user's agents it runs (`workbench.drift.yours_policy`)
    withheld: str = ""  # why this run does not run it, decided when it was built (its row says so)


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
    PolicyInfo(
        "persisted",
        "persisted history",
        "every message in the persisted sessions' database (workbench --persist), reloaded from disk before "
        "each probe and after each forget as after a restart; the product's forget replaces both sessions and "
        "erases their messages",
    ),
    # The agent memories' rows, one per choice of `workbench.agentmem.config.AGENT_MEMORIES` that has one, in
    # its order (`workbench.drift.agentmem_policy` builds them).
    *(
        PolicyInfo(
            choice.lab.name,
            choice.lab.title,
            choice.lab.keeps,
            calls_functions=choice.calls_functions,
            needs_embedding_model=choice.lab.needs_embedding_model,
            needs_extracted_memory=choice.lab.needs_extracted_memory,
        )
        for choice in AGENT_MEMORIES.values()
        if choice.lab is not None
    ),
)
AGENT_MEMORY_ROWS = tuple(choice.lab.name for choice in AGENT_MEMORIES.values() if choice.lab is not None)


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


class CompactedHistoryProvider(InMemoryHistoryProvider):
    """The whole history in the session, with what compaction excluded set aside: the messages
    compaction may still include stay in `messages`, those it excluded move, in order, to
    `compacted`. So the compaction provider, which marks exclusions after each run and windows
    what is loaded before the next, works over the last few turns instead of the whole history,
    and every request is what a sliding window over the whole history would send."""

    COMPACTED = "compacted"

    async def save_messages(
        self, session_id: str | None, messages: Sequence[Message], *, state: dict[str, Any] | None = None, **kw: Any
    ) -> None:
        if state is not None and state.get("messages"):
            stored: list[Message] = state["messages"]
            excluded = [m for m in stored if m.additional_properties.get(EXCLUDED_KEY, False)]
            if excluded:
                state.setdefault(self.COMPACTED, []).extend(excluded)
                state["messages"] = [m for m in stored if not m.additional_properties.get(EXCLUDED_KEY, False)]
        await super().save_messages(session_id, messages, state=state, **kw)

    @classmethod
    def history(cls, state: dict[str, Any]) -> list[Message]:
        """Every message of the session, oldest first."""
        return [*state.get(cls.COMPACTED, []), *state.get("messages", [])]


class NoHistoryProvider(HistoryProvider):
    """A history that holds nothing. Listed explicitly so the agent does not add an in-memory history
    of its own (it does when no provider loads messages)."""

    def __init__(self) -> None:
        super().__init__("no_history")

    async def get_messages(
        self, session_id: str | None, *, state: dict[str, Any] | None = None, **kw: Any
    ) -> list[Message]:
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
    """One policy's support and logs agents, each with its own session, as in the app. `answer` runs
    one user turn on one agent; `forget` applies a forget request (a key, or None for everything)."""

    info: PolicyInfo

    def __init__(self, info: PolicyInfo, agents: dict[str, Agent]) -> None:
        self.info = info
        self.agents = agents
        self.agent_sessions = {name: agent.create_session() for name, agent in agents.items()}

    async def answer(self, turn: int, agent: str, text: str) -> str:
        response = await self.agents[agent].run(
            Message(role="user", contents=[text], message_id=f"u{turn}"), session=self.agent_sessions[agent]
        )
        return response.text or ""

    async def forget(self, key: str | None) -> None:
        """No per-key forget exists here: the user's words are all this policy receives."""

    async def before_probe(self) -> None:
        """The next answer is scored (a probe's step): persisted history restarts here."""

    async def close(self) -> None:
        """Release what the policy opened (files); what it retained can still be read."""

    def removed(self) -> list[Removal]:
        """After `close`: what it removed of what it wrote outside the lab's own folders (the lab's keys
        on the user's Redis server, its copies of the user's folders), each verified or not."""
        return []

    async def retained_now(self) -> list[Message]:
        """`retained`, for a policy whose memory is read asynchronously (a server's) to override."""
        return self.retained()

    def on_disk(self) -> int | None:
        """Bytes of the files this policy's memory keeps, or None when it keeps none on disk."""
        return None

    def received(self) -> Received | None:
        """What this policy's memory was handed (see Received), or None when nothing can be refused."""
        return None

    def retained(self) -> list[Message]:
        return [
            message
            for session in self.agent_sessions.values()
            for message in CompactedHistoryProvider.history(
                session.state.get(InMemoryHistoryProvider.DEFAULT_SOURCE_ID, {})
            )
        ]


class SummaryPolicy(Policy):
    def __init__(self, info: PolicyInfo, agents: dict[str, Agent], summarizer: Agent) -> None:
        super().__init__(info, agents)
        self.summarizer = summarizer

    async def answer(self, turn: int, agent: str, text: str) -> str:
        reply = await super().answer(turn, agent, text)
        state = self.agent_sessions[agent].state.setdefault("summary", {})
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
            raise PolicyFailed("the summarizer returned an empty summary; no replacement text is used")
        if len(summary) > MAX_SUMMARY_CHARS:
            raise PolicyFailed(
                f"the summarizer returned {len(summary):,} characters (at most {MAX_SUMMARY_CHARS}); "
                "no replacement text is used"
            )
        state["text"] = summary
        return reply

    def retained(self) -> list[Message]:
        summaries = (session.state.get("summary", {}).get("text") for session in self.agent_sessions.values())
        return [Message(role="assistant", contents=[summary]) for summary in summaries if summary]


def folder_size(folder: Path) -> int:
    """Bytes of every file under `folder`."""
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file()) if folder.exists() else 0


class FactsPolicy(Policy):
    def __init__(
        self, info: PolicyInfo, agents: dict[str, Agent], memory: WorkingMemory, agent_sessions: Sequence[Holder] = ()
    ) -> None:
        """`agent_sessions`: the agents' sessions its forget reaches after memory, as the app's (the facts policy
        keeps no history: memory is all it holds)."""
        super().__init__(info, agents)
        self.memory = memory
        self.forgetting = lab_forget(memory, agent_sessions=agent_sessions)
        self.batches = Counter[str]()
        self.first_reason = ""
        memory.subscribe(self._settled)

    def _settled(self, outcome: Outcome) -> None:
        """Counts the writer's batches as the host settles them (a forget or a note is no batch)."""
        if outcome.status in (Status.REJECTED, Status.ABANDONED):
            self.batches["rejected"] += 1
            self.first_reason = self.first_reason or outcome.events[0].describe()
        elif outcome.status in (Status.APPLIED, Status.STALE):
            self.batches["taken"] += 1

    def received(self) -> Received:
        rejected = self.batches["rejected"]
        return Received(rejected + self.batches["taken"], rejected, self.first_reason)

    async def answer(self, turn: int, agent: str, text: str) -> str:
        with self.memory.open_turn(text, self.info.name):
            return await super().answer(turn, agent, text)

    async def forget(self, key: str | None) -> None:
        await self.forgetting.forget(key)

    def retained(self) -> list[Message]:
        return []
