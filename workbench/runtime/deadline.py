"""One total time budget per model call (--timeout), including the client's retries and their sleeps.

The budget is enforced around every await of the call (the request, each pull of a streamed
reply), so a server that trickles bytes or asks to wait cannot keep a call past it. The OpenAI
SDK retries on its own; `bound_retries` makes it give up instead of sleeping past the budget, so a
429 that outlasts it is reported as the 429 it is, and never retries a refusal of the request's format
(llama.cpp's server refuses json_schema with a 500, which the SDK retried twice).
"""

from __future__ import annotations

import asyncio
import contextvars
from typing import Any

# What a server's refusal of the request's format says (`refuses_format`).
_FORMAT_WORDS = ("response_format", "schema", "json_object", "structured output", "grammar")

# The deadline of the model call running in this task, for the SDK's retry decision.
current_deadline: contextvars.ContextVar[Deadline | None] = contextvars.ContextVar("current_deadline", default=None)


class CallTimedOut(TimeoutError):
    """The call used its whole budget. `rate_limited`: the server was answering 429 meanwhile."""

    def __init__(self, seconds: float, *, rate_limited: bool) -> None:
        super().__init__(f"the model call took longer than {seconds:g} s")
        self.seconds = seconds
        self.rate_limited = rate_limited


class Deadline:
    """A sync context manager, entered around one await at a time in the running task (a plain
    `with`, so it also fits the framework's per-pull hooks of a streamed reply). The clock starts
    at the first entry."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self.rate_limited = False
        self._at: float | None = None
        self._task: asyncio.Task[Any] | None = None
        self._handle: asyncio.TimerHandle | None = None
        self._cancelling = 0
        self._expired = False
        self._token: contextvars.Token[Deadline | None] | None = None

    def remaining(self) -> float:
        if self._at is None:
            return self.seconds
        return self._at - asyncio.get_running_loop().time()

    def __enter__(self) -> Deadline:
        loop = asyncio.get_running_loop()
        if self._at is None:
            self._at = loop.time() + self.seconds
        self._task = asyncio.current_task()
        assert self._task is not None, "a deadline bounds an await inside a task"
        self._cancelling = self._task.cancelling()
        self._expired = False
        self._handle = loop.call_at(self._at, self._expire)
        self._token = current_deadline.set(self)
        return self

    def _expire(self) -> None:
        self._expired = True
        if self._task is not None:
            self._task.cancel()

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: object) -> None:
        if self._handle is not None:
            self._handle.cancel()
        if self._token is not None:
            current_deadline.reset(self._token)
        task, self._task = self._task, None
        ours = self._expired and isinstance(exc, asyncio.CancelledError) and task is not None
        if ours and task is not None and task.uncancel() <= self._cancelling:  # not the caller's cancel
            raise CallTimedOut(self.seconds, rate_limited=self.rate_limited) from exc


def bound_retries(sdk: Any) -> None:
    """Make an OpenAI SDK client (OpenAI or Azure) retry only when the wait it would sleep fits in
    the running call's deadline, and note a 429 on it. `_should_retry(response)` is the SDK's one
    decision point that sees the response (and its Retry-After) before it sleeps."""
    should_retry = sdk._should_retry

    def within_deadline(response: Any) -> bool:
        deadline = current_deadline.get()
        if deadline is not None and response.status_code == 429:
            deadline.rate_limited = True
        if not should_retry(response) or refuses_format(response.status_code, _read(response)):
            return False
        if deadline is None:
            return True
        wait = sdk._parse_retry_after_header(response.headers)
        return wait is None or wait < deadline.remaining()

    sdk._should_retry = within_deadline


def refuses_format(status: int | None, said: str) -> bool:
    """Whether a response with this status, saying `said`, refuses the request's format: asking again
    cannot change that answer (llama.cpp's server says so with a 500)."""
    return status in (400, 415, 422, 500, 501) and any(word in said.lower() for word in _FORMAT_WORDS)


def _read(response: Any) -> str:
    """What a failed response said, if its body was read (the SDK reads a reply that is not streamed)."""
    try:
        return str(response.text)
    except Exception:  # httpx.ResponseNotRead: a streamed reply, whose body the SDK has not read yet
        return ""
