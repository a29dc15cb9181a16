"""Context providers as the framework's published samples write them, for tests that run them as a
user's agents would."""

from __future__ import annotations

from contextlib import suppress
from typing import Any

from agent_framework import AgentSession, ContextProvider, SessionContext, SupportsChatGetResponse

EXTRACT = "Extract the user's name and age from the message if present. If not present return nulls."


class UserInfoMemory(ContextProvider):
    """The framework's simple_context_provider sample, as published: after each run it asks its own client
    to extract the user's name, `store` unset."""

    def __init__(self, *, client: SupportsChatGetResponse) -> None:
        super().__init__("user_info_memory")
        self._chat_client = client

    async def after_run(
        self, *, agent: Any, session: AgentSession | None, context: SessionContext, state: dict[str, Any]
    ) -> None:
        messages = context.get_messages(include_input=True, include_response=True)
        with suppress(Exception):
            await self._chat_client.get_response(messages=messages, options={"instructions": EXTRACT})
