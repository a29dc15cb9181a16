"""The history provider of `workbench --persist DIR`: a framework `HistoryProvider` whose messages are rows
of `StateFile`, so a turn's messages are saved in the same transaction as the facts and the ledger it
left (`PersistedSessions.save_turn`). Only the agents' current sessions are written: a turn still
running on a session a forget replaced stores nothing, as the in-memory history would keep nothing
anyone reads."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

from agent_framework import HistoryProvider, Message

SOURCE_ID = "persisted_history"


class Owner(Protocol):
    """Where the messages live (`PersistedSessions`, which imports this module)."""

    def read(self, session_id: str | None) -> list[Message]: ...

    def save_turn(self, session_id: str, messages: list[dict[str, Any]]) -> None: ...


class StateHistory(HistoryProvider):
    def __init__(self, owner: Owner) -> None:
        super().__init__(SOURCE_ID)
        self._owner = owner

    async def get_messages(
        self, session_id: str | None, *, state: dict[str, Any] | None = None, **kwargs: Any
    ) -> list[Message]:
        return self._owner.read(session_id)

    async def save_messages(
        self, session_id: str | None, messages: Sequence[Message], *, state: dict[str, Any] | None = None, **kwargs: Any
    ) -> None:
        if messages and session_id is not None:
            self._owner.save_turn(session_id, [m.to_dict() for m in messages])
