"""From one user turn to one settled ticket: writer call, host verification, ordered admission."""

from __future__ import annotations

from workbench.memory import MemoryTurn, Outcome, ReasonCode, WorkingMemory, declares_anything
from workbench.runtime.failures import explain_failure
from workbench.runtime.writer import MalformedOutput, Writer


class MemoryUpdater:
    """Settles a ticket in ticket order: writer calls run concurrently, only the store update waits
    for earlier tickets. Never raises for bad writer output or a failed writer call: those are
    events. A cancellation propagates with the ticket still open; its owner settles it."""

    def __init__(self, memory: WorkingMemory, writer: Writer) -> None:
        self.memory = memory
        self.writer = writer

    async def update(self, turn: MemoryTurn) -> Outcome:
        if turn.epoch != self.memory.epoch or not declares_anything(turn.user_text):
            # Stale after a forget, or nothing declared: settle without calling the writer.
            await self.memory.wait_for_earlier(turn)
            return self.memory.admit(turn, [])
        try:
            candidates = await self.writer.propose(turn.user_text)
        except MalformedOutput as exc:
            await self.memory.wait_for_earlier(turn)
            return self.memory.reject(turn, ReasonCode.MALFORMED_OUTPUT, str(exc))
        except Exception as exc:
            return self.memory.abandon(turn, f"the writer call failed: {explain_failure(exc)}")
        await self.memory.wait_for_earlier(turn)
        return self.memory.admit(turn, candidates)
