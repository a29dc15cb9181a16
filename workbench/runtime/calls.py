"""What each model call was sent and what the provider reported, recorded by chat middleware."""

from __future__ import annotations

import contextvars
import itertools
from collections import deque
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from agent_framework import ChatContext, ChatMiddleware, ChatResponse

from workbench.runtime.failures import explain_failure
from workbench.runtime.usage import Usage, usage_from_details

# The turn a model call belongs to; set by the runtime around each turn. Context variables
# follow asyncio tasks, so concurrent turns never see each other's number.
current_turn: contextvars.ContextVar[int | None] = contextvars.ContextVar("current_turn", default=None)


@dataclass(frozen=True)
class SentMessage:
    role: str
    text: str


@dataclass
class CallRecord:
    """One model call: the exact instructions and messages sent, the reply, and reported usage."""

    seq: int
    purpose: str
    turn: int | None
    model: str
    instructions: str
    messages: tuple[SentMessage, ...]
    reply: str = ""
    usage: Usage | None = None
    finished: bool = False
    error: str = ""

    @property
    def request_chars(self) -> int:
        return len(self.instructions) + sum(len(m.text) for m in self.messages)


@dataclass
class CallLog:
    """The latest calls of a runtime, oldest first."""

    capacity: int = 200
    _records: deque[CallRecord] = field(default_factory=deque)
    _seq: itertools.count[int] = field(default_factory=lambda: itertools.count(1))

    def start(self, purpose: str, model: str, instructions: str, messages: tuple[SentMessage, ...]) -> CallRecord:
        record = CallRecord(next(self._seq), purpose, current_turn.get(), model, instructions, messages)
        self._records.append(record)
        while len(self._records) > self.capacity:
            self._records.popleft()
        return record

    def records(self, *, purpose: str | None = None, turn: int | None = None) -> list[CallRecord]:
        return [
            r for r in self._records if (purpose is None or r.purpose == purpose) and (turn is None or r.turn == turn)
        ]

    def clear(self) -> None:
        self._records.clear()


class RecordingMiddleware(ChatMiddleware):
    """Records every chat call of one agent into a CallLog under a fixed purpose."""

    def __init__(self, log: CallLog, purpose: str, model: str) -> None:
        self._log = log
        self._purpose = purpose
        self._model = model

    async def process(self, context: ChatContext, call_next: Callable[[], Awaitable[None]]) -> None:
        instructions = context.options.get("instructions") if context.options else None
        record = self._log.start(
            self._purpose,
            self._model,
            str(instructions or ""),
            tuple(SentMessage(str(m.role), m.text or "") for m in context.messages),
        )
        try:
            await call_next()
        except BaseException as exc:
            record.error = explain_failure(exc)
            raise
        if context.stream:

            def finish(response: ChatResponse[Any]) -> ChatResponse[Any]:
                _finish(record, response)
                return response

            context.stream_result_hooks.append(finish)
        elif isinstance(context.result, ChatResponse):
            _finish(record, context.result)


def _finish(record: CallRecord, response: ChatResponse[Any]) -> None:
    record.reply = response.text or ""
    record.usage = usage_from_details(response.usage_details)
    record.finished = True
