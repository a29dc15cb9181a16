"""The Agent Framework integration: working memory as a ContextProvider (the seed's Demo160)."""

from __future__ import annotations

from typing import Any

from agent_framework import AgentSession, ContextProvider, Message, SessionContext, SupportsAgentRun

from workbench.memory import WorkingMemory
from workbench.memory.turns import current_turn
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

    Extraction runs in `after_run`. The runtime lists this provider last and the framework runs
    `after_run` in reverse order, so extraction comes before history, recall or any other memory
    stores the exchange: a turn that fails or is cancelled during extraction leaves them as they were.
    The ticket a run settles is the current turn its caller opened with `WorkingMemory.open_turn` (it
    follows the run's task, so concurrent runs never share one); a run with no open ticket of its own,
    in provider mode, opens one for the message as sent.
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

    async def before_run(
        self, *, agent: SupportsAgentRun, session: AgentSession, context: SessionContext, state: dict[str, Any]
    ) -> None:
        if self._supplies_block:
            context.extend_messages(self, [Message(role="user", contents=[self._memory.prompt_block()])])

    async def after_run(
        self, *, agent: SupportsAgentRun, session: AgentSession, context: SessionContext, state: dict[str, Any]
    ) -> None:
        inputs = [m for m in context.input_messages if is_external_user_input(m)]
        if not inputs:
            return
        turn = current_turn.get()
        if turn is not None:
            if self._memory.is_open(turn):
                await self._updater.update(turn)  # the turn's owner settles it if this is cancelled
            return
        for message in inputs if self._supplies_block else ():
            # Input from a caller that opened no turn: extract from each message as sent.
            with self._memory.open_turn(message.text or "", self._origin) as opened:
                opened.ending = "the run ended before its facts were admitted"
                await self._updater.update(opened.ticket)
