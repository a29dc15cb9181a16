"""Recall as the app runs it: one store and one embedder for both agents, storing per agent and
session, searching every agent's messages for the same user (the seed's "search broader than
storage"), and forget reaching the store."""

from __future__ import annotations

from dataclasses import dataclass, field

from agent_framework import AgentSession, ContextProvider

from workbench.memory.forget import ForgetPlan
from workbench.memory.turns import current_turn
from workbench.recall import NAME, UNIT
from workbench.recall.embedders import Embedder
from workbench.recall.provider import Recalled, RecallProvider, SearchBehavior
from workbench.recall.records import RecallScope, StoredMessage
from workbench.recall.store import RecallStore
from workbench.runtime.remembered import HeldItem
from workbench.runtime.view import RecalledMessage

APPLICATION_ID = "workbench"
USER_ID = "local-user"


def _turn_number() -> int | None:
    turn = current_turn.get()
    return turn.number if turn is not None else None


@dataclass
class RecallSetup:
    """What both agents' recall providers share, and what each last recalled (for F2 and the panes).
    It is the runtime's `AgentMemory`, and a holder of text registered with the one forget."""

    name = NAME
    unit = UNIT

    store: RecallStore
    embedder: Embedder
    user_id: str = USER_ID
    on_demand: bool = False
    recalled_by: dict[str, tuple[str, list[Recalled]]] = field(default_factory=dict)  # agent: (session, found)
    sessions: dict[str, int] = field(default_factory=dict)  # the sessions of this run that stored, numbered
    used: bool = False

    @property
    def search_scope(self) -> RecallScope:
        return RecallScope(application_id=APPLICATION_ID, user_id=self.user_id)

    @property
    def location(self) -> str | None:
        return self.store.location

    def providers(self, agent: str) -> list[ContextProvider]:
        return [self.provider(agent)]

    def provider(self, agent: str) -> RecallProvider:
        """`agent`'s provider: stores under this agent and its running session, searches the user."""
        self.used = True

        def remember(session: AgentSession, found: list[Recalled]) -> None:
            self.recalled_by[agent] = (session.session_id, found)

        def stored(records: list[StoredMessage]) -> None:
            for record in records:
                self.sessions.setdefault(record.session_id, len(self.sessions) + 1)

        return RecallProvider(
            self.store,
            self.embedder,
            storage_scope=RecallScope(APPLICATION_ID, agent, self.user_id, None),
            search_scope=self.search_scope,
            turn_of=_turn_number,
            behavior=SearchBehavior.ON_DEMAND if self.on_demand else SearchBehavior.BEFORE_RUN,
            on_recall=remember,
            on_store=stored,
        )

    def turn_started(self, agent: str) -> None:
        self.recalled_by.pop(agent, None)

    def recalled(self, agent: str) -> list[RecalledMessage]:
        if agent not in self.recalled_by:
            return []
        session, found = self.recalled_by[agent]
        return [
            RecalledMessage(
                r.text,
                r.role,
                r.score,
                r.scope.agent_id or "?",
                self.session_label(r.scope.session_id, session),
                r.turn,
            )
            for r in found
        ]

    def session_label(self, session_id: str | None, current: str) -> str:
        if session_id == current:
            return "this session"
        number = self.sessions.get(session_id or "")
        return f"session {number} of this run" if number else "an earlier run"

    def describe(self) -> str:
        """Store and embedder, short enough for the header (F1 says them in full)."""
        when = ", on demand" if self.on_demand else ""
        return f"{self.store.kind}, {self.embedder.name if self.embedder.semantic else 'lexical'}{when}"

    def _reachable(self) -> bool:
        """Whether there is a store to reach: recall ran, or an earlier run left one."""
        return self.used or self.store.exists()

    async def held(self) -> list[HeldItem]:
        """The user's stored messages as one item: how many, from which agents, the store's size on
        disk (a file's; None in memory or on a server), and their texts in the order they were stored."""
        if not self._reachable():
            return []
        found = await self.store.records(self.search_scope)
        records = sorted(found, key=lambda r: (r.stored_at, r.turn, r.role != "user"))  # a turn's question first
        if not records:
            return []
        agents = ", ".join(sorted({r.agent_id or "?" for r in records}))
        description = f"{len(records):,} stored message(s) with their embeddings, from: {agents}"
        text = "\n".join(r.text for r in records)
        return [HeldItem("store", "stored messages", description, text, self.store.backend.size_on_disk())]

    async def declared(self, keys: frozenset[str]) -> set[str]:
        """Every value a stored message of this user declared for `keys`, admitted or not (the store
        keeps what it read for the forget that follows)."""
        if not self._reachable():
            return set()
        return await self.store.declared(self.search_scope, keys)

    async def erase(self, plan: ForgetPlan) -> int:
        """Delete the user's stored messages that hold a forgotten value (all of them for a forget of
        everything); the store then makes the deleted text unrecoverable (a DuckDB file is rewritten,
        a PostgreSQL table vacuumed)."""
        self.recalled_by.clear()
        if not self._reachable():
            return 0
        return (await self.store.erase(plan, self.search_scope)).records

    async def close(self) -> None:
        """The session ends: its store closed (once an operation running on it is done)."""
        await self.store.close()

    def close_now(self) -> None:
        """The session ends without an event loop: its store closed as far as it can be without one
        (`RecallStore.close_now`)."""
        self.store.close_now()
