"""Which turn a piece of work belongs to: the one way a ticket travels from where it was issued to
the provider that settles it and the call log that labels each call with it. Set only by
`WorkingMemory.open_turn` (and the drift lab's steps, which label calls without a ticket)."""

from __future__ import annotations

import contextvars
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from workbench.memory.records import MemoryTurn

current_turn: contextvars.ContextVar[MemoryTurn | None] = contextvars.ContextVar("current_turn", default=None)


@contextmanager
def acting_for(turn: MemoryTurn) -> Iterator[MemoryTurn]:
    """Everything run inside belongs to `turn` (asyncio tasks started inside inherit it)."""
    token = current_turn.set(turn)
    try:
        yield turn
    finally:
        current_turn.reset(token)


@dataclass
class OpenTurn:
    """A ticket while its turn runs, and the words that settle it if nothing else does."""

    ticket: MemoryTurn
    ending: str = "the turn ended before its facts were admitted"
