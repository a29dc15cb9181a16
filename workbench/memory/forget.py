"""One forget: what it removes is worked out once, here, and every holder of text applies that plan.

A forget of a key removes every value the store knew for it (current, replaced, evicted) and every
value any text a holder keeps declared for it (admitted or not: a rejected batch's `priority=P9` is
forgotten too). A forget of everything removes every key of memory's contract. Each holder of user or model text
(agent sessions, call log, transcript, recall store, input undo, any memory added later) registers
with `Forgetting` and applies the same `ForgetPlan`. Scrubbing blanks whole declarations and whole
occurrences of a value, never a piece of another word or number: forgetting `version=2` leaves
`SQL Server 2022` whole. A forget reports counts per holder, never the values.
"""

from __future__ import annotations

import asyncio
import inspect
import json
import re
from collections.abc import Awaitable, Callable, Coroutine, Iterable, Mapping
from dataclasses import dataclass, field, replace
from functools import cached_property
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from workbench.memory.contract import SEGMENT_SEPARATOR, parse_message
from workbench.memory.forget_record import Journal as Journal
from workbench.memory.forget_record import release_garbage as release_garbage
from workbench.memory.holder_kinds import (
    STILL_HOLDS,
    UNREACHABLE,
    DoesMore,
    Itemised,
    KeepsOutside,
    NotReached,
    StillHolds,
    Unreachable,
)
from workbench.memory.ledger import MemoryEvent
from workbench.memory.outcome import Outcome
from workbench.text import clip, escape_json

if TYPE_CHECKING:  # records loads pydantic, which the TUI does not load to open
    from workbench.memory.records import Fact

FORGOTTEN = "(forgotten)"
_WORD_EDGE = re.compile(r"\w")
# A holder's failure is shown in the ledger; its text is scrubbed and bounded like any echo.
_FAILURE_CHARS = 300
# Every character but an ASCII letter that a case-insensitive match (`re.IGNORECASE`) takes for an
# ASCII letter, with that letter: found by trying each code point against each letter (Python 3.11).
# No character but itself matches an ASCII digit or punctuation mark.
LOOKALIKES = ("\u0130\u0131\u017f\u212a", "iisk")  # capital I with dot, dotless i, long s, Kelvin sign


def _occurrence(value: str) -> str:
    """`value` as a pattern that matches it whole: not inside a longer word or number. The value comes
    first and what precedes it is checked from its end (a look-behind over the value too), so the
    engine jumps to where a value can begin: a pattern that opens with a look-behind is tried at every
    position of every text, twenty times slower over a hundred thousand stored messages."""
    escaped = re.escape(value)
    before = rf"(?<!\w{escaped})(?<!\d[.,]{escaped})" if _WORD_EDGE.match(value[0]) else ""
    after = r"(?!\w)(?![.,]\d)" if _WORD_EDGE.match(value[-1]) else ""
    return f"{escaped}{before}{after}"


def written(value: str) -> frozenset[str]:
    """`value` as typed and as JSON writes it inside a string: JSON with and without ASCII escapes, and
    the facts block's quoting (hidden characters and `<>` escaped). A reply that repeats a facts block
    line, or a JSON file, holds the value escaped as much as a text that quotes it raw."""
    encoded = json.dumps(value, ensure_ascii=False)
    forms = (encoded, json.dumps(value), escape_json(encoded), escape_json(encoded, also="<>"))
    return frozenset({value, *(form[1:-1] for form in forms)})


def asked_keys(keys: str | Iterable[str] | None) -> tuple[str, ...] | None:
    """What a forget is asked for, as a plan names it: one key or several, in the order asked and each
    once; None for everything."""
    if keys is None:
        return None
    asked = (keys,) if isinstance(keys, str) else tuple(dict.fromkeys(keys))
    if not asked:
        raise ValueError("a forget names at least one key (None: everything)")
    return asked


@dataclass(frozen=True)
class ForgetPlan:
    """What one forget removes. `asked`: the keys asked for, one or several, in order (None: a forget of
    everything); `keys` every key it forgets. `completing`: the forget a crash cut short, applied again at
    start; a holder that deletes first and erases after (a recall file, a table) erases even when it finds
    nothing left to delete, since the cut-short run may have deleted and stopped before the erase.
    `unread`: the holders whose text could not be read while planning (a store another process holds, or
    that is corrupt), and why: the values they declare are not in the plan, and the forget tries them all
    the same (and reports them if they fail again). `removes`: memory's facts it removes, by key, as
    planned (those asked for and those whose values hold a forgotten one): a plan confirmed by the user
    is applied only while it still removes just these (`Forgetting.ask`)."""

    asked: tuple[str, ...] | None
    keys: frozenset[str]
    values: frozenset[str]
    completing: bool = False
    unread: Mapping[str, str] = field(default_factory=dict, compare=False)
    removes: tuple[str, ...] = ()

    @property
    def everything(self) -> bool:
        return self.asked is None

    @property
    def what(self) -> str:
        """The keys asked for, as the ledger and the reports name them ("customer", "customer, module"),
        or "every fact"."""
        return "every fact" if self.asked is None else ", ".join(self.asked)

    @cached_property
    def _pattern(self) -> re.Pattern[str] | None:
        if not self.values:
            return None
        longest_first = sorted({form for value in self.values for form in written(value)}, key=len, reverse=True)
        return re.compile("|".join(_occurrence(v) for v in longest_first), re.IGNORECASE)

    @cached_property
    def needles(self) -> tuple[str, ...] | None:
        """What a store can look for in its own query instead of reading every text: a text can `hold`
        this forget only if it holds "=" (a declaration), one of the LOOKALIKES, or one of these (each
        value's written forms, lowercased) with ASCII letters compared regardless of case. So a store
        may return just those texts, a superset, and `holds` decides. None when a value is not ASCII
        (case rules beyond ASCII differ between Python and SQL): every text must be read."""
        forms = {form for value in self.values for form in written(value)}
        if not all(form.isascii() for form in forms):
            return None
        return tuple(sorted({form.lower() for form in forms}))

    def widened(self, values: Iterable[str]) -> ForgetPlan:
        """The same forget with more values (what a holder found declared in its own text)."""
        more = frozenset(v for v in values if v) - self.values
        return self if not more else replace(self, values=self.values | more)

    def holds(self, text: str) -> bool:
        """Whether `text` holds a forgotten value whole (as typed or as JSON writes it), or declares a
        forgotten key (with a value: `customer=(forgotten)`, what a forget leaves, holds none)."""
        if self._pattern is not None and self._pattern.search(text):
            return True
        if "=" not in text or not self.keys:
            return False
        declared = parse_message(text).declarations
        return any(declared[key] != FORGOTTEN for key in self.keys.intersection(declared))

    def scrub(self, text: str) -> str:
        """`text` with each declaration of a forgotten key blanked and each whole occurrence of a
        forgotten value replaced by "(forgotten)". Text that holds neither comes back unchanged."""
        if "=" in text and self.keys.intersection(parse_message(text).declarations):
            text = "".join(self._blank_declaration(part) for part in SEGMENT_SEPARATOR.split(text))
        return text if self._pattern is None else self._pattern.sub(FORGOTTEN, text)

    def kept(self, facts: Iterable[Fact]) -> tuple[Fact, ...]:
        """`facts` after this forget, in the same order: none of a forgotten key, none whose own value
        holds a forgotten value (`log=/var/log/billing/export.log` after forgetting `module=Billing`),
        and each other whose quotation holds a forgotten value keeps only its own declaration
        (`database=SQL Server 2022` out of `module=Billing; database=SQL Server 2022; version=2` after
        forgetting `version`). Memory and every copy of its facts (a running turn's held batches) apply
        this one rule."""
        return tuple(
            replace(f, evidence=f.declaration) if self.holds(f.evidence) else f
            for f in facts
            if not (self.everything or f.key in self.keys or self.holds(f.value))
        )

    def redact(self, event: MemoryEvent) -> MemoryEvent:
        """`event` as the ledger keeps it after this forget (see `MemoryEvent.redact`), for each key asked."""
        if self.asked is None:
            return event.redact(None, self.holds)
        for key in self.asked:
            event = event.redact(key, self.holds)
        return event

    def _blank_declaration(self, segment: str) -> str:
        key, sep, value = segment.partition("=")
        if not sep or key.strip() not in self.keys or not value.strip():
            return segment
        lead = value[: len(value) - len(value.lstrip())]
        trail = value[len(value.rstrip()) :]
        return f"{key}={lead}{FORGOTTEN}{trail}"


def declared_in(texts: Iterable[str], keys: frozenset[str]) -> set[str]:
    """Every value the `texts` declare for `keys` (`key=value`, any declaration, not only the last).
    The mark a forget leaves (`customer=(forgotten)`) is no value: taken for one, every later forget
    of the key found it, rewrote the text unchanged and counted it, and F3 said the text held the key."""
    found: set[str] = set()
    for text in texts:
        if "=" not in text:
            continue
        for part in SEGMENT_SEPARATOR.split(text):
            key, sep, value = part.partition("=")
            if sep and key.strip() in keys and value.strip() not in ("", FORGOTTEN):
                found.add(value.strip())
    return found


class Holder(Protocol):
    """Anything that keeps user or model text. `declared` tells the plan what values its text declares
    for the keys; `erase` applies the plan and returns how many of its `unit` it removed or scrubbed,
    or raises `NotReached` when it has no way to reach what it holds."""

    @property
    def name(self) -> str: ...

    @property
    def unit(self) -> str: ...

    async def declared(self, keys: frozenset[str]) -> set[str]: ...

    async def erase(self, plan: ForgetPlan) -> int: ...


@dataclass(frozen=True)
class TextHolder:
    """A holder made of two functions: the texts it keeps now, and how it applies a plan."""

    name: str
    unit: str
    texts: Callable[[], Iterable[str]]
    apply: Callable[[ForgetPlan], int | Awaitable[int]]

    async def declared(self, keys: frozenset[str]) -> set[str]:
        return declared_in(self.texts(), keys)

    async def erase(self, plan: ForgetPlan) -> int:
        done = self.apply(plan)
        return await done if inspect.isawaitable(done) else done


@runtime_checkable
class WrittenDuringTurns(Protocol):
    """A holder a turn running during a forget may still write to after it (a provider on the user's
    agents, which the turn runs on its old session): `again` applies the plan to what it holds once that
    turn has ended (`Forgetting.again`)."""

    async def again(self, plan: ForgetPlan) -> int: ...


@dataclass(frozen=True)
class ForgetReport:
    """What a forget did: memory's outcome, and per holder a count (or why it could not reach it):
    `removed` as a number, `counts` in words with the holder's unit. `failures`: holders that failed
    (the journal is kept, the next start forgets again); `unreached`: holders that cannot be reached
    at all (`NotReached`), said every time and never retried."""

    outcome: Outcome
    counts: dict[str, str] = field(default_factory=dict)
    removed: dict[str, int] = field(default_factory=dict)
    failures: dict[str, str] = field(default_factory=dict)
    unreached: dict[str, str] = field(default_factory=dict)
    outside: dict[str, str] = field(default_factory=dict)  # what it keeps beyond what the workbench sees
    outcomes: dict[str, dict[str, str]] = field(default_factory=dict)  # per `Itemised` holder, each thing's fate
    also: dict[str, str] = field(default_factory=dict)  # what a holder did besides removing (`DoesMore`)

    def describe(self) -> str:
        did = {name for name, n in self.removed.items() if n or name in self.also}
        reached = ", ".join(f"{name}: {self.counts[name]}" for name in self.removed if name in did) or "nothing else"
        empty = ", ".join(name for name in self.removed if name not in did)
        missed = "".join(f"; {name} NOT reached ({why})" for name, why in {**self.unreached, **self.failures}.items())
        beyond = f"; outside this process, not known: {', '.join(self.outside)}" if self.outside else ""
        each = "".join(f"; {name}: {_grouped(done)}" for name, done in self.outcomes.items())
        return f"forget reached {reached}{f'; held nothing to remove: {empty}' if empty else ''}{missed}{beyond}{each}"


def _grouped(outcomes: Mapping[str, str]) -> str:
    """Each outcome once, after the things it befell: "resp_1, resp_2 deleted, verified gone"."""
    things: dict[str, list[str]] = {}
    for thing, what in outcomes.items():
        things.setdefault(what, []).append(thing)
    return "; ".join(f"{', '.join(named)} {what}" for what, named in things.items())


class Memory(Protocol):
    """What a forget needs of working memory (`workbench.memory.store.WorkingMemory`)."""

    def plan(self, keys: tuple[str, ...] | None, declared: Iterable[str] = ()) -> ForgetPlan: ...

    def erase(self, plan: ForgetPlan) -> Outcome: ...

    def note(self, detail: str, origin: str = "") -> MemoryEvent: ...


JOURNAL = "forget record"  # how a report names the journal when it could not be written

# What a forget is asked for: one key, several, None (everything), or a plan the user confirmed.
Asked = str | Iterable[str] | None | ForgetPlan


class PlanChanged(Exception):
    """A confirmed plan no longer plans what a forget would remove now: memory or a holder changed since it
    was made (a turn admitted or replaced a fact, a text declared another value). Nothing was forgotten;
    `plan` is the plan as it is now, to be shown and asked again. Its words name the keys, never a value."""

    def __init__(self, plan: ForgetPlan) -> None:
        super().__init__(f"memory changed since the forget of {plan.what} was asked: nothing was forgotten")
        self.plan = plan


class Forgetting:
    """The one place a forget goes through: recorded in the journal first (when there is one), then
    working memory (so no earlier ticket can bring a value back), then every registered holder with the
    same plan, in registration order; then what no holder keeps but the process still holds, garbage not
    yet collected, is freed (`release_garbage`); the record goes once every holder applied it.

    A forget is a barrier, placed when it is asked: `forget` asks it at its call, not when what it returns
    is first awaited, and forgets apply in the order asked. A turn asked after that call waits for it
    (`asked` at the turn's own call, then `settled`), so it starts after the forget took effect, on the
    sessions it left, and the forget never reaches what the turn stores."""

    def __init__(self, memory: Memory, journal: Journal | None = None) -> None:
        self._memory = memory
        self._journal = journal
        self._holders: list[Holder] = []
        self._one_at_a_time = asyncio.Lock()
        self._asked: list[asyncio.Future[ForgetReport]] = []
        # Each turn running now, and the plans of the forgets applied since it began: applied again to the
        # holders it may write to once it ends (kept only while such a turn runs: a plan holds the values).
        self._running: dict[int, list[ForgetPlan]] = {}
        self._turns = 0

    @property
    def holders(self) -> tuple[str, ...]:
        return tuple(h.name for h in self._holders)

    def unreachable(self) -> dict[str, str]:
        """The holders a forget cannot reach (or reach only in part), and why: for the forget's
        question, asked before the user answers."""
        return {h.name: why for h in self._holders if isinstance(h, Unreachable) and (why := h.unreachable)}

    def register(self, holder: Holder) -> Callable[[], None]:
        """Add a holder; returns the function that removes it again."""
        if any(h.name == holder.name for h in self._holders):
            raise ValueError(f"a holder named {holder.name} is already registered")
        self._holders.append(holder)
        return lambda: self._holders.remove(holder) if holder in self._holders else None

    async def plan(self, keys: str | Iterable[str] | None) -> ForgetPlan:
        """One plan for `keys` (one key, several, or None: everything): memory's values for them, widened
        by every value the holders' texts declare, in one pass over the holders; a holder that cannot be
        read is named in the plan's `unread` (one that cannot be read must not keep the forget from the
        others, nor its question from being asked). The question shows it and `ask` applies it."""
        asked = asked_keys(keys)
        every = self._memory.plan(asked).keys  # everything: every key of memory's contract
        declared: set[str] = set()
        unread: dict[str, Exception] = {}
        for holder in list(self._holders):
            try:
                declared |= await holder.declared(every)
            except Exception as exc:
                unread[holder.name] = exc
        plan = self._memory.plan(asked, declared)
        return replace(plan, unread={name: _failure(plan, exc) for name, exc in unread.items()}) if unread else plan

    def ask(self, forget: Asked, *, completing: bool = False) -> Awaitable[ForgetReport]:
        """Ask a forget now, at this call, and return what awaits its report: plan, apply to memory, then
        to every holder, one forget at a time, in the order asked. A forget once asked is carried out to
        the end even if what awaits it is cancelled, or nothing does: it is never left half done. Called
        before an event loop runs (`asyncio.run(...)`), it is asked when the loop starts what it returns.
        `forget`: the keys (one, several, or None: everything), planned when its turn comes; or a plan
        `plan` made and the user confirmed, applied as it is, the same object, while it still plans what
        it planned: when memory or a holder changed since (a turn admitted or replaced a fact, a text
        declared another value), nothing is forgotten and it raises `PlanChanged` with the plan as it
        is now, to be asked again. `completing`: the journal's forget a crash cut short
        (`ForgetPlan.completing`)."""
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            return self._asked_when_run(forget, completing)
        return asyncio.shield(self._ask(forget, completing))

    def forget(self, forget: Asked, *, completing: bool = False) -> Coroutine[Any, Any, ForgetReport]:
        """`ask`, as a coroutine (for `asyncio.create_task`): the forget is asked at this call all the same."""
        return _report(self.ask(forget, completing=completing))

    def _ask(self, forget: Asked, completing: bool) -> asyncio.Future[ForgetReport]:
        asked = asyncio.ensure_future(self._forget(forget, completing))
        self._asked.append(asked)
        asked.add_done_callback(self._asked.remove)
        return asked

    async def _asked_when_run(self, forget: Asked, completing: bool) -> ForgetReport:
        return await asyncio.shield(self._ask(forget, completing))

    def asked(self) -> tuple[asyncio.Future[ForgetReport], ...]:
        """The forgets asked until now that have not ended: what a turn asked now must wait for."""
        return tuple(self._asked)

    async def settled(self, asked: Iterable[asyncio.Future[ForgetReport]] | None = None) -> None:
        """Return once every forget of `asked` (taken from `asked()` when the turn was asked; default:
        every forget asked so far) has ended, at once when none is under way; a cancel of the wait
        leaves them running."""
        waiting = [f for f in (self._asked if asked is None else asked) if not f.done()]
        if waiting:
            await asyncio.wait([asyncio.shield(f) for f in waiting])

    def turn_began(self) -> int:
        """A turn begins (after `settled`): its number, for `turn_ended`."""
        self._turns += 1
        self._running[self._turns] = []
        return self._turns

    def turn_ended(self, turn: int) -> list[ForgetPlan]:
        """Turn `turn` ended: the plans of the forgets applied while it ran (nearly always none), for `again`."""
        return self._running.pop(turn, [])

    async def again(self, plans: Iterable[ForgetPlan]) -> int:
        """Apply each of `plans` again, one forget at a time, to the holders a turn that ran through it may
        have written to after it (`WrittenDuringTurns`): a forget is a barrier for what that turn wrote
        too. How many places (or the holders' units) that cleared; a holder that fails is said in the
        ledger, as a forget says it."""
        cleared = 0
        plans = list(plans)
        async with self._one_at_a_time:
            for plan in plans:
                for holder in list(self._holders):
                    if not isinstance(holder, WrittenDuringTurns):
                        continue
                    try:
                        cleared += await holder.again(plan)
                    except NotReached:
                        continue
                    except Exception as exc:
                        why = _failure(plan, exc)
                        self._memory.note(f"after a turn that ran through a forget, {holder.name} NOT reached ({why})")
            if plans:
                await release_garbage()
        return cleared

    async def _forget(self, forget: Asked, completing: bool) -> ForgetReport:
        async with self._one_at_a_time:
            if isinstance(forget, ForgetPlan):
                now = await self.plan(forget.asked)
                if replace(now, completing=forget.completing) != forget:
                    raise PlanChanged(now)
                plan, unrecorded = forget, self._record(forget.asked)
            else:
                unrecorded = self._record(asked_keys(forget))
                plan = replace(await self.plan(forget), completing=completing)
            outcome = self._memory.erase(plan)
            report = await self._apply(plan, outcome, unrecorded)
            for plans in self._running.values():
                plans.append(plan)
            await release_garbage()  # what no holder keeps: after the plans a running turn's end applies again
            if self._journal is not None and not report.failures:
                try:
                    self._journal.end()
                except OSError as exc:  # every holder was reached: the next start only forgets again
                    why = clip(f"{type(exc).__name__}: {exc}", _FAILURE_CHARS)
                    report.failures[JOURNAL] = f"its record could not be removed ({why}); the next start forgets again"
            return report

    def _record(self, keys: tuple[str, ...] | None) -> str | None:
        """Record the forget (all its keys) before anything is touched; why it could not be, if so (the
        forget goes on: a full disk must not keep a value from being forgotten)."""
        if self._journal is None:
            return None
        try:
            self._journal.begin(keys)
        except OSError as exc:
            return clip(f"{type(exc).__name__}: {exc}", _FAILURE_CHARS)
        return None

    async def _apply(self, plan: ForgetPlan, outcome: Outcome, unrecorded: str | None = None) -> ForgetReport:
        report = ForgetReport(outcome)
        if unrecorded is not None:
            report.failures[JOURNAL] = f"a crash during this forget would leave it half done: {unrecorded}"
        for holder in list(self._holders):
            try:
                removed = report.removed[holder.name] = await holder.erase(plan)
                report.counts[holder.name] = f"{removed:,} {holder.unit}"
                if isinstance(holder, DoesMore) and (also := holder.also_done):
                    report.also[holder.name] = also
                    report.counts[holder.name] += f"; {also}"
            except NotReached as exc:
                report.unreached[holder.name] = clip(plan.scrub(str(exc) or UNREACHABLE), _FAILURE_CHARS)
            except StillHolds as exc:
                report.failures[holder.name] = clip(plan.scrub(f"{STILL_HOLDS}: {exc}"), _FAILURE_CHARS)
            except Exception as exc:  # one holder's failure must not keep the forget from the others
                report.failures[holder.name] = _failure(plan, exc)
            if isinstance(holder, KeepsOutside) and (beyond := holder.outside):
                report.outside[holder.name] = beyond
            if isinstance(holder, Itemised) and (done := holder.outcomes()):
                report.outcomes[holder.name] = {thing: plan.scrub(what) for thing, what in done.items()}
        self._memory.note(report.describe(), origin="forget")
        return report


async def _report(asked: Awaitable[ForgetReport]) -> ForgetReport:
    return await asked


def _failure(plan: ForgetPlan, exc: Exception) -> str:
    """Why a holder failed, as the ledger, the question and the report say it: scrubbed and bounded."""
    return clip(plan.scrub(f"{type(exc).__name__}: {exc}"), _FAILURE_CHARS)
