"""The Agent Framework integration: working memory as a ContextProvider (the seed's Demo160)."""

from __future__ import annotations

from typing import Any

from agent_framework import AgentSession, ContextProvider, Message, SessionContext, SupportsAgentRun

from workbench.memory import MemoryTurn, WorkingMemory
from workbench.runtime.updater import MemoryUpdater


def is_external_user_input(message: Message) -> bool:
    """A user message that came from the caller: not history, not another provider's injected context."""
    return (
        str(message.role) == "user"
        and "_attribution" not in message.additional_properties
        and bool((message.text or "").strip())
    )


class WorkingMemoryProvider(ContextProvider):
    """Supplies the prompt block before each run (unless the caller puts it in the message itself,
    as manual mode does); after a successful run, extracts facts from external user input only.
    The block is context, so the history provider does not store it.

    Extraction runs in `after_run`, before the history provider stores the exchange (providers run
    `after_run` in reverse order), so a turn that fails or is cancelled during extraction leaves
    the history as it was. One provider serves every session: which ticket a run's message carries
    is kept in that session's state, keyed by message id, so concurrent runs of one session never
    share or overwrite a ticket. The tickets themselves live in working memory.
    """

    SOURCE_ID = "working_memory"

    def __init__(
        self, memory: WorkingMemory, updater: MemoryUpdater, origin: str, *, supplies_block: bool = True
    ) -> None:
        super().__init__(self.SOURCE_ID)
        self._memory = memory
        self._updater = updater
        self._origin = origin
        self._supplies_block = supplies_block

    def _tickets(self, session: AgentSession) -> dict[str, int]:
        state: dict[str, Any] = session.state.setdefault(self.source_id, {})
        tickets: dict[str, int] = state.setdefault("tickets", {})
        return tickets

    def expect(self, session: AgentSession, message_id: str, turn: MemoryTurn) -> None:
        """The run of `session` whose input has `message_id` settles `turn` (issued at submission)."""
        self._tickets(session)[message_id] = turn.number

    def discard(self, session: AgentSession, message_id: str) -> None:
        """Forget the expectation of a run that ended without `after_run` (a failure, a cancel)."""
        self._tickets(session).pop(message_id, None)

    async def before_run(
        self, *, agent: SupportsAgentRun, session: AgentSession, context: SessionContext, state: dict[str, Any]
    ) -> None:
        if self._supplies_block:
            context.extend_messages(self, [Message(role="user", contents=[self._memory.prompt_block()])])

    async def after_run(
        self, *, agent: SupportsAgentRun, session: AgentSession, context: SessionContext, state: dict[str, Any]
    ) -> None:
        tickets: dict[str, int] = state.get("tickets", {})
        for message in filter(is_external_user_input, context.input_messages):
            number = tickets.pop(message.message_id or "", None)
            turn = self._memory.ticket(number) if number is not None else None
            if turn is not None:
                await self._updater.update(turn)  # the ticket's owner settles it if this is cancelled
            elif self._supplies_block:
                # Input from a caller that issued no ticket: extract from the message as sent.
                await self._extract_unticketed(message.text or "")

    async def _extract_unticketed(self, text: str) -> None:
        turn = self._memory.begin_turn(text, self._origin)
        try:
            await self._updater.update(turn)
        finally:
            if self._memory.is_open(turn):
                self._memory.abandon(turn, "the run ended before its facts were admitted")
