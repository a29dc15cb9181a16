"""What counts as an answer: a reply that is complete and says something. Anything else fails
the call before any history stores it or any extraction reads it."""

from __future__ import annotations

from typing import Any

from agent_framework import ChatResponse, ChatResponseUpdate, Content

from workbench.runtime.failures import NoAnswer, ReplyCutOff, ReplyFiltered, ReplyIncomplete
from workbench.text import mend


def mend_contents(contents: list[Content]) -> None:
    """A model's text with halves of surrogate pairs replaced (U+FFFD), in place. A server may send
    one as a JSON escape; kept, it would make every later request of that session unencodable."""
    for content in contents:
        if content.type == "text" and content.text:
            content.text = mend(content.text)


def mend_update(update: ChatResponseUpdate) -> ChatResponseUpdate:
    mend_contents(update.contents)
    return update


def check_answer(response: ChatResponse[Any], *, streamed: bool) -> None:
    """Raise when `response` is not an answer: cut off at the token limit, no choices at all, or a
    streamed reply (an agent's answer) that ended without a finish_reason (what a crashing server
    sends) or said nothing. An empty non-streamed message is left to its caller, which names what
    it expected (the writer's JSON, a summary)."""
    if response.finish_reason == "length":
        raise ReplyCutOff(response.text or "")
    if response.finish_reason == "content_filter":
        raise ReplyFiltered()
    if not streamed:
        if not response.messages:
            raise NoAnswer("no choices")
        return
    said = bool(response.text) or any(c.type == "function_call" for m in response.messages for c in m.contents)
    if response.finish_reason is None:
        if said:
            raise ReplyIncomplete()
        raise NoAnswer("the stream held no answer")
    if not said:
        raise NoAnswer("an empty message")
