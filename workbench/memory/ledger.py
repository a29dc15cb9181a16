"""Every outcome of a memory update as an event, kept in a bounded, subscribable ledger.

Events hold values only in fields that a forget can blank: `value`, `previous`,
`evidence` and reason details. Sentences are rendered from fields on demand, so a
redacted event cannot keep a forgotten value in a pre-rendered string.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from datetime import datetime
from enum import StrEnum

from workbench.memory.contract import MAX_FACTS, MAX_MESSAGE_CHARS
from workbench.memory.shown import quoted
from workbench.text import clip


class EventKind(StrEnum):
    ADMITTED = "admitted"
    REPLACED = "replaced"
    EVICTED = "evicted"
    REJECTED = "rejected"
    STALE = "stale"
    FORGOTTEN = "forgotten"
    NOTHING_DECLARED = "nothing_declared"
    ABANDONED = "abandoned"
    NOTE = "note"


_CALLER_DETAIL = frozenset({EventKind.ABANDONED, EventKind.NOTE})


class ReasonCode(StrEnum):
    UNKNOWN_KEY = "unknown_key"
    DUPLICATE_KEY = "duplicate_key"
    EMPTY_VALUE = "empty_value"
    VALUE_TOO_LONG = "value_too_long"
    EVIDENCE_MISSING = "evidence_missing"
    EVIDENCE_TOO_LONG = "evidence_too_long"
    EVIDENCE_NOT_IN_MESSAGE = "evidence_not_in_message"
    VALUE_NOT_IN_EVIDENCE = "value_not_in_evidence"
    TOO_MANY_FACTS = "too_many_facts"
    DECLARATION_MISMATCH = "declaration_mismatch"
    MESSAGE_TOO_LONG = "message_too_long"
    UNENCODABLE_TEXT = "unencodable_text"
    MALFORMED_OUTPUT = "malformed_output"


_GENERIC: dict[ReasonCode, str] = {
    ReasonCode.UNKNOWN_KEY: "the key is not one of the allowed keys",
    ReasonCode.DUPLICATE_KEY: "the key appears more than once in the batch",
    ReasonCode.EMPTY_VALUE: "the value is empty",
    ReasonCode.VALUE_TOO_LONG: "the value is longer than the contract allows",
    ReasonCode.EVIDENCE_MISSING: "no quotation of the message was given",
    ReasonCode.EVIDENCE_TOO_LONG: "the quotation is longer than the contract allows",
    ReasonCode.EVIDENCE_NOT_IN_MESSAGE: "the quotation is not an exact part of the message",
    ReasonCode.VALUE_NOT_IN_EVIDENCE: "the quotation does not contain the value",
    ReasonCode.TOO_MANY_FACTS: "one message carries more facts than the contract allows",
    ReasonCode.DECLARATION_MISMATCH: "the candidates do not match the message's key=value declarations",
    ReasonCode.MESSAGE_TOO_LONG: f"the message is longer than {MAX_MESSAGE_CHARS} characters",
    ReasonCode.UNENCODABLE_TEXT: "the message holds half of a surrogate pair and cannot be encoded as UTF-8",
    ReasonCode.MALFORMED_OUTPUT: "the writer's output is not a valid extraction",
}
# The same with the contract's limit, when the reason carries it (`Reason.limit`).
_LIMITED: dict[ReasonCode, str] = {
    ReasonCode.VALUE_TOO_LONG: "the value is longer than {limit:,} characters",
    ReasonCode.EVIDENCE_TOO_LONG: "the quotation is longer than {limit:,} characters",
    ReasonCode.TOO_MANY_FACTS: "one message may carry at most {limit} facts",
}

_REMOVED = "(removed by forget)"
_DETAIL_REMOVED = "its details were removed by a forget"
# Bounds on what an event may echo of what a user, a model or a server wrote: the rules quote at
# most one value or quotation per sentence, so these only ever cut hostile input.
MAX_KEY_ECHO = 64
MAX_DETAIL_CHARS = 4096
MAX_REASONS = 12


@dataclass(frozen=True)
class Reason:
    """Why one candidate (or, with `key` None, the whole batch) failed. `limit` is the contract's
    bound the candidate broke (a count or a length), for the reasons about one."""

    code: ReasonCode
    key: str | None
    detail: str
    limit: int | None = None

    def __post_init__(self) -> None:
        if self.key is not None:
            object.__setattr__(self, "key", clip(self.key, MAX_KEY_ECHO))
        object.__setattr__(self, "detail", clip(self.detail, MAX_DETAIL_CHARS))

    @property
    def generic(self) -> str:
        """The contract's words for the code, with no user text: the limit broken, when known."""
        if self.limit is not None and self.code in _LIMITED:
            return _LIMITED[self.code].format(limit=self.limit)
        return _GENERIC[self.code]

    def redacted(self) -> Reason:
        return replace(self, detail=self.generic)

    def sentence(self) -> str:
        # As typed: a look-alike key's foreign characters are named in the detail (explain_key).
        where = f"{quoted(self.key)}: " if self.key is not None else ""
        return f"{where}{self.detail} [{self.code}]"


@dataclass(frozen=True)
class MemoryEvent:
    seq: int
    kind: EventKind
    at: datetime
    epoch: int
    turn: int | None = None
    origin: str = ""
    key: str | None = None
    value: str | None = None
    previous: str | None = None
    evidence: str | None = None
    fact_turn: int | None = None
    keys: tuple[str, ...] = ()
    reasons: tuple[Reason, ...] = ()
    detail: str = ""
    redacted: bool = False
    more_reasons: int = 0

    def __post_init__(self) -> None:
        """Whatever the caller passed, an event holds bounded echoes: so a hostile batch of
        thousands of candidates or a 2 MB value makes one short event, not a huge one."""
        object.__setattr__(self, "detail", clip(self.detail, MAX_DETAIL_CHARS))
        object.__setattr__(self, "keys", tuple(clip(k, MAX_KEY_ECHO) for k in self.keys[:MAX_REASONS]))
        if len(self.reasons) > MAX_REASONS:
            object.__setattr__(self, "more_reasons", self.more_reasons + len(self.reasons) - MAX_REASONS)
            object.__setattr__(self, "reasons", self.reasons[:MAX_REASONS])

    def values_of(self, key: str) -> set[str]:
        """The values of `key` this event holds."""
        if self.key != key:
            return set()
        return {v for v in (self.value, self.previous) if v}

    def quotes_for(self, key: str, forgotten: Callable[[str], bool] = lambda text: False) -> bool:
        """Whether a forget of `key` would blank text a person or a model wrote that this event still
        holds: a value, a quotation, a caller's detail, or a reason that quotes one (memory's rules
        quote every such text with `quoted`). A reason in memory's own words only names `key`: a batch
        rejected because the writer proposed a key the message did not declare keeps its name, and
        no value of it."""
        redacted = self.redact(key, forgotten)
        if (redacted.value, redacted.previous, redacted.evidence, redacted.detail) != (
            self.value,
            self.previous,
            self.evidence,
            self.detail,
        ):
            return True
        return any(r != b and '"' in b.detail for r, b in zip(redacted.reasons, self.reasons, strict=True))

    def names(self, key: str) -> bool:
        """Whether this event names `key` (as its fact's key, or a reason's), value or no value."""
        return self.key == key or any(r.key == key for r in self.reasons)

    def redact(self, key: str | None = None, forgotten: Callable[[str], bool] = lambda text: False) -> MemoryEvent:
        """A copy without what a forget removed: everything when `key` is None; otherwise every
        field of an event about `key`, and any field elsewhere that holds a forgotten value
        (`forgotten` is the forget plan's test, so a value is matched whole, never inside a word)."""

        def holds(text: str | None) -> bool:
            return text is not None and (key is None or self.key == key or forgotten(text))

        def reason_holds(reason: Reason) -> bool:
            return key is None or reason.key in (key, None) or forgotten(reason.detail)

        # A detail given by a caller (a failed call's error, which a server may have written
        # around the user's message) is outside text; memory's own details quote no value.
        detail_holds = self.kind in _CALLER_DETAIL and bool(self.detail) and holds(self.detail)
        if not (
            any(holds(t) for t in (self.value, self.previous, self.evidence))
            or any(reason_holds(r) for r in self.reasons)
            or detail_holds
        ):
            return self
        return replace(
            self,
            value=None if holds(self.value) else self.value,
            previous=None if holds(self.previous) else self.previous,
            evidence=None if holds(self.evidence) else self.evidence,
            reasons=tuple(r.redacted() if reason_holds(r) else r for r in self.reasons),
            detail=_DETAIL_REMOVED if detail_holds else self.detail,
            redacted=True,
        )

    def describe(self) -> str:
        """One sentence a person understands. Text is literal: render it without markup."""
        turn = f"turn {self.turn}" if self.turn is not None else "no turn"
        value = _quoted(self.value)
        match self.kind:
            case EventKind.ADMITTED:
                return f"{self.key} = {value} admitted from {turn}, quoting {_quoted(self.evidence)}."
            case EventKind.REPLACED:
                return (
                    f"{self.key} replaced: {_quoted(self.previous)} -> {value} "
                    f"({turn}, quoting {_quoted(self.evidence)})."
                )
            case EventKind.EVICTED:
                # An event saved before contracts could be declared was evicted under the seed's.
                full = self.detail or f"the store holds at most {MAX_FACTS} facts"
                return f"{self.key} = {value} (turn {self.fact_turn}) evicted: {full} and it was the oldest."
            case EventKind.REJECTED:
                reasons = "; ".join(r.sentence() for r in self.reasons)
                if self.more_reasons:
                    reasons += f"; and {self.more_reasons:,} more failed candidates, not listed"
                return (
                    f"Rejected the whole batch of {turn}: {reasons}. Nothing was stored and no "
                    "fallback was attempted; the facts are as they were."
                )
            case EventKind.STALE:
                return f"Dropped the update of {turn} as stale: {self.detail}. Nothing changed."
            case EventKind.FORGOTTEN:
                return f"{self.detail} Updates issued before this point can no longer apply."
            case EventKind.NOTHING_DECLARED:
                return f"{turn.capitalize()} declares no key=value facts: nothing to admit."
            case EventKind.ABANDONED:
                return f"{turn.capitalize()} ended without a memory update: {self.detail}. Facts are unchanged."
            case EventKind.NOTE:
                return f"Note: {self.detail}."
        raise AssertionError(self.kind)


def _quoted(text: str | None) -> str:
    return _REMOVED if text is None else quoted(text)


class Ledger:
    """The latest events, oldest first, bounded to `capacity`. Not locked on its own:
    `WorkingMemory` writes it under its lock and tells its subscribers after releasing it."""

    def __init__(self, capacity: int = 500, events: Iterable[MemoryEvent] = (), seq: int = 0) -> None:
        """`events` and `seq` continue a ledger saved earlier (its latest events and last number)."""
        self._events: deque[MemoryEvent] = deque(events, maxlen=capacity)
        self._seq = max([seq, *(e.seq for e in self._events)])

    @property
    def seq(self) -> int:
        """The number of the latest event recorded."""
        return self._seq

    def _record(self, **fields: object) -> MemoryEvent:
        self._seq += 1
        event = MemoryEvent(seq=self._seq, **fields)  # type: ignore[arg-type]
        self._events.append(event)
        return event

    def _redact(self, redact: Callable[[MemoryEvent], MemoryEvent]) -> None:
        self._events = deque(map(redact, self._events), maxlen=self._events.maxlen)

    def latest(self, n: int | None = None) -> list[MemoryEvent]:
        """The last `n` events (all when None), oldest first."""
        events = list(self._events)
        return events if n is None else events[-n:] if n > 0 else []
