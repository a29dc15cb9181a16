"""Recall as the app runs it: one store and one embedder for both agents, storing per agent and
session, searching every agent's messages for the same user (the seed's "search broader than
storage"), and forget reaching the store."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from agent_framework import AgentSession

from workbench.recall.embedders import Embedder
from workbench.recall.provider import Recalled, RecallProvider, SearchBehavior
from workbench.recall.records import RecallScope, StoredMessage
from workbench.recall.store import Purge, RecallStore

APPLICATION_ID = "workbench"
USER_ID = "local-user"


@dataclass
class RecallSetup:
    """What both agents' recall providers share, and what each last recalled (for F2 and the panes)."""

    store: RecallStore
    embedder: Embedder
    user_id: str = USER_ID
    on_demand: bool = False
    recalled: dict[str, tuple[str, list[Recalled]]] = field(default_factory=dict)  # agent: (session, found)
    sessions: dict[str, int] = field(default_factory=dict)  # the sessions of this run that stored, numbered
    used: bool = False

    @property
    def search_scope(self) -> RecallScope:
        return RecallScope(application_id=APPLICATION_ID, user_id=self.user_id)

    def provider(self, agent: str, turn_of: Callable[[], int | None]) -> RecallProvider:
        """`agent`'s provider: stores under this agent and its running session, searches the user."""
        self.used = True

        def remember(session: AgentSession, found: list[Recalled]) -> None:
            self.recalled[agent] = (session.session_id, found)

        def stored(records: list[StoredMessage]) -> None:
            for record in records:
                self.sessions.setdefault(record.session_id, len(self.sessions) + 1)

        return RecallProvider(
            self.store,
            self.embedder,
            storage_scope=RecallScope(APPLICATION_ID, agent, self.user_id, None),
            search_scope=self.search_scope,
            turn_of=turn_of,
            behavior=SearchBehavior.ON_DEMAND if self.on_demand else SearchBehavior.BEFORE_RUN,
            on_recall=remember,
            on_store=stored,
        )

    def session_label(self, session_id: str | None, current: str) -> str:
        if session_id == current:
            return "this session"
        number = self.sessions.get(session_id or "")
        return f"session {number} of this run" if number else "an earlier run"

    def describe(self) -> str:
        """Store and embedder, short enough for the header (F1 says them in full)."""
        when = ", on demand" if self.on_demand else ""
        return f"{self.store.kind}, {self.embedder.name if self.embedder.semantic else 'lexical'}{when}"

    async def forget(self, key: str | None, known: Iterable[str]) -> Purge | None:
        """Purge what a forget removed: messages holding the key's values, or the user's whole scope.
        None when recall never ran and left no store to purge."""
        if not self.used and not self.store.exists():
            return None
        self.recalled.clear()
        if key is None:
            return await self.store.forget_scope(self.search_scope)
        return await self.store.forget_key(key, known, self.search_scope)

    @staticmethod
    def describe_purge(purge: Purge, store: RecallStore) -> str:
        """For the ledger: how many, never what."""
        erased = f" and {store.backend.erases}" if purge.records and store.backend.erases else ""
        return f"recall: purged {purge.records} stored message(s) from the {store.kind} store{erased}"
