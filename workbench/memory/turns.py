"""Which turn a piece of work belongs to: the one way a ticket travels from where it was issued to
the provider that settles it and the call log that labels each call with it. Set only by
`WorkingMemory.open_turn` (and the drift lab's steps, which label calls without a ticket)."""

from __future__ import annotations

import contextvars
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass

from workbench.memory.records import MemoryTurn


class CurrentTurn:
    """The turn the running code belongs to, or None.

    What the context variable holds is a box, emptied when the turn's block ends: a context copied
    during the turn outlives it wherever a library keeps a callback (a Redis connection's reader stays
    registered on the event loop with a copy made mid-turn, for as long as the connection lives), and
    it must keep no user message after the turn, which a forget could otherwise never reach."""

    def __init__(self) -> None:
        self._box: contextvars.ContextVar[list[MemoryTurn] | None] = contextvars.ContextVar(
            "current_turn", default=None
        )

    def get(self) -> MemoryTurn | None:
        box = self._box.get()
        return box[0] if box else None

    @contextmanager
    def acting_for(self, turn: MemoryTurn) -> Iterator[MemoryTurn]:
        box = [turn]
        token = self._box.set(box)
        try:
            yield turn
        finally:
            box.clear()
            self._box.reset(token)


current_turn = CurrentTurn()


def acting_for(turn: MemoryTurn) -> AbstractContextManager[MemoryTurn]:
    """Everything run inside belongs to `turn` (asyncio tasks started inside inherit it, until it ends)."""
    return current_turn.acting_for(turn)


@dataclass
class OpenTurn:
    """A ticket while its turn runs, and the words that settle it if nothing else does."""

    ticket: MemoryTurn
    ending: str = "the turn ended before its facts were admitted"
