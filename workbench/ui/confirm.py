"""The forget question: the one confirmation every forget passes through."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from rich.text import Text
from textual import events, on
from textual._time import get_time  # the clock Textual stamps events with (monotonic on POSIX)
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.reactive import var
from textual.screen import ModalScreen
from textual.widgets import Button, Static

from workbench.session.views import MAX_VALUE_CHARS, quoted
from workbench.ui.keys_footer import KeysFooter

# How many of one key's values a forget's question names (each quoted, at most a fact's length).
_VALUES_NAMED = 3


class ConfirmForget(ModalScreen[bool]):
    """Asks before forgetting: a forget replaces the agents' histories and cannot be undone.

    Only what a person did after the question was drawn can answer it. A key or a click stamped
    (Textual's `event.time`, taken as the event arrived) before the first frame that showed it never
    reaches it (`answers`; the app holds such events back). The forgetting answer (y, or the Forget
    button) counts only once the question has been on screen for GUARD_SECONDS: keys typed before a
    person could have read it (the "y" of "my" typed on after an Enter) are ignored. Keeping (n, Esc,
    the Keep button, focused first) is always safe."""

    GUARD_SECONDS = 0.5
    AUTO_FOCUS = "#no"  # never the Forget button, not even for the moment before on_mount runs

    shown_at: var[float] = var(float("inf"), init=False)  # when it was first drawn (Textual's event clock)

    BINDINGS = [
        Binding("y", "answer(True)", "Forget"),
        Binding("n,escape", "answer(False)", "Keep"),
    ]

    def __init__(
        self,
        keys: Sequence[str] | None,
        held: Mapping[str, Sequence[str]] | None = None,
        *,
        agents: Sequence[str],
        kept: int = 0,
        also: Sequence[str] = (),
        reaches: Sequence[str] = (),
        unreached: Sequence[str] = (),
        holding: Mapping[str, bool | None] | None = None,
        value_chars: int = MAX_VALUE_CHARS,
    ) -> None:
        """`keys` to forget (None: everything), `held` the values of each that the question names,
        `agents` the panes whose histories it replaces, `kept` how many facts stay, `also` the other facts
        that go because their value holds one, `reaches` the memories it reaches beside working memory
        and the histories ("recall store"),
        `unreached` the memories it cannot reach (named before the answer: what they hold stays),
        `holding` whether each of `reaches` holds a value the forget of keys removes (None, or one not in
        it: not known; the session's preview gives it),
        `value_chars` the contract's value length (the session's), to which values are named."""
        super().__init__(classes="modal")
        self.value_chars = value_chars
        self.keys = tuple(keys) if keys is not None else None
        self.held = {key: tuple(values) for key, values in (held or {}).items()}
        self.agents = tuple(agents)
        self.kept = kept
        self.also = tuple(also)
        self.reaches = tuple(reaches)
        self.unreached = tuple(unreached)
        self.holding = dict(holding or {})

    def _question(self, keys: tuple[str, ...]) -> Text:
        """`Forget module = "Billing"?`, or with several keys and values, each key's first few."""
        what = Text("Forget ")
        for index, key in enumerate(keys):
            values = self.held.get(key, ())
            what.append("; " if index else "")
            what.append(key, "bold")
            if values:
                shown = ", ".join(quoted(v, self.value_chars) for v in values[:_VALUES_NAMED])
                what.append(" = ").append(shown, "bold")
                what.append(f" and {len(values) - _VALUES_NAMED:,} more" if len(values) > _VALUES_NAMED else "")
        return what.append("?")

    def _where(self, one: bool) -> str:
        """What each memory the forget reaches holds of the value(s): removed from those that hold some,
        not known for those that cannot be told, none now for the others."""
        held = [r for r in self.reaches if self.holding.get(r) is True]
        unknown = [r for r in self.reaches if self.holding.get(r) is None]
        empty = [r for r in self.reaches if self.holding.get(r) is False]
        where = f" {'It is' if one else 'They are'} also removed from {_listed(held)}." if held else ""
        if unknown:
            reached = "it" if len(unknown) == 1 else "them"
            where += f" Whether {'it is' if one else 'they are'} in {_listed(unknown)} is not known (the forget "
            where += f"reaches {reached} all the same)."
        if empty:
            where += f" None of {'it' if one else 'them'} is in {_listed(empty)} now."
        return where

    def compose(self) -> ComposeResult:
        if self.keys:
            what = self._question(self.keys)
            others = f" The other {self.kept} fact(s) stay." if self.kept > 0 else ""
            if self.also:
                goes = "goes too: its value holds" if len(self.also) == 1 else "go too: each value holds"
                others = f" {', '.join(self.also)} {goes} a value forgotten here.{others}"
            one = len(self.keys) == 1 and len(self.held.get(self.keys[0], ())) <= 1
            where = self._where(one)
            histories, replaced, none = _histories(self.agents)
            consequence = (
                f"{histories[0].upper()}{histories[1:]} will be {replaced}, so {none} bring the "
                f"value back.{where}{others} This cannot be undone."
                if one
                else f"Every memory that holds these values forgets them, and {histories} will be {replaced}, "
                f"so {none} bring them back.{where}{others} This cannot be undone."
            )
        else:
            what = Text("Forget every fact?", "bold")
            emptied = _listed(("working memory", *self.reaches))
            histories, replaced, _ = _histories(self.agents)
            consequence = (
                f"{emptied[0].upper()}{emptied[1:]} will be emptied and {histories} {replaced}. This cannot be undone."
            )
        if self.unreached:
            held = "what it holds stays" if len(self.unreached) == 1 else "what they hold stays"
            consequence += f" Forget cannot reach {'; '.join(self.unreached)}: {held}."
        with Vertical(id="dialog"):
            with VerticalScroll(id="question-scroll", can_focus=False):
                yield Static(what, id="question")
            with Vertical(id="answer"):
                yield Static(Text(consequence), id="consequence")  # a store's reason is its own text, not markup
                with Horizontal(id="buttons"):
                    yield Button("Forget (y)", id="yes", variant="error")
                    yield Button("Keep (n)", id="no", variant="primary")
        yield KeysFooter()  # this screen's keys: Enter presses the focused button, Keep at first

    def on_mount(self) -> None:
        self.query_one("#no", Button).focus()
        self.call_after_refresh(self._shown)

    def _shown(self) -> None:
        self.shown_at = get_time()

    def answers(self, event: events.Event) -> bool:
        """Whether `event` may answer the question: it arrived after the question was drawn."""
        return event.time > self.shown_at

    def _read(self, time: float) -> bool:
        """Whether a forgetting answer at `time` came after the question could be read; says so if not."""
        if time - self.shown_at >= self.GUARD_SECONDS:
            return True
        self.notify("Ignored a forget answered before this question could be read: answer again to forget.")
        return False

    def on_key(self, event: events.Key) -> None:
        """Stops a too-early "y" before the binding sees it (bindings are checked after the key bubbles)."""
        if event.key == "y" and not self._read(event.time):
            event.stop()
            event.prevent_default()

    def action_answer(self, answer: bool) -> None:
        self._answered(answer)

    @on(Button.Pressed)
    def _pressed(self, event: Button.Pressed) -> None:
        forget = event.button.id == "yes"
        if not forget or self._read(event.time):
            self._answered(forget)

    def _answered(self, answer: bool) -> None:
        """Close with `answer`, keeping nothing of the values the question named: the screen may be
        referred to for a while yet (a background widget's last event names it as its sender)."""
        self.held = {}
        self.query_one("#question", Static).update("")
        self.dismiss(answer)


def _histories(agents: Sequence[str]) -> tuple[str, str, str]:
    """The histories a forget replaces, counted: what they are, what becomes of them, and who cannot
    bring a value back ("the history of triage", "replaced by a new, empty session", "it cannot")."""
    if len(agents) == 1:
        return f"the history of {agents[0]}", "replaced by a new, empty session", "it cannot"
    many = "both agents'" if len(agents) == 2 else f"all {len(agents)} agents'"
    return f"{many} histories", "replaced by new, empty sessions", "neither can" if len(agents) == 2 else "none can"


def _listed(names: Sequence[str]) -> str:
    """("working memory", "recall store", "Mem0") -> "working memory, the recall store and Mem0"."""
    shown = [name if name[:1].isupper() or name == "working memory" else f"the {name}" for name in names]
    return shown[0] if len(shown) == 1 else f"{', '.join(shown[:-1])} and {shown[-1]}"
