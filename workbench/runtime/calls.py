"""What each model call was sent and what the provider reported, recorded by chat middleware.

An agent's own calls are recorded by its `RecordingMiddleware`. A memory that calls a model on its own
during an agent's turn (an extraction prompt, Mem0) records through that agent's recorder
(`recorder_of`), so the call is listed with the turn that caused it and counted in its usage. A call
the workbench does not make itself during a pane's turn (a context provider of the user's calling its
own client, `ClientCalls`; a workflow's agent, `workbench.runtime.workflows`) records through the
recorder of the pane whose turn it is (`pane_recorder`)."""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import threading
from collections import deque
from collections.abc import Awaitable, Callable, Iterable, Iterator
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from agent_framework import ChatContext, ChatMiddleware, ChatResponse, Message, ResponseStream

from workbench.memory.forget import ForgetPlan, declared_in
from workbench.memory.turns import current_turn
from workbench.runtime.deadline import CallTimedOut, Deadline
from workbench.runtime.failures import explain_failure
from workbench.runtime.guards import check_answer, mend_contents, mend_update
from workbench.runtime.usage import Usage, usage_from_details


class SentMessage(NamedTuple):
    role: str
    text: str


def as_sent(message: Message) -> tuple[str, str]:
    """A message as sent: its role and `Message.text` (its text contents joined by spaces). A message
    of one content, nearly every message, is read directly: a long conversation reads the whole
    history on every call, and the framework's property costs a generator and a join per message."""
    contents = message.contents
    if len(contents) == 1:
        only = contents[0]
        return str(message.role), (only.text or "") if only.type == "text" else ""
    return str(message.role), message.text or ""


@dataclass
class CallRecord:
    """One model call: the exact instructions and messages sent, the reply, and reported usage.

    The messages are kept as plain (role, text) tuples, which the garbage collector stops tracking:
    a long drift lab logs a million of them, and every full collection would walk them all."""

    seq: int
    purpose: str
    turn: int | None
    origin: str
    model: str
    instructions: str
    sent: tuple[tuple[str, str], ...]
    reply: str = ""
    usage: Usage | None = None
    finished: bool = False
    error: str = ""

    @property
    def messages(self) -> tuple[SentMessage, ...]:
        return tuple(SentMessage(role, text) for role, text in self.sent)

    @property
    def request_chars(self) -> int:
        return len(self.instructions) + sum(len(text) for _, text in self.sent)


@dataclass
class CallLog:
    """The latest calls of a runtime, oldest first, and running usage totals per origin (the pane
    or run a call served). A total is unknown (None) once any completed call reported nothing."""

    capacity: int = 200
    _records: deque[CallRecord] = field(default_factory=deque)
    _seq: itertools.count[int] = field(default_factory=lambda: itertools.count(1))
    _totals: dict[str, Usage | None] = field(default_factory=dict)
    # Mem0 makes its calls from worker threads: a record is added there while the app reads the log.
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def start(self, purpose: str, model: str, instructions: str, messages: Iterable[tuple[str, str]]) -> CallRecord:
        turn = current_turn.get()
        sent = tuple(messages)
        with self._lock:
            record = CallRecord(
                next(self._seq),
                purpose,
                turn.number if turn else None,
                turn.origin if turn else purpose,
                model,
                instructions,
                sent,
            )
            self._records.append(record)
            while len(self._records) > self.capacity:
                self._records.popleft()
        return record

    def finish(self, record: CallRecord, response: ChatResponse[Any]) -> None:
        record.reply = response.text or ""
        self.settle(record, usage_from_details(response.usage_details))

    def settle(self, record: CallRecord, usage: Usage | None) -> None:
        """A call completed with what its provider reported (chat calls and embeddings requests alike)."""
        record.usage = usage
        record.finished = True
        with self._lock:
            total = self._totals.get(record.origin, Usage(0, 0))
            self._totals[record.origin] = None if total is None or record.usage is None else total + record.usage

    def fail(self, record: CallRecord, exc: BaseException) -> None:
        """The call ended without an answer. The first failure is the one recorded. What it used counts
        when its server reported it (a reply cut off at the token limit was answered, with its usage);
        else it is unknown (such a reply used thousands of tokens), and so is its origin's total."""
        first = not record.error
        if first:
            record.error = "the call was cancelled" if isinstance(exc, asyncio.CancelledError) else explain_failure(exc)
        with self._lock:
            total = self._totals.get(record.origin, Usage(0, 0))
            if record.usage is None:
                self._totals[record.origin] = None
            elif first and total is not None:  # counted once, on the failure that ended it
                self._totals[record.origin] = total + record.usage

    def ended_open(self, purpose: str, turn: int, exc: BaseException) -> None:
        """The calls for `purpose` of ticket `turn` still running failed with `exc`: their consumer
        stopped reading them between two pulls, where the recorder does not see it."""
        for record in self.records(purpose=purpose, turn=turn):
            if not record.finished and not record.error:
                self.fail(record, exc)

    def texts(self) -> Iterator[str]:
        """Every text the records hold: instructions, messages sent, replies and errors."""
        for record in self._listed():
            yield from _texts_of(record)

    def forget(self) -> int:
        """Drop every record (they quote the histories a forget replaces, forgotten values included)
        and say how many. The usage totals (numbers) stay; a call still running finishes into a
        record nothing lists."""
        with self._lock:
            dropped = len(self._records)
            self._records.clear()
        return dropped

    def forget_holding(self, holds: Callable[[str], bool]) -> int:
        """Drop every record any text of which `holds` finds, and say how many: a forget applied again
        after a turn that ran through it, whose calls after the forget were recorded anew."""
        with self._lock:
            kept = [r for r in self._records if not any(holds(t) for t in _texts_of(r))]
            dropped = len(self._records) - len(kept)
            self._records = deque(kept)
        return dropped

    def total(self, origin: str) -> Usage | None:
        """Reported usage of every completed call for `origin`; zero before any call."""
        with self._lock:
            return self._totals.get(origin, Usage(0, 0))

    def _listed(self) -> list[CallRecord]:
        with self._lock:
            return list(self._records)

    def latest(self, *, purpose: str, origin: str) -> CallRecord | None:
        """The newest call for `origin` with `purpose`, searched from the end (a long log stays cheap)."""
        with self._lock:
            return next((r for r in reversed(self._records) if r.purpose == purpose and r.origin == origin), None)

    def records(
        self, *, purpose: str | None = None, turn: int | None = None, origin: str | None = None
    ) -> list[CallRecord]:
        return [
            r
            for r in self._listed()
            if (purpose is None or r.purpose == purpose)
            and (turn is None or r.turn == turn)
            and (origin is None or r.origin == origin)
        ]


def _texts_of(record: CallRecord) -> Iterator[str]:
    yield record.instructions
    yield from (text for _, text in record.sent)
    yield record.reply
    yield record.error


@dataclass(frozen=True)
class CallLogHolder:
    """The call log as a holder of the one forget: a forget drops every record; applied again after a
    turn that ran through it (`WrittenDuringTurns`), the records that turn's later calls added and that
    hold a forgotten value (a provider's own call in its `after_run`, once the forget had ended)."""

    log: CallLog
    name: str = "call log"
    unit: str = "call record(s)"

    async def declared(self, keys: frozenset[str]) -> set[str]:
        return declared_in(self.log.texts(), keys)

    async def erase(self, plan: ForgetPlan) -> int:
        return self.log.forget()

    async def again(self, plan: ForgetPlan) -> int:
        return self.log.forget() if plan.everything else self.log.forget_holding(plan.holds)


class RecordingMiddleware(ChatMiddleware):
    """Records every chat call of one agent into a CallLog under a fixed purpose, bounds it by
    `timeout` seconds in total (retries and a streamed reply included), and refuses a reply that is
    not an answer (`check_answer`), so a call that fails, before or while streaming, is recorded as
    failed and fails its run before any history stores it. Unless `checked` is False: a memory's own
    call (`aside`) is recorded as it came back, and the memory judges what it got."""

    def __init__(
        self, log: CallLog, purpose: str, model: str, *, timeout: float | None = None, checked: bool = True
    ) -> None:
        self._log = log
        self._purpose = purpose
        self._model = model
        self._timeout = timeout
        self._checked = checked

    @property
    def log(self) -> CallLog:
        return self._log

    def aside(self, purpose: str, model: str | None = None) -> RecordingMiddleware:
        """A recorder for a call a memory makes for this agent's turn on its own (an extraction prompt):
        the same log and deadline, its own purpose, the reply left for the memory to judge (the
        framework skips a bad extraction; it never fails the agent's answer); on this agent's model
        unless `model` names the one the call went to."""
        return RecordingMiddleware(self._log, purpose, model or self._model, timeout=self._timeout, checked=False)

    async def process(self, context: ChatContext, call_next: Callable[[], Awaitable[None]]) -> None:
        if (claim := _around.get()) is not None:
            claim.taken = True  # a client's recorder around this call (`ClientCalls`) leaves it to this one
            _around.set(None)
        record = self._start(context)
        deadline = Deadline(self._timeout) if self._timeout is not None else None
        try:
            with deadline or contextlib.nullcontext():
                await call_next()
        except BaseException as exc:
            self._log.fail(record, exc)
            raise
        self._watch(context, record, deadline)

    def _start(self, context: ChatContext) -> CallRecord:
        instructions = context.options.get("instructions") if context.options else None
        return self._log.start(self._purpose, self._model, str(instructions or ""), map(as_sent, context.messages))

    def ended(self, context: ChatContext, exc: BaseException | None) -> None:
        """Record a call that has already been made, as sent (`context`): failed with `exc`, or answered
        (a streamed answer is recorded as it is read). For a recorder that could not be around the call."""
        record = self._start(context)
        if exc is not None:
            self._log.fail(record, exc)
        else:
            self._watch(context, record, None)

    def _watch(self, context: ChatContext, record: CallRecord, deadline: Deadline | None) -> None:
        """The call's answer, recorded as it comes: at once, or as its stream is read."""
        if isinstance(context.result, ResponseStream):
            context.result.with_pull_context_manager(lambda: _Pull(self._log, record, deadline))
            context.stream_transform_hooks.append(mend_update)

            def finish(response: ChatResponse[Any]) -> ChatResponse[Any]:
                # A call that already ended as failed (its consumer stopped reading: `CallLog.ended_open`)
                # stays failed, though closing its stream still finalizes the partial reply (Agent Framework 1.26).
                if not record.error:
                    self._finish(record, response, streamed=True)
                return response

            context.stream_result_hooks.append(finish)
        elif isinstance(context.result, ChatResponse):
            for message in context.result.messages:
                mend_contents(message.contents)
            self._finish(record, context.result, streamed=False)

    def _finish(self, record: CallRecord, response: ChatResponse[Any], *, streamed: bool) -> None:
        try:
            if self._checked:
                check_answer(response, streamed=streamed)
        except Exception as exc:
            # Not an answer (cut off at the token limit), but the server answered and said what it used.
            record.usage = usage_from_details(response.usage_details)
            self._log.fail(record, exc)
            raise
        self._log.finish(record, response)


# The recorder of the pane whose turn is running (`AgentRuntime` sets it for the turn): a call made during
# the turn that no recorder of the workbench's is around is recorded through it.
pane_recorder: ContextVar[RecordingMiddleware | None] = ContextVar("workbench_pane_recorder", default=None)


@contextlib.contextmanager
def recording_for(recorder: RecordingMiddleware | None) -> Iterator[None]:
    """While a pane's turn runs: calls no recorder of the workbench's is around record through `recorder`."""
    token = pane_recorder.set(recorder)
    try:
        yield
    finally:
        pane_recorder.reset(token)


@dataclass
class _Claim:
    taken: bool = False


# A `ClientCalls` around the call being made: the agent's own recorder, inside it, claims the call.
_around: ContextVar[_Claim | None] = ContextVar("workbench_client_call", default=None)


class ClientCalls(ChatMiddleware):
    """On a chat client of the user's that a context provider of theirs holds (`workbench.runtime.loaded`):
    each call made on it during a pane's turn that no recorder of the workbench's records (the provider's
    own call: the framework's sample extracts the user's name and age with one) is recorded through the
    pane's recorder (`pane_recorder`), as `purpose`, on `model`. Outside a turn it does nothing.

    Client middleware runs around the agent's own middleware: on a client the agent also answers on,
    its recorder, inside, claims the agent's calls, and this one records only the others, after the call
    (its answer as it is read). `watch`, when the client keeps what it is sent on the model service (its
    store's recorder's `ended`, `workbench.runtime.service_store`), is handed each such call too, answered:
    the ids the service returned for it are listed and a forget deletes them. A bound method: a walk of
    the provider's attributes (`workbench.runtime.inprocess`) does not enter it, so the store's record of
    what was sent is never read, nor cleared, as the provider's."""

    def __init__(self, purpose: str, model: str, watch: Callable[[ChatContext], None] | None = None) -> None:
        self.purpose = purpose
        self.model = model
        self.watch = watch

    async def process(self, context: ChatContext, call_next: Callable[[], Awaitable[None]]) -> None:
        pane = pane_recorder.get()
        if pane is None:
            await call_next()
            return
        claim = _Claim()
        token = _around.set(claim)
        failed: BaseException | None = None
        try:
            await call_next()
        except BaseException as exc:
            failed = exc
            raise
        finally:
            _around.reset(token)
            if not claim.taken:
                pane.aside(self.purpose, self.model).ended(context, failed)
                if failed is None and self.watch is not None:
                    self.watch(context)


def recorder_of(agent: object) -> RecordingMiddleware | None:
    """The recorder of an agent's calls (what a memory records its own calls for that agent's turn
    through), or None for an agent that records nothing."""
    middleware = getattr(agent, "middleware", None) or ()
    return next((m for m in middleware if isinstance(m, RecordingMiddleware)), None)


class _Pull:
    """Around each pull of a streamed reply: the call's deadline holds, and an error while
    streaming is recorded on the call."""

    def __init__(self, log: CallLog, record: CallRecord, deadline: Deadline | None) -> None:
        self._log = log
        self._record = record
        self._deadline = deadline

    def __enter__(self) -> None:
        if self._deadline is not None:
            self._deadline.__enter__()

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: object) -> None:
        try:
            if self._deadline is not None:
                self._deadline.__exit__(kind, exc, tb)
        except CallTimedOut as timed_out:
            self._log.fail(self._record, timed_out)
            raise
        if exc is not None and not isinstance(exc, StopAsyncIteration | GeneratorExit):
            self._log.fail(self._record, exc)
