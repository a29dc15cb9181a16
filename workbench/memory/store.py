"""The bounded working memory: one admission path, atomic batches, tickets, forget without residue."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import replace
from datetime import UTC, datetime

from workbench.memory.contract import SEED, Contract, parse_message
from workbench.memory.forget import ForgetPlan, asked_keys
from workbench.memory.ledger import EventKind, Ledger, MemoryEvent, Reason, ReasonCode
from workbench.memory.outcome import Outcome, Status
from workbench.memory.prompt import to_prompt_block
from workbench.memory.records import Fact, FactCandidate, MemoryTurn
from workbench.memory.rules import check_candidates, check_declarations, check_message, first_per_key
from workbench.memory.saved import SavedMemory
from workbench.memory.turns import OpenTurn, acting_for

# Receives the Outcome of each settled batch (or forget, or note), once, after memory's lock is released.
Subscriber = Callable[[Outcome], None]


def utc_now() -> datetime:
    return datetime.now(UTC)


class WorkingMemory:
    """At most `contract.max_facts` facts shared by every agent, changed only through verified batches.
    `contract` (the seed's unless a team declared its own) is the one owner of the limits every surface
    reads.

    Tickets: `begin_turn` issues one per user message, numbered in submission order across
    epochs. This is the one registry of open tickets: a ticket stays open until it settles, once
    (applied, rejected, stale, nothing declared or abandoned), even across a forget. It is stale
    when a forget advanced the epoch since it was issued, when it was already settled, or when a
    later turn has already applied: so a later turn's value is never overwritten by an earlier
    one's, whatever order extractions finish in. `wait_for_earlier` lets a caller admit in ticket
    order. Settling is synchronous, so a caller can always settle in a `finally`, even when
    cancelled.
    """

    def __init__(
        self, contract: Contract = SEED, *, ledger_capacity: int = 500, clock: Callable[[], datetime] = utc_now
    ) -> None:
        self.contract = contract
        self._lock = threading.RLock()
        self._clock = clock
        self._facts: dict[str, Fact] = {}
        self._epoch = 0
        self._turn = 0
        self._last_applied = 0
        self._open: dict[int, MemoryTurn] = {}
        self._waiters: list[tuple[asyncio.AbstractEventLoop, asyncio.Future[None]]] = []
        self.ledger = Ledger(ledger_capacity)
        self._subscribers: list[Subscriber] = []
        self._subscribers_lock = threading.Lock()

    @classmethod
    def restored(
        cls,
        saved: SavedMemory,
        contract: Contract | None = None,
        *,
        ledger_capacity: int = 500,
        clock: Callable[[], datetime] = utc_now,
    ) -> WorkingMemory:
        """Memory as `saved()` left it: the same facts, ledger, epoch and counters, no open ticket; under
        `contract` (default: the one it was saved under), which must admit everything that one did
        (ValueError, naming both, when it does not: no fact or event may fall outside the contract
        that a forget of everything reaches)."""
        contract = contract or saved.contract
        if problem := contract.cannot_open(saved.contract):
            raise ValueError(problem)
        memory = cls(contract, ledger_capacity=ledger_capacity, clock=clock)
        memory._facts = {f.key: f for f in saved.facts}
        memory._epoch, memory._turn, memory._last_applied = saved.epoch, saved.turn, saved.last_applied
        memory.ledger = Ledger(ledger_capacity, saved.ledger, saved.ledger_seq)
        return memory

    def saved(self) -> SavedMemory:
        """What a restart needs to resume exactly (see `SavedMemory`)."""
        with self._lock:
            return SavedMemory(
                facts=self.facts(),
                ledger=tuple(self.ledger.latest()),
                ledger_seq=self.ledger.seq,
                epoch=self._epoch,
                turn=self._turn,
                last_applied=self._last_applied,
                contract=self.contract,
            )

    @property
    def epoch(self) -> int:
        return self._epoch

    @property
    def turn(self) -> int:
        """The number of the latest ticket issued."""
        return self._turn

    def subscribe(self, callback: Subscriber) -> Callable[[], None]:
        """Call `callback` with the Outcome of every later batch, from the thread that settled it:
        one call per batch, carrying all its events. Returns an unsubscribe function."""
        with self._subscribers_lock:
            self._subscribers.append(callback)

        def unsubscribe() -> None:
            with self._subscribers_lock:
                if callback in self._subscribers:
                    self._subscribers.remove(callback)

        return unsubscribe

    def facts(self) -> tuple[Fact, ...]:
        """A snapshot, oldest first (turn, then key): the first fact is the next to be evicted."""
        with self._lock:
            return tuple(sorted(self._facts.values(), key=lambda f: (f.turn, f.key)))

    def prompt_block(self) -> str:
        return to_prompt_block(self.facts())

    def is_open(self, turn: MemoryTurn) -> bool:
        """Whether this ticket was issued and has not settled yet (a forget does not settle it)."""
        with self._lock:
            return self._open.get(turn.number) == turn

    def ticket(self, number: int) -> MemoryTurn | None:
        """The open ticket with this number, if any."""
        with self._lock:
            return self._open.get(number)

    def open_tickets(self) -> tuple[MemoryTurn, ...]:
        with self._lock:
            return tuple(self._open.values())

    def begin_turn(self, user_text: str, origin: str = "") -> MemoryTurn:
        with self._lock:
            self._turn += 1
            ticket = MemoryTurn(epoch=self._epoch, number=self._turn, user_text=user_text, origin=origin)
            self._open[ticket.number] = ticket
            return ticket

    async def wait_for_earlier(self, turn: MemoryTurn) -> None:
        """Return once every earlier ticket of `turn`'s epoch has settled; at once for a stale ticket.
        Waiting changes nothing, so a cancelled wait leaves the ticket for its caller to settle."""
        loop = asyncio.get_running_loop()
        while True:
            with self._lock:
                if turn.epoch != self._epoch or not any(
                    t.epoch == turn.epoch and t.number < turn.number for t in self._open.values()
                ):
                    return
                waiter = loop.create_future()
                self._waiters.append((loop, waiter))
            try:
                await waiter
            finally:
                with self._lock:
                    if (loop, waiter) in self._waiters:
                        self._waiters.remove((loop, waiter))

    def admit(
        self, turn: MemoryTurn, candidates: Sequence[FactCandidate], recorded_at: datetime | None = None
    ) -> Outcome:
        """Host check and store update as one step: the candidates must be exactly the message's
        declarations and pass the store rules, or nothing changes."""
        return self._settle(turn, candidates, recorded_at, match_declarations=True)

    def apply(self, turn: MemoryTurn, candidates: Sequence[FactCandidate], recorded_at: datetime) -> Outcome:
        """The store rules alone, without the match against declarations."""
        return self._settle(turn, candidates, recorded_at, match_declarations=False)

    def reject(self, turn: MemoryTurn, code: ReasonCode, detail: str) -> Outcome:
        """Settle a ticket whose batch never became candidates (for example unreadable writer output)."""
        return self._locked_then_notify(lambda: self._stale(turn) or self._reject(turn, (Reason(code, None, detail),)))

    def abandon(self, turn: MemoryTurn, detail: str) -> Outcome:
        """Settle a ticket whose turn failed before extraction (model error, timeout, cancel)."""

        def settle() -> Outcome:
            if stale := self._stale(turn):
                return stale
            self._release(turn)
            return self._outcome(Status.ABANDONED, self._record(EventKind.ABANDONED, turn, detail=detail))

        return self._locked_then_notify(settle)

    def note(self, detail: str, origin: str = "") -> MemoryEvent:
        """Record something that changes how updates arrive, not what memory holds (a writer
        stepping down to another output format, say). Notes change no fact."""

        def run() -> Outcome:
            event = self.ledger._record(
                kind=EventKind.NOTE, at=self._clock(), epoch=self._epoch, origin=origin, detail=detail
            )
            return Outcome(Status.NOTED, (event,))

        return self._locked_then_notify(run).events[0]

    def plan(self, keys: str | tuple[str, ...] | None, declared: Iterable[str] = ()) -> ForgetPlan:
        """What forgetting `keys` (one key, several, or None: everything) removes: every value memory
        knows for them (the facts', and the replaced and evicted ones their events still hold) and the
        `declared` values the holders of text found, and which facts go (`ForgetPlan.removes`).
        `Forgetting` gathers those; a bare memory can plan without them."""
        asked = asked_keys(keys)
        every = self.contract.key_set if asked is None else frozenset(asked)
        with self._lock:
            facts = tuple(self._facts.values())
            values = {f.value for f in facts if f.key in every}
            for event in self.ledger.latest():
                if event.key in every:
                    values |= event.values_of(event.key)
        plan = ForgetPlan(asked, every, frozenset(v for v in values.union(declared) if v))
        kept = {f.key for f in plan.kept(facts)}
        return replace(plan, removes=tuple(f.key for f in facts if f.key not in kept))

    def erase(self, plan: ForgetPlan) -> Outcome:
        """Apply a forget's plan to memory (plans come from `Forgetting`, the one place a forget goes
        through): remove the keys' facts, narrow the others' quotations (`ForgetPlan.kept`), blank the
        plan's values in the ledger, and advance the epoch so no earlier ticket can apply. Afterwards
        no fact, event or prompt block holds them."""
        asked = plan.asked
        key = asked[0] if asked is not None and len(asked) == 1 else None  # the event's key: one asked

        def run() -> Outcome:
            before = self._facts
            self._facts = {f.key: f for f in plan.kept(before.values())}
            removed = len(before) - len(self._facts)
            holding = [k for k in before if k not in self._facts and k not in plan.keys]
            if asked is None:
                detail = f"Forgot every fact ({removed} removed)."
            elif key is not None:
                detail = f"Forgot {key}." if removed or plan.values else f"Forgot {key} (it was not stored)."
            else:
                absent = [k for k in asked if k not in before]
                were = "was" if len(absent) == 1 else "were"
                none = "none of them was" if len(absent) == len(asked) else f"{', '.join(absent)} {were} not"
                detail = f"Forgot {plan.what} ({none} stored)." if absent else f"Forgot {plan.what}."
            if holding:
                held = "it held" if len(holding) == 1 else "each held"
                detail += f" Removed {', '.join(holding)} too: {held} a forgotten value."
            self.ledger._redact(plan.redact)
            self._epoch += 1
            return self._outcome(Status.FORGOTTEN, self._record(EventKind.FORGOTTEN, None, key=key, detail=detail))

        return self._locked_then_notify(run)

    @contextmanager
    def open_turn(self, user_text: str, origin: str = "") -> Iterator[OpenTurn]:
        """The one way a turn is opened and closed: issues its ticket, makes it the current turn of
        everything run inside (the provider that settles it, the calls it makes), and settles it on the
        way out if nothing did (a failure, a cancel), with the `ending` the caller last set."""
        opened = OpenTurn(self.begin_turn(user_text, origin))
        try:
            with acting_for(opened.ticket):
                yield opened
        finally:
            if self.is_open(opened.ticket):
                self.abandon(opened.ticket, opened.ending)

    # -- internals, called with the lock held ---------------------------------------------

    def _locked_then_notify(self, action: Callable[[], Outcome]) -> Outcome:
        with self._lock:
            outcome = action()
            waiters, self._waiters = self._waiters, []
        for loop, waiter in waiters:  # whatever settled or forgot may let a waiting turn go on
            loop.call_soon_threadsafe(_wake, waiter)
        with self._subscribers_lock:
            subscribers = list(self._subscribers)
        for callback in subscribers:
            callback(outcome)
        return outcome

    def _settle(
        self,
        turn: MemoryTurn,
        candidates: Sequence[FactCandidate],
        recorded_at: datetime | None,
        *,
        match_declarations: bool,
    ) -> Outcome:
        when = _as_utc(recorded_at) if recorded_at is not None else None

        def run() -> Outcome:
            if unreadable := check_message(turn.user_text):
                return self._reject(turn, (unreadable,))
            if stale := self._stale(turn):
                return stale
            parsed = parse_message(turn.user_text)
            # A mismatch with the declarations is the most telling reason, so it is listed first.
            reasons = check_declarations(parsed, candidates, self.contract) if match_declarations else []
            reasons += check_candidates(turn.user_text, candidates, self.contract)
            if reasons:
                return self._reject(turn, first_per_key(reasons), candidates)
            self._release(turn)
            if not candidates:
                return self._outcome(Status.NOTHING_DECLARED, self._record(EventKind.NOTHING_DECLARED, turn))
            own_text = {k: s.text for k, s in parsed.segments.items()}
            return self._store(turn, candidates, when or self._clock(), own_text)

        return self._locked_then_notify(run)

    def _stale(self, turn: MemoryTurn) -> Outcome | None:
        if turn.epoch != self._epoch:
            why = (
                "it was issued before a forget, so it may not bring anything back"
                if turn.epoch < self._epoch
                else "its ticket was never issued"
            )
        elif self._open.get(turn.number) != turn:
            why = "its ticket was already settled or never issued"
        elif turn.number <= self._last_applied:
            why = f"a later turn ({self._last_applied}) has already updated memory"
        else:
            return None
        self._release(turn)
        return self._outcome(Status.STALE, self._record(EventKind.STALE, turn, detail=why))

    def _release(self, turn: MemoryTurn) -> None:
        if self._open.get(turn.number) == turn:
            del self._open[turn.number]

    def _reject(
        self, turn: MemoryTurn, reasons: tuple[Reason, ...], candidates: Sequence[FactCandidate] = ()
    ) -> Outcome:
        self._release(turn)
        event = self._record(EventKind.REJECTED, turn, keys=tuple(c.key for c in candidates), reasons=reasons)
        return self._outcome(Status.REJECTED, event)

    def _store(
        self, turn: MemoryTurn, candidates: Sequence[FactCandidate], when: datetime, own_text: dict[str, str]
    ) -> Outcome:
        events: list[MemoryEvent] = []
        for c in candidates:
            previous = self._facts.get(c.key)
            self._facts[c.key] = Fact(c.key, c.value, c.evidence, own_text.get(c.key, c.evidence), turn.number, when)
            kind = EventKind.REPLACED if previous is not None and previous.value != c.value else EventKind.ADMITTED
            events.append(
                self._record(
                    kind,
                    turn,
                    key=c.key,
                    value=c.value,
                    previous=previous.value if previous else None,
                    evidence=c.evidence,
                )
            )
        while len(self._facts) > self.contract.max_facts:
            oldest = min(self._facts.values(), key=lambda f: (f.turn, f.key))
            del self._facts[oldest.key]
            events.append(
                self._record(
                    EventKind.EVICTED,
                    turn,
                    key=oldest.key,
                    value=oldest.value,
                    evidence=oldest.evidence,
                    fact_turn=oldest.turn,
                    detail=f"the store holds at most {self.contract.max_facts} facts",
                )
            )
        self._last_applied = turn.number
        return Outcome(Status.APPLIED, tuple(events))

    def _record(self, kind: EventKind, turn: MemoryTurn | None, **fields: object) -> MemoryEvent:
        return self.ledger._record(
            kind=kind,
            at=self._clock(),
            epoch=self._epoch,
            turn=turn.number if turn else None,
            origin=turn.origin if turn else "",
            **fields,
        )

    @staticmethod
    def _outcome(status: Status, event: MemoryEvent) -> Outcome:
        return Outcome(status, (event,))


def _wake(waiter: asyncio.Future[None]) -> None:
    if not waiter.done():
        waiter.set_result(None)


def _as_utc(moment: datetime) -> datetime:
    if moment.tzinfo is None or moment.utcoffset() is None:
        raise ValueError("recorded_at must be timezone-aware (UTC)")
    return moment.astimezone(UTC)
