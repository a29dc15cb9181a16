"""What is remembered right now, in every memory system the agents run: plain data a screen renders,
and the one place that works out which allowed keys' values each item holds.

Each system says what it holds (`held()`: the working memory's facts, the agents' histories, the
recall store, memory files, extracted memory, Mem0) as `HeldItem`s, one shape for all. `inventory`
then marks every item with the keys a forget of which would reach it, planned as the one forget plans
(`WorkingMemory.plan`: every value memory knows for a key, widened by every value the items' own text
declares for it), and with the values it still holds that the user has since corrected."""

from __future__ import annotations

from collections.abc import Awaitable, Collection, Iterable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Protocol

from workbench.memory.contract import Contract
from workbench.memory.forget import ForgetPlan, declared_in
from workbench.memory.ledger import EventKind
from workbench.memory.shown import quoted
from workbench.runtime.failures import explain_failure
from workbench.text import clip, json_strings

if TYPE_CHECKING:
    from agent_framework import Message

    from workbench.memory import Fact, MemoryEvent
    from workbench.runtime.view import MemorySnapshot

# How much of one item's text the inventory hands on (its keys are worked out on the whole text first);
# a screen shows less.
HELD_CHARS = 4000
# How much of a quotation a fact's description carries.
_EVIDENCE_CHARS = 120
# Why a memory system could not be read, as "What is remembered" shows it.
_FAILURE_CHARS = 300


@dataclass(frozen=True)
class HeldItem:
    """One thing a memory system holds now. `kind`: "fact", "ledger", "history", "file", "memory file",
    "index", "topic", "transcript", "state", "memory", "store" or "stored" (an id a model service keeps);
    `name`: the fact's key, or a file's path under its system's location, or a memory's id (a service's
    id); `size`: bytes on disk, None when it is not a
    file of its own. `keys` and `stale` are filled in by `inventory`: the allowed keys whose values it
    holds (a forget of any of them reaches it), and the values the user has since corrected that it
    still holds (highlight it). `described`: the description is text the memory keeps (a memory
    file's, which the model wrote), looked in for values like the content; otherwise it is the
    workbench's own words about the item (a turn, a time, a count), where a `2` is no value.
    `unknown`: why what it holds is not known here (kept by a model service, whose text this process did
    not see, or no longer keeps after a forget the service refused): its content is not all it holds, and
    no key found there means nothing."""

    kind: str
    name: str
    description: str
    content: str
    size: int | None = None
    keys: tuple[str, ...] = ()
    stale: tuple[str, ...] = ()
    described: bool = False
    unknown: str = ""


class Remembers(Protocol):
    """A memory system as the inventory lists it (`workbench.runtime.memories.AgentMemory` is one)."""

    @property
    def name(self) -> str: ...

    @property
    def location(self) -> str | None:
        """Where it keeps what it holds (a file, a folder, a server; never a password), if anywhere."""
        ...

    def describe(self) -> str: ...

    async def held(self) -> list[HeldItem]:
        """Everything it holds now, read now."""
        ...


@dataclass(frozen=True)
class RememberedSystem:
    """One memory system and what it holds. `location` None: in this process only, gone on exit.
    `unread`: why what it holds could not be read (its description says so too), None when it was."""

    name: str
    location: str | None
    description: str
    items: tuple[HeldItem, ...] = ()
    unread: str | None = None

    @property
    def size(self) -> int | None:
        """Bytes on disk of the items that are files, None when none is."""
        sizes = [item.size for item in self.items if item.size is not None]
        return sum(sizes) if sizes else None

    @property
    def keys(self) -> tuple[str, ...]:
        return tuple(sorted({key for item in self.items for key in item.keys}))


@dataclass(frozen=True)
class Remembered:
    """Every system's items; `values`: for each key some item holds, the values a forget of it
    removes as far as these items and the working memory tell; `corrected`: the values the user has
    since corrected; `others`: the other holders of text a forget reaches (this run's call log,
    transcript, input undo), which are no memory of the agents."""

    systems: tuple[RememberedSystem, ...] = ()
    values: dict[str, tuple[str, ...]] = field(default_factory=dict)
    corrected: tuple[str, ...] = ()
    others: tuple[str, ...] = ()

    def held(self, keys: Iterable[str]) -> dict[str, tuple[str, ...]]:
        """Each of `keys` with its values, for a confirmation."""
        return {key: self.values.get(key, ()) for key in keys}


class Planner(Protocol):
    """What the inventory needs of working memory (`workbench.memory.store.WorkingMemory`)."""

    @property
    def contract(self) -> Contract: ...

    def plan(self, key: str | None, declared: Iterable[str] = ()) -> ForgetPlan: ...


def corrected_values(events: Iterable[MemoryEvent], current: Iterable[str]) -> set[str]:
    """Every value a REPLACED event replaced that is no longer a current value."""
    replaced = {e.previous for e in events if e.kind == EventKind.REPLACED and e.previous}
    return replaced - set(current)


def stale_in(text: str, corrected: Collection[str]) -> tuple[str, ...]:
    """The corrected values `text` holds whole (as a forget would find them), sorted."""
    return tuple(sorted(v for v in corrected if ForgetPlan(None, frozenset(), frozenset({v})).holds(text)))


def history_text(messages: Iterable[Message]) -> str:
    """A history as a person reads it, oldest first: each message's role on a line of its own, then
    its text as it was written (so its first declaration starts a line, as a forget reads it)."""
    return "\n".join(f"{m.role}:\n{m.text or ''}" for m in messages)


def _json(item: HeldItem) -> bool:
    return item.content.lstrip().startswith(("{", "["))


def _texts(item: HeldItem) -> Iterator[str]:
    """What an item's keys are looked for in: its name, content and a description the memory keeps,
    and every string of content that is JSON or JSON Lines (a value with a quote or a backslash is
    written escaped there)."""
    yield from (item.name, item.content, *([item.description] if item.described else []))
    if _json(item):
        yield from json_strings(item.content)


def _declaring(item: HeldItem) -> Iterator[str]:
    """What an item's declarations are read from, as a holder's own `declared` reads them: content that
    is JSON declares in its strings only. Its raw text would not: `database=PostgreSQL", "message_id":
    …` ends where the JSON string does, not where the line does."""
    yield from (item.name, *([item.description] if item.described else []))
    yield from json_strings(item.content) if _json(item) else (item.content,)


def _fact(fact: Fact) -> HeldItem:
    quoting = quoted(fact.evidence, _EVIDENCE_CHARS)
    return HeldItem(
        "fact", fact.key, f"turn {fact.turn}, {fact.recorded_at:%Y-%m-%d %H:%M}, quoting {quoting}", fact.value
    )


def inventory(
    memory: Planner,
    snapshot: MemorySnapshot,
    holders: Sequence[RememberedSystem],
    *,
    location: str | None = None,
    others: Sequence[str] = (),
) -> Remembered:
    """Working memory (its facts with their provenance, then its ledger, which keeps replaced and
    evicted values until a forget blanks them; saved at `location`, if anywhere) and the other systems
    (`holders`), each item with its keys and stale values filled in and its text bounded.

    A key's values are planned as the one forget plans them: what memory knows for it, widened by what
    the holders' text declares. An item holds a key when that plan holds any of its text; the ledger
    holds a key when a forget of it would blank a value or quotation one of its events still holds
    (the ledger's own rule: its sentences are not declarations); a key its events only name (a key the
    writer model made up, in a rejected batch; a fact a forget already blanked) is said apart."""
    corrected = corrected_values(snapshot.ledger, (f.value for f in snapshot.facts))
    texts = {id(item): list(_texts(item)) for system in holders for item in system.items}
    declaring = [text for system in holders for item in system.items for text in _declaring(item)]
    plans = {key: memory.plan(key, declared_in(declaring, frozenset({key}))) for key in memory.contract.keys}

    def marked(item: HeldItem, keys: Iterable[str], found: Sequence[str]) -> HeldItem:
        return replace(
            item,
            description=clip(item.description, HELD_CHARS),
            content=clip(item.content, HELD_CHARS),
            keys=tuple(keys),
            stale=tuple(sorted({value for text in found for value in stale_in(text, corrected)})),
        )

    def held(item: HeldItem, found: Sequence[str]) -> HeldItem:
        return marked(item, (key for key, plan in plans.items() if any(plan.holds(t) for t in found)), found)

    own = [held(item, [*_texts(item), fact.evidence]) for fact, item in ((f, _fact(f)) for f in snapshot.facts)]
    if snapshot.ledger:
        events = "\n".join(event.describe() for event in snapshot.ledger)
        blanked = [k for k, plan in plans.items() if any(e.quotes_for(k, plan.holds) for e in snapshot.ledger)]
        # Keys only named: a writer model's made-up keys in rejected batches, or events a forget blanked.
        named = [k for k in plans if k not in blanked and any(e.names(k) for e in snapshot.ledger)]
        about = f"; names {', '.join(named)} without a value (nothing for a forget to remove)" if named else ""
        ledger = HeldItem("ledger", "ledger", f"{len(snapshot.ledger):,} event(s), oldest first{about}", events)
        own.append(marked(ledger, blanked, [events]))
    described = (
        f"{len(snapshot.facts)} of at most {memory.contract.max_facts} facts, {len(snapshot.ledger):,} ledger event(s)"
    )
    systems = (
        RememberedSystem("working memory", location, described, tuple(own)),
        *(replace(s, items=tuple(held(item, texts[id(item)]) for item in s.items)) for s in holders),
    )
    keys = {key for system in systems for key in system.keys}
    return Remembered(
        systems,
        {key: tuple(sorted(plans[key].values)) for key in sorted(keys)},
        tuple(sorted(corrected)),
        tuple(others),
    )


async def read_system(
    name: str, location: str | None, description: str, held: Awaitable[list[HeldItem]], secrets: tuple[str, ...]
) -> RememberedSystem:
    """What one memory system holds, read now; one that cannot be read says why instead (none of
    `secrets` in it), and does not hide the others."""
    try:
        items = await held
    except Exception as exc:  # one system that cannot be read must not hide the others
        why = clip(explain_failure(exc, secrets=secrets), _FAILURE_CHARS)
        return RememberedSystem(name, location, f"could not be read: {why}", unread=why)
    return RememberedSystem(name, location, description, tuple(items))


async def _listed(memory_system: Remembers, secrets: tuple[str, ...]) -> RememberedSystem:
    held = memory_system.held()
    return await read_system(memory_system.name, memory_system.location, memory_system.describe(), held, secrets)


async def other_systems(
    recall: Remembers | None,
    recall_on: bool,
    memories: Sequence[Remembers],
    not_loaded: Sequence[tuple[str, str]],
    secrets: tuple[str, ...],
) -> list[RememberedSystem]:
    """The memory systems besides the facts and the histories, each read now: recall when it is on or an
    earlier run left a store (a forget reaches it either way), the other memories, then each entry of the
    user's folder that did not load (`not_loaded`: where, why), whose memories are not known."""
    systems = []
    if recall is not None:
        listed = await _listed(recall, secrets)
        if recall_on:
            systems.append(listed)
        elif listed.items or listed.unread is not None:  # off, but an earlier run left a store, or may have
            systems.append(replace(listed, description=f"off (an earlier run's store): {listed.description}"))
    systems += [await _listed(memory_system, secrets) for memory_system in memories]
    for entry, why in not_loaded:
        said = f"not loaded ({why}): what its agents would remember is not known"
        systems.append(RememberedSystem(f"{entry} (not loaded)", entry, said, unread=why))
    return systems


def describe_size(size: int) -> str:
    """Bytes as a person reads them: 312 B, 4.1 KiB, 2.3 MiB."""
    if size < 1024:
        return f"{size:,} B"
    amount = size / 1024
    for unit in ("KiB", "MiB"):
        if amount < 1024:
            return f"{amount:.1f} {unit}"
        amount /= 1024
    return f"{amount:,.1f} GiB"
