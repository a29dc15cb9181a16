"""From one user turn to one settled ticket: writer call, host verification, ordered admission."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from workbench.memory import MemoryTurn, Outcome, ReasonCode, WorkingMemory, parse_message
from workbench.runtime.failures import explain_failure
from workbench.runtime.writer import MalformedOutput, Writer


class AdmissionOrder:
    """Admits batches in ticket order: a turn settles only after every earlier open turn of its
    epoch has settled. Writer calls still run concurrently; only the store update waits."""

    def __init__(self, memory: WorkingMemory) -> None:
        self._memory = memory
        self._open: dict[int, int] = {}
        self._changed: asyncio.Condition | None = None

    def open(self, turn: MemoryTurn) -> None:
        self._open[turn.number] = turn.epoch

    def _ready(self, turn: MemoryTurn) -> bool:
        if turn.epoch != self._memory.epoch:
            return True  # stale whatever happens: nothing to wait for
        return not any(n < turn.number and e == turn.epoch for n, e in self._open.items())

    @asynccontextmanager
    async def turn_of(self, turn: MemoryTurn) -> AsyncIterator[None]:
        if self._changed is None:
            self._changed = asyncio.Condition()
        async with self._changed:
            await self._changed.wait_for(lambda: self._ready(turn))
        try:
            yield
        finally:
            await self.close(turn)

    async def close(self, turn: MemoryTurn) -> None:
        self._open.pop(turn.number, None)
        if self._changed is None:
            return
        async with self._changed:
            self._changed.notify_all()

    async def forgotten(self) -> None:
        """Wake waiters after a forget: their tickets are stale now."""
        if self._changed is not None:
            async with self._changed:
                self._changed.notify_all()


class MemoryUpdater:
    """Settles each ticket exactly once, in order. Never raises for bad writer output: a failure is an event."""

    def __init__(self, memory: WorkingMemory, writer: Writer, order: AdmissionOrder) -> None:
        self.memory = memory
        self.writer = writer
        self.order = order

    async def update(self, turn: MemoryTurn) -> Outcome | None:
        if turn.epoch != self.memory.epoch or not parse_message(turn.user_text).declares_anything:
            # Stale after a forget, or nothing declared: settle without calling the writer.
            async with self.order.turn_of(turn):
                return self.memory.admit(turn, [])
        try:
            candidates = await self.writer.propose(turn.user_text)
        except MalformedOutput as exc:
            async with self.order.turn_of(turn):
                return self.memory.reject(turn, ReasonCode.MALFORMED_OUTPUT, str(exc))
        except asyncio.CancelledError:
            await self.abandon(turn, "the turn was cancelled before its facts were admitted")
            raise
        except Exception as exc:
            return await self.abandon(turn, f"the writer call failed: {explain_failure(exc)}")
        async with self.order.turn_of(turn):
            return self.memory.admit(turn, candidates)

    async def abandon(self, turn: MemoryTurn, detail: str) -> Outcome | None:
        """Settle a turn that ends without an update, unless it already settled."""
        outcome = self.memory.abandon(turn, detail) if self.memory.is_open(turn) else None
        await self.order.close(turn)
        return outcome
