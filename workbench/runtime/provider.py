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
    """Supplies the prompt block before each run; after a successful run, extracts facts from
    external user input only. The block is context, so the history provider does not store it."""

    SOURCE_ID = "working_memory"

    def __init__(self, memory: WorkingMemory, updater: MemoryUpdater, origin: str) -> None:
        super().__init__(self.SOURCE_ID)
        self._memory = memory
        self._updater = updater
        self._origin = origin
        self._tickets: dict[str, MemoryTurn] = {}

    def expect(self, session: AgentSession, turn: MemoryTurn) -> None:
        """Use `turn` (issued at submission) for the next run of `session` instead of a new ticket."""
        self._tickets[session.session_id] = turn

    def discard(self, session: AgentSession) -> None:
        self._tickets.pop(session.session_id, None)

    async def before_run(
        self, *, agent: SupportsAgentRun, session: AgentSession, context: SessionContext, state: dict[str, Any]
    ) -> None:
        context.extend_messages(self, [Message(role="user", contents=[self._memory.prompt_block()])])

    async def after_run(
        self, *, agent: SupportsAgentRun, session: AgentSession, context: SessionContext, state: dict[str, Any]
    ) -> None:
        expected = self._tickets.pop(session.session_id, None)
        for message in filter(is_external_user_input, context.input_messages):
            text = message.text or ""
            if expected is not None and expected.user_text == text:
                turn, expected = expected, None
            else:
                turn = self._memory.begin_turn(text, self._origin)
                self._updater.order.open(turn)
            await self._updater.update(turn)
