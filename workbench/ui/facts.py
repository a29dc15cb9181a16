"""The fact panel: the live store, the quotation of the selected fact, the latest change and the ledger."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from rich.text import Text
from textual import events, on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.coordinate import Coordinate
from textual.message import Message
from textual.reactive import reactive
from textual.widgets import Button, DataTable, Static

from workbench.session.views import EventKind, MemoryEvent, MemorySnapshot, MemoryUpdate, literal, quoted

LEDGER_LINES = 100
# Columns of the fact table, in cells; the value takes what is left.
KEY_WIDTH, TURN_WIDTH, TIME_WIDTH = 11, 4, 8

_KIND_STYLE = {
    EventKind.ADMITTED: "green",
    EventKind.REPLACED: "bold yellow",
    EventKind.EVICTED: "magenta",
    EventKind.REJECTED: "bold red",
    EventKind.STALE: "red",
    EventKind.FORGOTTEN: "cyan",
    EventKind.NOTHING_DECLARED: "dim",
    EventKind.ABANDONED: "red",
    EventKind.NOTE: "cyan",
}


@dataclass
class ForgetRequested(Message):
    """The user asked to forget `keys` (one fact's, or those an item of "What is remembered" holds),
    or everything when `keys` is None. `held`: each key's values as the asking view knows them (the
    fact panel leaves it out: the facts say)."""

    keys: tuple[str, ...] | None
    held: Mapping[str, Sequence[str]] | None = None


@dataclass(frozen=True)
class MemoryView:
    """What the panel shows: memory as the latest settled batch left it, and that batch's events."""

    memory: MemorySnapshot = field(default_factory=MemorySnapshot)
    batch: tuple[MemoryEvent, ...] = ()

    @classmethod
    def after(cls, update: MemoryUpdate) -> MemoryView:
        return cls(update.memory, update.outcome.events)

    @classmethod
    def of_turn(cls, updates: Sequence[MemoryUpdate]) -> MemoryView:
        """One turn's batches as one view: memory as the last left it, and every batch's events."""
        return cls(updates[-1].memory, tuple(e for u in updates for e in u.outcome.events))


class FactTable(DataTable[Text]):
    """One click on a fact row asks to forget it; so do Enter and Delete on the focused row."""

    BINDINGS = [
        Binding("enter", "forget_row", "Forget fact", id="forget_fact"),
        Binding("delete", "forget_row", "Forget fact", show=False),
    ]

    def __init__(self) -> None:
        # The cells' own colours win over the cursor's, so a replaced value stays highlighted on the cursor row.
        super().__init__(
            cursor_type="row", zebra_stripes=True, cursor_foreground_priority="renderable", id="fact-table"
        )

    async def _on_click(self, event: events.Click) -> None:
        await super()._on_click(event)
        row = event.style.meta.get("row")
        if isinstance(row, int) and row >= 0 and row < self.row_count:
            self._forget(row)

    def action_forget_row(self) -> None:
        if self.row_count:
            self._forget(self.cursor_row)

    def _forget(self, row: int) -> None:
        key = self.coordinate_to_cell_key(Coordinate(row, 0)).row_key.value
        self.post_message(ForgetRequested((str(key),)))


class ScrollBox(VerticalScroll):
    """A part of the panel that Tab reaches and the arrow keys scroll (the latest change, the ledger).
    A printable key typed here still goes to the message (FactPanel.on_key)."""

    BINDINGS = [Binding("down", "scroll_down", "Scroll", key_display="↑↓", id="scroll_panel")]


class ChangeBox(ScrollBox):
    """The latest change; its border says how many lines are out of view, above and below."""

    def on_mount(self) -> None:
        self.watch(self, "scroll_y", self._mark_hidden, init=False)
        self.watch(self, "virtual_size", self._mark_hidden)

    def on_resize(self) -> None:
        self._mark_hidden()

    def _mark_hidden(self) -> None:
        above = round(self.scroll_y)
        below = max(0, self.max_scroll_y - above)
        marks = ([f"↑{above}"] if above else []) + ([f"↓{below}"] if below else [])
        self.border_subtitle = f"{' '.join(marks)} more: Tab here, ↑↓" if marks else ""


def _latest(view: MemoryView) -> int:
    return max((e.seq for e in (*view.memory.ledger, *view.batch)), default=-1)


def _tag(event: MemoryEvent) -> str:
    turn = f"t{event.turn}" if event.turn is not None else "--"
    return f"{turn} {event.origin or 'memory'}"


def describe_batch(events: Sequence[MemoryEvent]) -> Text:
    """The latest change in plain words, one line per event, coloured by kind."""
    return Text("\n").join(literal(event.describe(), _KIND_STYLE[event.kind]) for event in events)


# What a fact is, under the panel: whole where it fits, else shorter (F1 says it in full).
SUBTITLES = ("unverified user assertions: they authorize nothing", "unverified: no authority")


class FactPanel(Vertical):
    """Renders the one view of memory it is given (`view`, set by the app); sends intentions up:
    ForgetRequested, and Typed for a printable key pressed here, which belongs in a message, not on a fact.
    A view never goes back in time: one older than the view shown is not taken (a turn's batch that
    reached the panel after a forget would bring forgotten values back)."""

    view: reactive[MemoryView] = reactive(MemoryView, always_update=True)

    @dataclass
    class Typed(Message):
        character: str

    def __init__(self) -> None:
        super().__init__(id="facts")
        self.border_title = "working memory"
        self.border_subtitle = SUBTITLES[0]

    def compose(self) -> ComposeResult:
        yield FactTable()
        yield Static(id="evidence", markup=False)
        with ChangeBox(id="changes-box"):
            yield Static(id="changes", markup=False)
        yield Button("Forget all (F8)", id="forget-all", variant="error", compact=True)
        with ScrollBox(id="ledger-scroll"):
            yield Static(id="ledger", markup=False)

    def on_mount(self) -> None:
        self.query_one("#ledger-scroll").border_title = "ledger, newest first"
        # F8 and a click reach it; Tab does not stop on it, where typed text would be lost.
        self.query_one("#forget-all").can_focus = False

    def validate_view(self, view: MemoryView) -> MemoryView:
        return view if _latest(view) >= _latest(self.view) else self.view

    def watch_view(self, view: MemoryView) -> None:
        self._show_facts(view)
        self._show_changes(view.batch)
        self._show_ledger(view.memory.ledger)

    def on_resize(self) -> None:
        self._show_facts(self.view)
        # The border's corners, its two lines beside the label and the label's spaces take 6 columns.
        self.border_subtitle = next((s for s in SUBTITLES if len(s) <= self.size.width - 6), SUBTITLES[-1])

    def on_key(self, event: events.Key) -> None:
        """A printable key anywhere in the panel (the table, the change box, the ledger) is text for a
        message: send it up, never lose it."""
        if event.is_printable and event.character:
            event.stop()
            event.prevent_default()
            self.post_message(self.Typed(event.character))

    def _layout_columns(self, table: FactTable) -> int:
        """(Re)build the columns for the table's width; returns the room left for a value."""
        width = table.size.width
        narrow = 0 < width < 44
        table.clear(columns=True)
        padded = 2 * table.cell_padding  # each column's padding, both sides
        # Wrapped values may make the table scroll: its scrollbar must not cover a value.
        taken = KEY_WIDTH + 2 * padded + table.styles.scrollbar_size_vertical
        if not narrow:
            taken += TURN_WIDTH + TIME_WIDTH + 2 * padded
        value = max(8, width - taken) if width else 24
        # Labels as Text: a str label is parsed as markup, whose emoji codes cost a start-up 4 ms to import.
        table.add_column(Text("key"), key="key", width=KEY_WIDTH)
        table.add_column(Text("value"), key="value", width=value)
        if not narrow:
            table.add_column(Text("turn"), key="turn", width=TURN_WIDTH)
            table.add_column(Text("UTC"), key="at", width=TIME_WIDTH)
        return value

    def _show_facts(self, view: MemoryView) -> None:
        """Redraw the table; keys changed by the batch are highlighted. A value is shown whole, on as
        many lines as it needs; a replaced key shows its old value beside the new one only when both
        fit on one line (the change box names the old value in every case)."""
        table = self.query_one(FactTable)
        selected = self._selected_key()
        previous = {e.key: e.previous for e in view.batch if e.kind is EventKind.REPLACED}
        admitted = {e.key for e in view.batch if e.kind is EventKind.ADMITTED}
        room = self._layout_columns(table)
        for fact in view.memory.facts:
            if fact.key in previous:
                new, old = literal(fact.value, "bold yellow"), literal(previous[fact.key] or "", "strike dim")
                value = Text.assemble(old, (" -> ", "dim"), new)
                if value.cell_len > room:
                    value = new
                key = literal(fact.key, "bold yellow")
            else:
                style = "bold green" if fact.key in admitted else ""
                value, key = literal(fact.value, style), literal(fact.key, style)
            cells = [key, value, Text(str(fact.turn)), Text(fact.recorded_at.strftime("%H:%M:%S"))]
            table.add_row(*cells[: len(table.columns)], key=fact.key, height=None)
        if selected in {f.key for f in view.memory.facts}:
            table.move_cursor(row=table.get_row_index(selected))
        self._show_evidence()

    def _selected_key(self) -> str | None:
        table = self.query_one(FactTable)
        if not table.row_count:
            return None
        return str(table.coordinate_to_cell_key(table.cursor_coordinate).row_key.value)

    @on(DataTable.RowHighlighted)
    def _highlighted(self, _event: DataTable.RowHighlighted) -> None:
        self._show_evidence()

    def _show_evidence(self) -> None:
        facts = {f.key: f for f in self.view.memory.facts}
        fact = facts.get(self._selected_key() or "")
        evidence = self.query_one("#evidence", Static)
        if fact is None:
            evidence.update(Text("No facts. Declare them as key=value in a message, e.g. module=Billing.", "dim"))
            return
        evidence.update(
            Text.assemble(
                (f"{fact.key}", "bold"),
                (f" quoted from turn {fact.turn}: ", "dim"),
                (quoted(fact.evidence), "italic"),
                ("\nclick, Enter or Delete: forget this fact", "dim"),
            )
        )

    def _show_changes(self, batch: Sequence[MemoryEvent]) -> None:
        self.query_one("#changes", Static).update(describe_batch(batch) if batch else Text("No change yet.", "dim"))
        changes = self.query_one(ChangeBox)
        changes.scroll_home(animate=False)
        first = batch[0] if batch else None
        changes.border_title = (
            f"latest change · turn {first.turn} · {first.origin}" if first and first.turn else "latest change"
        )
        kinds = {e.kind for e in batch}
        for kind in (EventKind.REJECTED, EventKind.STALE, EventKind.REPLACED, EventKind.EVICTED):
            changes.set_class(kind in kinds, f"-{kind}")

    def _show_ledger(self, events: Sequence[MemoryEvent]) -> None:
        text = Text()
        for event in reversed(events[-LEDGER_LINES:]):
            if text:
                text.append("\n")
            text.append(f"[{_tag(event)}] ", style="dim")
            text.append_text(literal(event.describe(), _KIND_STYLE[event.kind]))
        self.query_one("#ledger", Static).update(text or Text("No events yet.", "dim"))

    @on(Button.Pressed, "#forget-all")
    def _forget_all(self, event: Button.Pressed) -> None:
        event.stop()
        self.post_message(ForgetRequested(None))
