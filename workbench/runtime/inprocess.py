"""What a context provider the workbench does not know holds in this process, read before anything is
said of it: its per-session state (a provider keeps it in the `AgentSession`'s `state`, under its
`source_id`) and its own attributes, walked with bounds.

The walk reads, never runs, the user's code: an object's `__dict__` and its slots (a slot only when its
class's descriptor is the interpreter's own, never a property), the items of the builtin containers
(`dict`, `list`, `tuple`, `set`, `frozenset`, `collections`' dict and deque), strings and bytes. It
stops at modules, classes, functions and code (the program, not what it was told), follows each object
once (cycles), and stops at a depth, a count of objects and a count of characters; when it stops early
it says so, and what lay beyond is "not known".

It looks for the values the workbench knows (every value of a key memory knows, and what the strings it
reads declare; in a forget, the forget's plan) as typed and as JSON writes them (`ForgetPlan.holds`).
Where one sits is said by its place: "session state `user_memory` of MemoryAgent", "attribute
_storage['…'][0].contents[0].text". What the provider keeps outside this process (a server, a file,
another process) cannot be seen here, and is said to be not known.

A forget (`InProcess.forget`) clears what it can reach without calling the provider: an entry of a
list, a set or a dict that holds a value is taken out (a message of a history, a memory of a list); a
string held by an attribute, or by a dict entry with more text than the value, is scrubbed as every
holder scrubs (`ForgetPlan.scrub`). Then it looks again, and a place that still holds a value is
reported as such (`StillHolds`). A turn that was running during the forget writes after it: the forget
clears what it wrote once it ends (`Forgetting.again`)."""

from __future__ import annotations

import collections
import types
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from workbench.memory.forget import FORGOTTEN, ForgetPlan, declared_in
from workbench.memory.holder_kinds import StillHolds
from workbench.memory.shown import quoted
from workbench.runtime.remembered import HeldItem
from workbench.text import clip, visible

if TYPE_CHECKING:
    from agent_framework import AgentSession, ContextProvider

    from workbench.memory import WorkingMemory
    from workbench.runtime.view import RecalledMessage

# The walk's bounds: how deep, how many objects, how many characters of strings, per look.
MAX_DEPTH = 12
MAX_OBJECTS = 50_000
MAX_CHARS = 5_000_000
# How much of a place's name and of the text held there an item carries.
_PLACE_CHARS = 160
_PLACES_NAMED = 5
OUTSIDE = (
    "what it keeps outside this process (a server, a file, another process) is not known to the workbench: "
    "look there, and remove the value with that store's own tools"
)
_MAPPINGS = (dict, collections.OrderedDict, collections.defaultdict, collections.Counter)
_SEQUENCES = (list, tuple, collections.deque)
_SETS = (set, frozenset)
_SKIPPED = (
    types.ModuleType,
    type,
    types.FunctionType,
    types.BuiltinFunctionType,
    types.MethodType,
    types.CodeType,
    types.FrameType,
    types.CoroutineType,
    types.GeneratorType,
    types.AsyncGeneratorType,
)
_SCALARS = (int, float, complex, bool, type(None))
_NOT_WALKED = _SCALARS + _SKIPPED
_KEY = "\x00key"  # marks a dict's key while it is walked


@dataclass
class Look:
    """One bounded walk: the strings it read, each with its place, and whether it stopped early."""

    strings: list[tuple[str, str]] = field(default_factory=list)
    keys: set[int] = field(default_factory=set)  # which of `strings` are a dict's keys (its place names them)
    objects: int = 0
    chars: int = 0
    stopped: str | None = None  # which bound stopped it, if one did

    def full(self) -> bool:
        if self.objects >= MAX_OBJECTS:
            self.stopped = f"{MAX_OBJECTS:,} objects"
        elif self.chars >= MAX_CHARS:
            self.stopped = f"{MAX_CHARS:,} characters"
        return self.stopped is not None


def _exact(obj: object, kinds: tuple[type, ...]) -> bool:
    """Whether `obj` is one of `kinds` exactly: a subclass may run code of its own when read."""
    return type(obj) in kinds


def _attributes(obj: object) -> Iterator[tuple[str, Any]]:
    """`obj`'s own attributes: its `__dict__` and its slots, read without running its class's code."""
    try:
        own = object.__getattribute__(obj, "__dict__")
    except AttributeError:
        own = None
    if type(own) is dict:
        yield from list(own.items())
    for kind in type(obj).__mro__:
        slots = kind.__dict__.get("__slots__", ())
        for name in (slots,) if isinstance(slots, str) else slots if isinstance(slots, tuple | list) else ():
            if isinstance(kind.__dict__.get(name), types.MemberDescriptorType):
                try:
                    yield name, object.__getattribute__(obj, name)
                except AttributeError:
                    continue


def _text(obj: object) -> str | None:
    if isinstance(obj, str):
        return obj if type(obj) is str else str.__str__(obj)  # a subclass's text, without its own code
    if isinstance(obj, bytes | bytearray) and type(obj) in (bytes, bytearray):
        return bytes(obj).decode("utf-8", "replace")
    return None


def _key(key: object) -> str:
    shown = _text(key)
    return repr(clip(visible(shown), 60)) if shown is not None else type(key).__name__


def walk(root: object, place: str, look: Look | None = None, depth: int = 0, seen: set[int] | None = None) -> Look:
    """Every string reachable from `root` by the rules above, each with its place under `place`."""
    look = look if look is not None else Look()
    seen = seen if seen is not None else set()
    stack: list[tuple[object, str, int]] = [(root, place, depth)]
    while stack and not look.full():
        obj, where, level = stack.pop()
        text = _text(obj)
        if text is not None:
            if where.endswith(_KEY):
                look.keys.add(len(look.strings))
                where = where.removesuffix(_KEY)
            look.strings.append((where, text))
            look.chars += len(text)
            continue
        if isinstance(obj, _NOT_WALKED) or id(obj) in seen:
            continue
        if level >= MAX_DEPTH:
            look.stopped = f"a depth of {MAX_DEPTH}"
            continue
        seen.add(id(obj))
        look.objects += 1
        children: list[tuple[object, str]] = []
        if _exact(obj, _MAPPINGS):
            for k, v in list(obj.items()):  # type: ignore[attr-defined]
                children += [(k, f"{where}[{_key(k)}]{_KEY}"), (v, f"{where}[{_key(k)}]")]
        elif _exact(obj, _SEQUENCES) or _exact(obj, _SETS):
            children += [(v, f"{where}[{i}]") for i, v in enumerate(list(obj))]  # type: ignore[call-overload]
        else:
            children += [(v, f"{where}.{name}" if where else name) for name, v in _attributes(obj)]
        stack.extend((child, at, level + 1) for child, at in reversed(children))
    return look


def holding(obj: object, plan: ForgetPlan) -> bool:
    """Whether any string reachable from `obj` holds a value of `plan`."""
    return any(plan.holds(text) for _, text in walk(obj, "").strings)


def _scrubbed(obj: object, plan: ForgetPlan, seen: set[int]) -> int:
    """Take what holds a value of `plan` out of `obj`, in place (the rules in the module's words); how
    many places it cleared. Only containers and attributes it can change without the user's code."""
    if id(obj) in seen or isinstance(obj, _NOT_WALKED) or _text(obj) is not None:
        return 0
    seen.add(id(obj))
    if _exact(obj, _MAPPINGS):
        return _scrubbed_mapping(obj, plan, seen)  # type: ignore[arg-type]
    if _exact(obj, (list, collections.deque)):
        return _scrubbed_sequence(obj, plan, seen)  # type: ignore[arg-type]
    if _exact(obj, (set,)):
        members: set[Any] = obj  # type: ignore[assignment]
        gone = {v for v in members if holding(v, plan)}
        members.difference_update(gone)
        return len(gone)
    if not _exact(obj, (tuple, frozenset)):
        return _scrubbed_attributes(obj, plan, seen)
    return 0


def _scrubbed_mapping(mapping: dict[Any, Any], plan: ForgetPlan, seen: set[int]) -> int:
    """An entry whose key holds a value goes, as does a text or a tuple that holds one; a text that is
    still something once the value is scrubbed out keeps what is left."""
    cleared = 0
    for k in list(mapping):
        v = mapping[k]
        text = _text(v)
        if holding(k, plan):
            del mapping[k]
            cleared += 1
        elif text is not None:
            if plan.holds(text):
                kept = plan.scrub(text)
                if kept.strip() == FORGOTTEN or plan.holds(kept) or type(v) is not str:
                    del mapping[k]
                else:
                    mapping[k] = kept
                cleared += 1
        elif _exact(v, (tuple, frozenset)) and holding(v, plan):
            del mapping[k]
            cleared += 1
        else:
            cleared += _scrubbed(v, plan, seen)
    return cleared


def _scrubbed_sequence(sequence: list[Any], plan: ForgetPlan, seen: set[int]) -> int:
    """An item that holds a value goes; the others are scrubbed in turn."""
    kept_items = [v for v in sequence if not holding(v, plan)]
    cleared = len(sequence) - len(kept_items)
    if cleared:
        sequence.clear()
        sequence.extend(kept_items)
    for v in kept_items:
        cleared += _scrubbed(v, plan, seen)
    return cleared


def _scrubbed_attributes(obj: object, plan: ForgetPlan, seen: set[int]) -> int:
    """An attribute of the object's own that is a text or a tuple holding a value is scrubbed or rebuilt
    without it; every other attribute that is no text is scrubbed in turn."""
    cleared = 0
    try:
        own = object.__getattribute__(obj, "__dict__")
    except AttributeError:
        own = None
    for name, v in _attributes(obj):
        text = _text(v)
        if type(own) is dict and name in own:
            if type(v) is str and plan.holds(v):
                own[name] = plan.scrub(v)
                cleared += 1
                continue
            if _exact(v, (tuple, frozenset)) and holding(v, plan):
                own[name] = type(v)(e for e in v if not holding(e, plan))
                cleared += 1
                continue
        if text is None:
            cleared += _scrubbed(v, plan, seen)
    return cleared


AgentSessionsOf = Callable[[], Mapping[str, "AgentSession"]]  # each agent's current AgentSession, by agent


class InProcess:
    """A provider on the user's agents the workbench does not know, as "What is remembered" lists it and
    the one forget reaches it: what it holds in this process, looked at (its session state and its
    attributes), and what it keeps outside, said to be not known. Its provider already sits on the agents
    (it adds none, and puts nothing into a turn of its own). The runtime that runs the agents gives it
    their sessions and the working memory (`attach`) before anything is read."""

    # Its state in the agents' sessions goes with them (the agent sessions are replaced first): the count is
    # of the places that held a value, there or in its attributes.
    unit = (
        "place(s) holding a value cleared in this process (its session state went with the replaced sessions), "
        "none left holding it (looked again)"
    )

    def __init__(self, name: str, provider: ContextProvider, agents: tuple[str, ...]) -> None:
        self.name = name
        self.provider = provider
        self.agents = agents
        self.kind = type(provider).__name__
        self.source_id = str(provider.source_id)
        self._agent_sessions: AgentSessionsOf = dict
        self._memory: WorkingMemory | None = None
        self._seen: list[AgentSession] = []  # the sessions a forget's plan was made over, until it ends

    def attach(self, agent_sessions: AgentSessionsOf, memory: WorkingMemory) -> None:
        """The agents' current sessions (every agent's: those of its agents are read) and the memory whose
        values it looks for."""
        self._agent_sessions, self._memory = agent_sessions, memory

    # -- what the runtime asks of a memory on the user's agents -----------------------------------
    location = "this process, read; what it keeps outside it: not known"

    @property
    def outside(self) -> str:
        return OUTSIDE

    def providers(self, agent: str) -> list[ContextProvider]:
        return []

    def turn_started(self, agent: str) -> None:
        return None

    def recalled(self, agent: str) -> list[RecalledMessage]:
        return []

    def describe(self) -> str:
        return f"{self.kind}, read in this process (what it keeps outside it: not known)"

    # -- looking ----------------------------------------------------------------------------------
    def _states(self) -> list[tuple[str, object]]:
        sessions = self._agent_sessions()
        states = [(agent, sessions[agent].state.get(self.source_id)) for agent in self.agents if agent in sessions]
        return [(agent, state) for agent, state in states if state is not None]

    def look(self, states: list[tuple[str, object]] | None = None) -> Look:
        """One bounded walk over its session state (each agent's current session) and its attributes."""
        look = Look()
        seen: set[int] = set()
        for agent, state in self._states() if states is None else states:
            walk(state, f"session state `{self.source_id}` of {agent}'s session", look, seen=seen)
        walk(self.provider, "", look, seen=seen)
        return look

    def _known(self, look: Look) -> ForgetPlan:
        """Every value memory knows, and every value the strings it read declare for a key."""
        if self._memory is None:
            return ForgetPlan(None, frozenset(), frozenset())
        keys = self._memory.contract.key_set
        return self._memory.plan(None, declared_in((text for _, text in look.strings), keys))

    def _looked(self, look: Look) -> str:
        states = sum(1 for _, state in self._states())
        bound = f"; stopped at {look.stopped}: what lies beyond is not known" if look.stopped else ""
        return (
            f"looked in this process: its session state ({states} session(s)) and its attributes "
            f"({look.objects:,} object(s), {len(look.strings):,} string(s)){bound}"
        )

    async def held(self) -> list[HeldItem]:
        """Its session state in each of its agents' current sessions, whole (bounded: it is what the agents
        told it), then each attribute whose string holds a value the workbench knows (only those: an
        attribute may be a key or a password), then what was looked at and what was not: "holds nothing"
        is said only after looking."""
        look = self.look()
        plan = self._known(look)
        items: list[HeldItem] = []
        for agent, state in self._states():
            seen = walk(state, "")
            strings = [(where, text) for i, (where, text) in enumerate(seen.strings) if i not in seen.keys]
            if not seen.strings:
                continue
            lines = "\n".join(f"{visible(where) or '(the state)'}: {text}" for where, text in strings)
            words = self._words(text for _, text in strings)
            what = f"{self.kind}'s state in {agent}'s current session, {len(strings):,} string(s){words}"
            items.append(HeldItem("state", f"session state `{visible(self.source_id)}` of {agent}", what, lines))
        attributes = [(where, text) for where, text in look.strings if not where.startswith("session state")]
        items += [
            HeldItem("attribute", clip(visible(where), _PLACE_CHARS), f"{self.kind}'s attribute", text)
            for where, text in attributes
            if plan.holds(text)
        ]
        found = "" if any(plan.holds(text) for _, text in look.strings) else "; no string there holds a value it knows"
        items.append(HeldItem("looked", "what was looked at", "", f"{self._looked(look)}{found}\n{OUTSIDE}"))
        return items

    def _words(self, texts: Iterator[str] | Any) -> str:
        """Where a whole string is one word of a value the workbench knows (a provider that kept the first
        word of a name), said: a forget removes whole values, so it does not count as holding one."""
        if self._memory is None:
            return ""
        found: list[str] = []
        strings = {t.strip().casefold(): t.strip() for t in texts if t.strip()}
        for key in sorted(self._memory.contract.key_set):
            for value in sorted(self._memory.plan(key).values):
                words = value.split()
                for word in words if len(words) > 1 else ():
                    if len(word) >= 3 and word.casefold() in strings:
                        found.append(f"{quoted(strings[word.casefold()])} is a word of {key}'s value {quoted(value)}")
        return f"; {'; '.join(dict.fromkeys(found))} (a part, not the whole value)" if found else ""

    async def declared(self, keys: frozenset[str]) -> set[str]:
        self._seen = list(self._agent_sessions().values())  # the sessions this plan is made over: looked at again
        return declared_in((text for _, text in self.look().strings), keys)

    def still_holding(self, plan: ForgetPlan) -> list[str]:
        """The places in this process that still hold a value of `plan`, each named (its values only: a
        scrubbed `customer=(forgotten)` declares the key and holds no value)."""
        values = ForgetPlan(plan.asked, frozenset(), plan.values)
        return [clip(visible(where), _PLACE_CHARS) for where, text in self.look().strings if values.holds(text)]

    # -- forgetting ---------------------------------------------------------------------------------
    async def erase(self, plan: ForgetPlan) -> int:
        """Clear each place in this process that holds a value of `plan` (the sessions the plan was made
        over too: a session a forget replaced may still be written by a turn that was running), then look
        again; a place still holding one is `StillHolds`."""
        earlier, self._seen = self._seen, []
        states = [(s.session_id, s.state.get(self.source_id)) for s in earlier]
        cleared = sum(_scrubbed(state, plan, set()) for _, state in states if state is not None)
        cleared += self._again(plan)
        if still := self.still_holding(plan):
            more = f" and {len(still) - _PLACES_NAMED:,} more" if len(still) > _PLACES_NAMED else ""
            raise StillHolds(f"{', '.join(still[:_PLACES_NAMED])}{more}")
        return cleared

    async def again(self, plan: ForgetPlan) -> int:
        """Apply `plan` to what it holds now (a turn that ran through the forget has ended): how many places
        it cleared."""
        return self._again(plan)

    def _again(self, plan: ForgetPlan) -> int:
        seen: set[int] = set()
        cleared = sum(_scrubbed(state, plan, seen) for _, state in self._states())
        return cleared + _scrubbed(self.provider, plan, seen)
