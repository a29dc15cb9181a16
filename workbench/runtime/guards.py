"""Chat middleware that refuses incomplete replies before any history stores them."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from agent_framework import ChatContext, ChatMiddleware, ChatResponse

from workbench.runtime.failures import ReplyCutOff, ReplyFiltered


class CutOffGuard(ChatMiddleware):
    """A reply that stopped at the token limit raises ReplyCutOff (one the content filter stopped,
    ReplyFiltered), so the run fails like any other failed call: the history providers never see it
    and facts stay as they were."""

    async def process(self, context: ChatContext, call_next: Callable[[], Awaitable[None]]) -> None:
        await call_next()
        if context.stream:
            context.stream_result_hooks.append(_refuse_cut_off)
        elif isinstance(context.result, ChatResponse):
            _refuse_cut_off(context.result)


def _refuse_cut_off(response: ChatResponse[Any]) -> ChatResponse[Any]:
    if response.finish_reason == "length":
        raise ReplyCutOff()
    if response.finish_reason == "content_filter":
        raise ReplyFiltered()
    return response
