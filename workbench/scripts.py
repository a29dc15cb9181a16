"""`workbench remembered` and `workbench forget`: the TUI's F3 and forget for scripts and terminals.

Both start as the TUI starts, through its one start path (`workbench.cli.start.session_start`: the folders
opened and locked, the session assembled by `workbench.session.assemble`), and complete a forget a
crash cut short before anything else, as the TUI does. Human text shows what models and people wrote
as typed, control and invisible characters as escapes, each line and item bounded; `--json` gives the
whole of it in the documented shape below (docs/forget.md), each value as typed (JSON escapes it).
No Textual here."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from typing import TYPE_CHECKING

from pydantic import BaseModel, ConfigDict

from workbench.memory.contract import MAX_VALUE_CHARS
from workbench.memory.forget import PlanChanged
from workbench.memory.holder_kinds import STILL_HOLDS
from workbench.memory.shown import quoted
from workbench.runtime.remembered import describe_size
from workbench.text import clip, dumps, visible

if TYPE_CHECKING:
    from workbench.memory.forget import ForgetReport
    from workbench.runtime.forget_preview import ForgetPreview
    from workbench.runtime.remembered import HeldItem, Remembered, RememberedSystem
    from workbench.session.controller import SessionController

Start = Callable[[], "SessionController"]
Say = Callable[[str], None]  # one line on stderr
Ask = Callable[[str], bool]  # shows what a forget will remove, returns the answer

# Exit statuses beyond 0 (done) and 2 (a usage error, or a question that cannot be asked).
NOTHING_DONE = 1  # the start could not open what the options ask, or the question was answered no
NOT_REACHED = 3  # a holder failed, or still holds a value when looked at again; the others applied the forget

# Bounds on the human text (--json gives everything the inventory holds): items per memory, lines per
# item, characters per line.
ITEMS_SHOWN = 50
LINES_SHOWN = 8
LINE_CHARS = MAX_VALUE_CHARS


class ItemOut(BaseModel):
    """One thing a memory holds (`workbench.runtime.remembered.HeldItem`)."""

    model_config = ConfigDict(from_attributes=True)

    kind: str
    name: str
    description: str
    content: str
    size: int | None
    keys: list[str]
    stale: list[str]
    unknown: str


class SystemOut(BaseModel):
    """One memory, where it keeps what it holds (None: in the process only) and its items."""

    model_config = ConfigDict(from_attributes=True)

    name: str
    location: str | None
    description: str
    size: int | None
    items: list[ItemOut]


class RememberedOut(BaseModel):
    """`workbench remembered --json`: every memory, the values a forget of each key removes, the values
    the user has since corrected, the other holders a forget reaches, and the forget a crash cut short
    that this start completed first (None when there was none)."""

    model_config = ConfigDict(from_attributes=True)

    systems: list[SystemOut]
    values: dict[str, list[str]]
    corrected: list[str]
    others: list[str]
    completed: str | None


class ForgetOut(BaseModel):
    """`workbench forget --json`: the key (None: everything), the facts that went, and per holder what
    it removed (`removed` a number, `counts` in words), could not do (`failures`) or cannot reach
    (`unreached`), what it may keep outside this process, not known (`outside`), and what became of each
    id a model service kept (`outcomes`), as the forget's report (`workbench.memory.forget.ForgetReport`)
    gives them."""

    key: str | None
    facts_removed: list[str]
    removed: dict[str, int]
    counts: dict[str, str]
    failures: dict[str, str]
    unreached: dict[str, str]
    outside: dict[str, str]
    outcomes: dict[str, dict[str, str]]
    completed: str | None


class Stopped(Exception):
    """The session could not start, or the forget a crash cut short could not be completed (no forget
    and no listing may run before it): why, in one line."""


async def _started(start: Start, say: Say) -> SessionController:
    """The session, after the forget a crash cut short (if the journal records one) is completed."""
    session: SessionController | None = None
    try:
        session = start()
        completed = await completing if (completing := session.start()) is not None else None
    except Exception as exc:
        if session is not None:
            await session.aclose()  # what its start opened is let go: the command ends here
        first = next((line.strip() for line in str(exc).splitlines() if line.strip()), "")
        raise Stopped(clip(f"could not start: {type(exc).__name__}: {first}", LINE_CHARS)) from exc
    if completed is not None:
        say(f"{completed.said}: {completed.report.describe()}")
    return session


async def remembered(start: Start, *, as_json: bool, say: Say) -> int:
    """Print what every memory holds."""
    session = await _started(start, say)
    try:
        return await _remembered(session, as_json=as_json)
    finally:
        await session.aclose()


async def _remembered(session: SessionController, *, as_json: bool) -> int:
    listed = await session.remembered()
    completed = session.state().status.completed
    if as_json:
        out = RememberedOut.model_validate(
            {
                "systems": listed.systems,
                "values": listed.values,
                "corrected": listed.corrected,
                "others": listed.others,
                "completed": completed,
            },
            from_attributes=True,
        )
        print(dumps(out.model_dump(mode="json")))
    else:
        print("\n".join(remembered_lines(listed, _value_chars(session))))
    return 0


async def forget(start: Start, key: str | None, *, ask: Ask | None, as_json: bool, say: Say) -> int:
    """Forget `key` (None: everything) through the one forget, after `ask` (None: asked nothing) agreed
    to what it will remove; print what each holder did."""
    session = await _started(start, say)
    try:
        return await _forget(session, key, ask=ask, as_json=as_json, say=say)
    finally:
        await session.aclose()


async def _forget(session: SessionController, key: str | None, *, ask: Ask | None, as_json: bool, say: Say) -> int:
    preview = None if ask is None else await session.forget_preview(key)  # the plan the answer applies
    if ask is not None and preview is not None and not ask(question(preview, _values(session), _value_chars(session))):
        say("nothing was forgotten")
        return NOTHING_DONE
    before = [f.key for f in session.state().memory.facts]
    try:
        report = await session.forget(key if preview is None else preview)
    except PlanChanged as changed:  # a store another process writes changed after the question
        say(f"{changed}; forget again")
        return NOTHING_DONE
    after = {f.key for f in session.state().memory.facts}
    gone = [k for k in before if k not in after]
    unreached = report.unreached
    if as_json:
        out = ForgetOut(
            key=key,
            facts_removed=gone,
            removed=report.removed,
            counts=report.counts,
            failures=report.failures,
            unreached=unreached,
            outside=report.outside,
            outcomes=report.outcomes,
            completed=session.state().status.completed,
        )
        print(dumps(out.model_dump(mode="json")))
    else:
        print("\n".join(report_lines(key, gone, report, unreached)))
    # What the workbench could see is clear, or not; what it cannot see is listed either way, and is no failure.
    return NOT_REACHED if report.failures else 0


def _values(session: SessionController) -> dict[str, str]:
    return {f.key: f.value for f in session.state().memory.facts}


def _value_chars(session: SessionController) -> int:
    """How much of a value is printed: the contract's value length (the seed's 256 at least), so a
    value a team's contract admits is printed whole."""
    return max(LINE_CHARS, session.state().status.contract.max_value_chars)


def question(preview: ForgetPreview, values: Mapping[str, str], value_chars: int = LINE_CHARS) -> str:
    """What a forget will remove, from the forget's own plan, as the TUI's question says it."""
    what = "everything" if preview.keys is None else ", ".join(preview.keys)
    facts = [f"{k} = {quoted(values[k], value_chars)}" for k in preview.removed if k in values]
    lines = [f"Forget {what}?"]
    if facts:
        lines.append(f"  removes the fact(s): {'; '.join(facts)}")
        if preview.also:
            lines.append(f"  ({', '.join(preview.also)}: a forgotten value is in its value)")
    else:
        lines.append("  no fact holds it now; its values go from every history and memory that holds them")
    starts = (
        f"{preview.agents[0]} starts a new session" if len(preview.agents) == 1 else "the agents start new sessions"
    )
    lines.append(f"  {preview.kept} fact(s) stay; {starts}")
    if preview.keys is None:
        if preview.reaches:
            lines.append(f"  also reaches: {', '.join(preview.reaches)}")
    else:  # each memory it reaches, as what it holds of the values now (F3) says
        for said, which in (
            ("also removed from", True),
            ("also reaches, whether it holds them not known", None),
            ("also reaches, holding none of them now", False),
        ):
            if named := [r for r in preview.reaches if preview.holding.get(r) is which]:
                lines.append(f"  {said}: {', '.join(named)}")
    if preview.unreached:
        lines.append(f"  cannot reach (what it holds stays): {', '.join(preview.unreached)}")
    return "\n".join(lines)


def report_lines(key: str | None, gone: list[str], report: ForgetReport, unreached: Mapping[str, str]) -> list[str]:
    """The forget's report, one holder a line, in the order the forget reached them."""
    facts = f": the fact(s) {', '.join(gone)} removed" if gone else ": no fact removed"
    lines = [f"forgot {'everything' if key is None else key}{facts}"]
    lines += [f"  {name}: {report.counts[name]}" for name in report.removed]
    lines += [
        f"  {name}: {visible(why) if why.startswith(STILL_HOLDS) else f'NOT reached: {visible(why)}'}"
        for name, why in report.failures.items()
    ]
    for name, done in report.outcomes.items():  # each id a model service kept, and what became of it
        lines.append(f"  {name}, each id on the service:")
        lines += [f"    {visible(thing)}: {visible(what)}" for thing, what in done.items()]
    if report.outside or unreached:  # a memory it cannot read at all, and what a provider keeps outside this process
        lines.append("outside what the workbench can see (not known; what it holds there stays):")
        said = {name: [why] for name, why in unreached.items()}
        for name, beyond in report.outside.items():  # one holder may be both (a service's ids and its earlier runs)
            said.setdefault(name, []).append(beyond)
        lines += [f"  {name}: {visible('; '.join(whys))}" for name, whys in said.items()]
    return lines


def remembered_lines(listed: Remembered, value_chars: int = LINE_CHARS) -> list[str]:
    """Every memory, then its items, each bounded; the values a forget of each key removes first (each
    to `value_chars`)."""
    lines = ["values a forget of each key removes:" if listed.values else "no memory holds a value of a key"]
    lines += [f"  {key}: {', '.join(quoted(v, value_chars) for v in values)}" for key, values in listed.values.items()]
    if listed.corrected:
        lines.append(f"corrected since: {', '.join(quoted(v, value_chars) for v in listed.corrected)}")
    for system in listed.systems:
        lines += _system_lines(system)
    if listed.others:
        lines.append(f"a forget also reaches: {', '.join(listed.others)}")
    return lines


def _system_lines(system: RememberedSystem) -> Iterator[str]:
    where = f" · {visible(system.location)}" if system.location else " · in this process only"
    size = f" · {describe_size(system.size)}" if system.size is not None else ""
    yield ""
    yield f"{system.name}{where}{size}"
    yield f"  {_line(system.description)}"
    for item in system.items[:ITEMS_SHOWN]:
        keys = f" [keys: {', '.join(item.keys)}]" if item.keys else ""
        stale = f" [corrected values: {', '.join(quoted(v, LINE_CHARS) for v in item.stale)}]" if item.stale else ""
        unknown = " [what it holds is not known]" if item.unknown else ""
        yield f"  - {item.kind} {quoted(item.name, LINE_CHARS)}{keys}{stale}{unknown}"
        yield from _text_lines(item)
    if (more := len(system.items) - ITEMS_SHOWN) > 0:
        yield f"  ... {more:,} more item(s): --json lists them all"


def _text_lines(item: HeldItem) -> Iterator[str]:
    if item.description:
        yield f"      {_line(item.description)}"
    lines = item.content.split("\n")  # at line ends only: a \r or a \u2028 is shown as an escape
    for line in lines[:LINES_SHOWN]:
        yield f"      | {_line(line)}"
    if (more := len(lines) - LINES_SHOWN) > 0:
        yield f"      ... {more:,} more line(s)"


def _line(text: str) -> str:
    """One line of stored text as typed: bounded, its hidden characters (a tab or a line end included)
    shown as escapes."""
    return visible(clip(text, LINE_CHARS)).replace("\t", "\\t").replace("\n", "\\n")
