"""What is remembered (F3): every memory system the agents run and what each holds right now, read
again whenever memory changes or a turn ends; any of it forgotten from here through the one forget.

When memory settles a batch or a turn ends, the app tells the open screen (`memory_changed`), which
reads again through the session controller; it asks to forget with ForgetRequested (messages up),
which the app answers with the one confirmation and the one forget."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any, Protocol

from rich.console import Group, RenderableType
from rich.padding import Padding
from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.reactive import reactive
from textual.screen import ModalScreen
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option

from workbench.session.views import MAX_VALUE_CHARS, EventKind, describe_size, literal, quoted
from workbench.ui.facts import ForgetRequested
from workbench.ui.keys_footer import KeysFooter
from workbench.ui.startup import error_line

if TYPE_CHECKING:
    from textual.app import App

    from workbench.session.views import HeldItem, MemoryUpdate, Remembered, RememberedSystem

# Bounds on what one screen shows: items per system (the system's own line forgets the rest), lines
# of an item's content, and characters of one line or name (of a content line: at least the contract's
# value length, so a fact's value is shown whole).
ITEMS_SHOWN = 50
LINES_SHOWN = 4
LINE_CHARS = MAX_VALUE_CHARS
# The header names corrected values, this much of each, in this many characters, and counts the others:
# with all of them whole it grew past the screen and hid the list (each item names the ones it holds).
CORRECTED_CHARS = 30
CORRECTED_ROOM = 80
EVERYTHING = "everything"
NO_KEY = "It holds no value of an allowed key, so no forget of a key reaches it: forget everything (F8) does."


class Reader(Protocol):
    """Where the screen reads what is remembered (the session controller)."""

    async def remembered(self) -> Remembered: ...


class RememberedScreen(ModalScreen[None]):
    """Each memory system (what it is, where it lives, its size on disk, the keys it holds), then
    its items; Enter or a click on a system or an item asks to forget the keys it holds.

    Modal, over the whole window: the agents' screen beneath is still drawn (behind this one), so
    after a forget its widgets draw what memory now holds instead of keeping what they last drew."""

    BINDINGS = [
        Binding("escape,f3", "close", "Back to the agents", id="close_remembered"),
        Binding("f8", "forget_everything", "Forget everything", id="forget_everything"),
    ]

    remembered: reactive[Remembered | None] = reactive(None, always_update=True, init=False)

    @classmethod
    def shown(cls, app: App[Any], session: Reader, value_chars: int) -> None:
        """Open what is remembered over `app` (once) and read it."""
        screen = next((s for s in app.screen_stack if isinstance(s, cls)), None)
        if screen is None:
            screen = cls(session, value_chars=value_chars)
            app.push_screen(screen)
        screen.read()

    def __init__(self, session: Reader, *, value_chars: int = LINE_CHARS) -> None:
        """`value_chars`: the contract's value length (the session's), to which content lines are shown."""
        super().__init__(id="remembered", classes="modal")
        self._session = session
        self._line_chars = max(LINE_CHARS, value_chars)
        self._keys: dict[str, tuple[str, ...]] = {}
        self._composed = False

    def compose(self) -> ComposeResult:
        with Vertical(id="remembered-body"):
            yield Static(Text("What is remembered · reading every memory ...", "italic"), id="remembered-status")
            yield OptionList(id="remembered-list", markup=False)
        yield KeysFooter()

    def on_mount(self) -> None:
        self._composed = True
        self.query_one(OptionList).focus()
        if self.remembered is not None:  # given before the screen was composed
            self.watch_remembered(self.remembered)

    def action_close(self) -> None:
        self.dismiss()

    def action_forget_everything(self) -> None:
        self.post_message(ForgetRequested(None))

    @work(name="What is remembered", group="remembered", exclusive=True, exit_on_error=False)
    async def read(self) -> None:
        """Read what every memory holds now (the next read cancels this one; so does closing)."""
        try:
            self.remembered = await self._session.remembered()
        except Exception as exc:  # a defect must show, not vanish with the worker
            self.query_one("#remembered-status", Static).update(literal(f"could not read: {error_line(exc)}", "red"))
            self.notify(error_line(exc), title="What is remembered failed", severity="error", markup=False)
            raise

    def memory_changed(self, update: MemoryUpdate | None) -> None:
        """Memory settled `update`, or a turn ended (None): read what every memory holds now. After a
        forget it first shows nothing, so no forgotten value waits on screen while memory is read again."""
        events = update.outcome.events if update is not None else ()
        if any(e.kind is EventKind.FORGOTTEN or e.origin == "forget" for e in events):
            self.remembered = None
        self.read()

    def watch_remembered(self, remembered: Remembered | None) -> None:
        if not self._composed:
            return
        listed = self.query_one(OptionList)
        at = listed.highlighted_option.id if listed.highlighted_option is not None else None
        self._keys = {}
        listed.clear_options()
        status = self.query_one("#remembered-status", Static)
        if remembered is None:  # being read again after a forget: nothing it forgot stays on screen
            status.update(Text("What is remembered · reading every memory again ...", "italic"))
            return
        status.update(_status(remembered))
        listed.add_options(list(self._options(remembered)))
        ids = [listed.get_option_at_index(i).id for i in range(listed.option_count)]
        listed.highlighted = ids.index(at) if at is not None and at in ids else 0

    def _options(self, remembered: Remembered) -> Iterator[Option | None]:
        everything = Text.assemble(("Forget everything", "bold"), " (F8): every fact and every memory below")
        yield Option(everything, id=EVERYTHING)
        for number, system in enumerate(remembered.systems):
            yield None
            self._keys[f"system-{number}"] = system.keys
            yield Option(_system(system), id=f"system-{number}")
            for index, item in enumerate(system.items[:ITEMS_SHOWN]):
                self._keys[f"item-{number}-{index}"] = item.keys
                yield Option(_item(item, self._line_chars), id=f"item-{number}-{index}")
            if len(system.items) > ITEMS_SHOWN:
                more = (
                    f"… and {len(system.items) - ITEMS_SHOWN:,} more item(s): select {system.name} above to forget them"
                )
                yield Option(literal(more, "dim"), disabled=True)
        if remembered.others:
            yield None
            others = f"Also reached by every forget (this run, in memory): {', '.join(remembered.others)}."
            yield Option(literal(others, "dim"), disabled=True)

    @on(OptionList.OptionSelected)
    def _selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        chosen = event.option.id or ""
        if chosen == EVERYTHING:
            self.post_message(ForgetRequested(None))
        elif (keys := self._keys.get(chosen)) and self.remembered is not None:
            self.post_message(ForgetRequested(keys, self.remembered.held(keys)))
        elif chosen in self._keys:
            self.notify(NO_KEY, title="No key to forget", markup=False)


def _status(remembered: Remembered) -> Text:
    items = sum(len(s.items) for s in remembered.systems)
    status = Text.assemble(
        ("What is remembered", "bold"),
        f" · {len(remembered.systems)} system(s), {items:,} item(s) · Enter or click: forget what it holds · Esc: back",
    )
    if remembered.corrected:
        status.append(f"\n⚠ still holds a value you corrected: {_corrected(remembered.corrected)}", "yellow")
    return status


def _corrected(values: tuple[str, ...]) -> str:
    """The first corrected values, each cut to CORRECTED_CHARS, as many as fit CORRECTED_ROOM, and a count
    of the others."""
    named = [quoted(values[0], CORRECTED_CHARS)]
    for value in values[1:]:
        shown = quoted(value, CORRECTED_CHARS)
        if len(", ".join([*named, shown])) > CORRECTED_ROOM:
            break
        named.append(shown)
    more = len(values) - len(named)
    return ", ".join(named) + (f" and {more:,} more" if more else "")


def _keys(keys: tuple[str, ...]) -> Text:
    return Text(f"holds {', '.join(keys)}", "bold") if keys else Text("holds no key's value", "dim")


def _system(system: RememberedSystem) -> Group:
    title = Text.assemble((system.name, "bold reverse"), " ", literal(system.description, limit=LINE_CHARS))
    where = literal(system.location or "in this process only", "dim", limit=LINE_CHARS)
    if system.size is not None:
        where.append(f" · {describe_size(system.size)}", "dim")
    # A system that could not be read holds what it holds: not "no key's value".
    held = Text("what it holds is not known", "bold") if system.unread is not None else _keys(system.keys)
    where.append(" · ", "dim").append_text(held)
    if system.unread is None and any(item.unknown for item in system.items):
        where.append(" · what some of it holds is not known", "bold")
    return Group(title, where)


def _item(item: HeldItem, line_chars: int) -> RenderableType:
    head = Text.assemble((f"{item.kind} ", "dim"), literal(item.name, "bold", limit=LINE_CHARS))
    if item.size is not None:
        head.append(f" · {describe_size(item.size)}", "dim")
    head.append(" · ").append_text(
        _keys(item.keys) if item.keys or not item.unknown else Text("what it holds is not known", "bold")
    )
    if item.stale:
        head.append(f" · ⚠ still holds corrected {', '.join(quoted(v, line_chars) for v in item.stale)}", "bold yellow")
    parts: list[RenderableType] = [head]
    if item.description:
        parts.append(literal(item.description, "italic", limit=LINE_CHARS))
    parts.append(_content(item.content, line_chars))
    return Padding(Group(*parts), (0, 0, 0, 2))


def _content(content: str, line_chars: int) -> Text:
    """A value in quotes as typed; a longer text as its first lines, each shown literally."""
    lines = content.splitlines()
    if not lines:
        return Text("(empty)", "dim")
    if len(lines) == 1:
        return Text(quoted(lines[0], line_chars))
    shown = Text("\n").join(literal(line, limit=line_chars) for line in lines[:LINES_SHOWN])
    if len(lines) > LINES_SHOWN:
        shown.append(f"\n… {len(lines) - LINES_SHOWN:,} more line(s)", "dim")
    return shown
