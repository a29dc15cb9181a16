"""What the lab keeps of its model calls and of the libraries' warnings: only what the report shows.

Each call is tallied per policy as it starts and ends (calls per purpose, characters sent, a memory's
failed calls with the first reason); of the calls themselves only the latest few stay, for a probe
scores the latest agent request. Keeping every call's whole request made the lab's memory grow with
the square of its length (full history resends everything): 739 MB at 1,000 turns."""

from __future__ import annotations

import logging
import threading
import time
from collections import Counter
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any

from agent_framework import FileHistoryProvider

from workbench.agentmem import extracted
from workbench.agentmem.base import MEMORY_CALLS
from workbench.memory.turns import current_turn
from workbench.runtime.calls import CallLog, CallRecord

# Calls kept whole besides each policy's latest agent call (`latest_agent`, what a probe scores).
KEPT_CALLS = 8
# The libraries whose warnings a lab run takes into its report instead of letting them reach stderr.
LIBRARY_LOGGERS = ("agent_framework", "mem0")
# How the framework says an extraction stored nothing (agent_framework._harness._memory): the call
# itself answered, so no call failed, but the memory received nothing from it.
EXTRACTION_SKIPPED = "Skipping memory extraction"
# ... except when its call failed: that call is counted as a failed call already.
EXTRACTION_CALL_FAILED = "Skipping memory extraction: extractor call failed"


@dataclass
class LabCallLog(CallLog):
    """A call log that tallies every call per origin and keeps only the latest KEPT_CALLS."""

    capacity: int = KEPT_CALLS
    calls: dict[str, Counter[str]] = field(default_factory=dict)
    latest_agent: dict[str, CallRecord] = field(default_factory=dict)
    chars: Counter[str] = field(default_factory=Counter)
    memory_failed: Counter[str] = field(default_factory=Counter)
    first_failure: dict[str, tuple[int | None, str]] = field(default_factory=dict)
    _tally_lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def start(self, purpose: str, model: str, instructions: str, messages: Iterable[tuple[str, str]]) -> CallRecord:
        record = super().start(purpose, model, instructions, messages)
        with self._tally_lock:
            self.calls.setdefault(record.origin, Counter())[record.purpose] += 1
            self.chars[record.origin] += record.request_chars
            if purpose == "agent":
                self.latest_agent[record.origin] = record
        return record

    def fail(self, record: CallRecord, exc: BaseException) -> None:
        first = not record.error
        super().fail(record, exc)
        if first and record.purpose in MEMORY_CALLS:
            with self._tally_lock:
                self.memory_failed[record.origin] += 1
                self.first_failure.setdefault(record.origin, (record.turn, record.error))


@dataclass
class LibraryWarning:
    """One warning a library logged during a policy's run, with how often and from which turn."""

    message: str  # the first one as logged
    count: int
    first_turn: int | None


class _Collect(logging.Handler):
    def __init__(self, into: dict[str, dict[str, LibraryWarning]], policy: list[str]) -> None:
        super().__init__(logging.WARNING)
        self.into = into
        self.policy = policy

    def emit(self, record: logging.LogRecord) -> None:
        turn = current_turn.get()
        origin = turn.origin if turn else self.policy[0]
        seen = self.into.setdefault(origin, {})
        template = str(record.msg)  # one entry per kind of warning, not per value it quotes
        if template in seen:
            seen[template].count += 1
        else:
            seen[template] = LibraryWarning(self.format(record), 1, turn.number if turn else None)


@contextmanager
def library_warnings(into: dict[str, dict[str, LibraryWarning]], policy: list[str]) -> Iterator[None]:
    """While the block runs, the libraries' warnings go into `into` (by the policy whose turn logged
    them, else `policy[0]`, the one running) and not to stderr; afterwards the loggers are as they were."""
    handler = _Collect(into, policy)
    loggers = [logging.getLogger(name) for name in LIBRARY_LOGGERS]
    before = [(logger.propagate, logger.level) for logger in loggers]
    for logger in loggers:
        logger.addHandler(handler)
        logger.propagate = False
        if logger.getEffectiveLevel() > logging.WARNING:
            logger.setLevel(logging.WARNING)
    try:
        yield
    finally:
        for logger, (propagate, level) in zip(loggers, before, strict=True):
            logger.removeHandler(handler)
            logger.propagate = propagate
            logger.setLevel(level)


def skipped_extractions(warnings: dict[str, LibraryWarning]) -> tuple[int, str]:
    """How many extractions the framework skipped (each a warning), and the first one's text."""
    skipped = [
        w
        for template, w in warnings.items()
        if template.startswith(EXTRACTION_SKIPPED) and not template.startswith(EXTRACTION_CALL_FAILED)
    ]
    skipped.sort(key=lambda w: w.first_turn or 0)
    return sum(w.count for w in skipped), skipped[0].message if skipped else ""


def framework_parts() -> tuple[tuple[type, tuple[str, ...]], ...]:
    """The framework's providers that read and write their whole files every turn, and those methods:
    their time is the framework's cost, shown beside the lab's time instead of hidden in it. Extracted
    memory's (while the framework has it) include its extraction call to the model."""
    return ((FileHistoryProvider, ("get_messages", "save_messages")), *extracted.framework_parts())


_inside: ContextVar[bool] = ContextVar("workbench_drift_framework_part", default=False)


@contextmanager
def framework_time(into: dict[str, float], policy: list[str]) -> Iterator[None]:
    """While the block runs, the seconds spent in `framework_parts` are added to `into[policy[0]]` (the
    policy running); afterwards the classes are as they were."""
    originals: list[tuple[type, str, Any]] = []

    def timed(original: Any) -> Any:
        async def run(*args: Any, **kwargs: Any) -> Any:
            if _inside.get():  # one part calling another is timed once
                return await original(*args, **kwargs)
            started, token = time.perf_counter(), _inside.set(True)
            try:
                return await original(*args, **kwargs)
            finally:
                _inside.reset(token)
                into[policy[0]] = into.get(policy[0], 0.0) + time.perf_counter() - started

        return run

    for cls, names in framework_parts():
        for name in names:
            original = cls.__dict__[name]
            originals.append((cls, name, original))
            setattr(cls, name, timed(original))
    try:
        yield
    finally:
        for cls, name, original in originals:
            setattr(cls, name, original)
