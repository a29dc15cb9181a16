"""From one user turn to one settled ticket: writer call, host verification, ordered admission."""

from __future__ import annotations

from collections.abc import Callable

from workbench.memory import EventKind, MemoryTurn, Outcome, ReasonCode, WorkingMemory, declares_anything
from workbench.runtime import tracing
from workbench.runtime.failures import explain_failure
from workbench.runtime.view import WRITER_FAILING, WRITER_SWITCHED
from workbench.runtime.writer import HostWriter, MalformedOutput, Writer

# Rejections that are the writer model's failing, not the user's message: output that is not an
# extraction, or facts other than the message's declarations.
WRITER_FAULTS = frozenset({ReasonCode.MALFORMED_OUTPUT, ReasonCode.DECLARATION_MISMATCH})
# After this many such rejections in a row the app says, once, that the host's parse is there.
WRITER_STRIKES = 3


class MemoryUpdater:
    """Settles a ticket in ticket order: writer calls run concurrently, only the store update waits
    for earlier tickets. Never raises for bad writer output or a failed writer call: those are
    events. A cancellation propagates with the ticket still open; its owner settles it.

    A writer model that keeps failing the contract (WRITER_STRIKES rejected batches in a row for its
    own faults) gets one note saying so; `use_host_parse` switches this run to the host's parse.
    `explain` puts a failed writer call in one line (the runtime's: `ModelSet.explain`, which knows the
    server and the kind of credential its clients send)."""

    def __init__(
        self, memory: WorkingMemory, writer: Writer, explain: Callable[[BaseException], str] = explain_failure
    ) -> None:
        self.memory = memory
        self.writer = writer
        self._explain = explain
        self._strikes = 0
        self._said_failing = False

    @property
    def writer_failing(self) -> bool:
        """The writer model kept failing the contract and is still the writer."""
        return self._said_failing and not isinstance(self.writer, HostWriter)

    async def update(self, turn: MemoryTurn) -> Outcome:
        outcome = await self._settle(turn)
        self._count(outcome)
        return outcome

    async def _settle(self, turn: MemoryTurn) -> Outcome:
        if turn.epoch != self.memory.epoch or not declares_anything(turn.user_text):
            # Stale after a forget, or nothing declared: settle without calling the writer.
            await self.memory.wait_for_earlier(turn)
            return self.memory.admit(turn, [])
        try:
            with tracing.writer_call(self.writer.label, self.writer.format_summary) as span:
                candidates = await self.writer.propose(turn.user_text)
                tracing.writer_proposed(span, candidates, self.memory.contract)
        except MalformedOutput as exc:
            await self.memory.wait_for_earlier(turn)
            return self.memory.reject(turn, ReasonCode.MALFORMED_OUTPUT, str(exc))
        except Exception as exc:
            return self.memory.abandon(turn, f"the writer call failed: {self._explain(exc)}")
        await self.memory.wait_for_earlier(turn)
        return self.memory.admit(turn, candidates)

    def _count(self, outcome: Outcome) -> None:
        if isinstance(self.writer, HostWriter) or not outcome.events:
            return
        event = outcome.events[0]
        if event.kind is EventKind.ADMITTED:
            self._strikes = 0
        elif event.kind is EventKind.REJECTED and any(r.code in WRITER_FAULTS for r in event.reasons):
            self._strikes += 1
            if self._strikes >= WRITER_STRIKES and not self._said_failing:
                self._said_failing = True
                self.memory.note(
                    f"the writer model failed the contract {self._strikes} times in a row (output that is not an "
                    "extraction, or facts the message does not declare): the host's own parse reads declarations "
                    'with no model call; "Use the host parse as the writer" in the command palette (Ctrl+P) '
                    "switches to it for this session",
                    origin=WRITER_FAILING,
                )

    def use_host_parse(self) -> bool:
        """Switch the writer to the host's parse for the rest of this run, with a note in the
        ledger; False when it already is."""
        if isinstance(self.writer, HostWriter):
            return False
        previous = self.writer.label
        self.writer = HostWriter()
        self.memory.note(
            f"the writer is now the host's own parse (no model call) for this session, instead of {previous}; "
            "the host verifies every batch as before",
            origin=WRITER_SWITCHED,
        )
        return True
