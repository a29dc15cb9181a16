"""The workbench TUI: two agent panes beside a live fact panel. The app composes, draws and owns the
workers; what it does besides drawing goes through the SessionController (see ui/intentions.py)."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING

from textual import events, on
from textual.app import ComposeResult, SystemCommand
from textual.binding import Binding
from textual.containers import Container, Horizontal
from textual.content import Content
from textual.screen import Screen
from textual.widgets import Footer, Header

from workbench.ui import intentions
from workbench.ui.chat import PANES, ChatPane
from workbench.ui.composer import Composer
from workbench.ui.confirm import ConfirmForget
from workbench.ui.facts import FactPanel, ForgetRequested
from workbench.ui.main_screen import MainScreen
from workbench.ui.palette import workbench_commands
from workbench.ui.paste import install_paste_guard
from workbench.ui.startup import stylesheet_dir
from workbench.ui.turn_flow import TurnFlow
from workbench.ui.typing import PauseScheduler, TypingClock

if TYPE_CHECKING:
    from workbench.session.controller import SessionController


class WorkbenchApp(TurnFlow):
    """Renders runtime state and turns user intentions into session calls."""

    TITLE = "workbench"
    CSS_PATH = [stylesheet_dir() / "workbench.tcss"]
    HORIZONTAL_BREAKPOINTS = [(0, "-narrow"), (110, "-wide")]
    AUTO_FOCUS = "#support Composer"  # where on_mount focuses: focus set once, not moved (each move restyles)
    BINDINGS = [
        Binding("f1", "help", "Help", id="help"),
        Binding("f2", "show_calls", "What the model saw", id="show_calls"),
        # Not in the footer: at 80 columns it has no room left (F1 help, the palette and the README list it).
        Binding("f3", "remembered", "What is remembered", id="remembered", show=False),
        Binding("f5", "drift", "Drift lab", id="drift"),
        Binding("f8", "forget_all", "Forget all", id="forget_all"),
        Binding("ctrl+q", "quit", "Quit", id="quit"),
    ]

    def __init__(
        self, session: SessionController | None = None, *, start: Callable[[], SessionController] | None = None
    ) -> None:
        super().__init__(session, start=start)
        install_paste_guard()
        # Where the user last typed: finished answers and a turn's facts are drawn in a pause in typing elsewhere.
        self.typing = TypingClock()
        self.scheduler = PauseScheduler(self.typing, self._run_lane)

    def get_default_screen(self) -> Screen[object]:
        return MainScreen(self.size.width, self.HORIZONTAL_BREAKPOINTS)

    def compose(self) -> ComposeResult:
        yield Header(icon="")
        with Horizontal(id="main"):
            with Container(id="panes"):
                for agent, (title, placeholder, hint) in PANES.items():
                    yield ChatPane(
                        agent,
                        title=title,
                        placeholder=placeholder,
                        hint=hint,
                        scheduler=self.scheduler,
                        focused=f"#{agent} " in (self.AUTO_FOCUS or ""),  # drawn focused from the first frame
                    )
            yield FactPanel()
        yield Footer()

    async def on_event(self, event: events.Event) -> None:
        """Where input enters: an answer to the forget question that came before it was drawn goes
        no further (a printable key goes to the draft instead); keys note where the user types."""
        question = self.screen_stack[-1] if self.screen_stack else None
        early = isinstance(question, ConfirmForget) and not question.answers(event)
        if early and isinstance(event, events.Key | events.MouseDown | events.MouseUp) and not event.is_forwarded:
            if isinstance(event, events.Key) and event.is_printable and event.character:
                self._last_input.insert(event.character)
            return
        if isinstance(event, events.Key | events.Paste) and not event.is_forwarded:
            self.typing.noted(self.screen.focused if self.screen_stack else None)
        await super().on_event(event)

    def on_mount(self) -> None:
        self._last_input = self.pane("support").prompt
        self._last_input.focus()
        self.screen_change_signal.subscribe(self, self._screen_changed)
        self.start_runtime()

    def format_title(self, title: str, sub_title: str) -> Content:
        return super().format_title(title, sub_title) if title else Content(sub_title)

    # -- focus: typing never lands anywhere it could forget something -------------------------------

    def on_descendant_focus(self, event: events.DescendantFocus) -> None:
        # The event's widget, not ``self.focused``: during shutdown the screen stack is empty.
        if isinstance(event.widget, Composer):
            self._last_input = event.widget

    def _screen_changed(self, screen: Screen[object]) -> None:
        """Back on the main screen after a modal or the drift lab: focus the input last typed in."""
        if screen is self.screen_stack[0]:
            screen.set_focus(self._last_input)

    @on(FactPanel.Typed)
    def _typed_on_the_panel(self, event: FactPanel.Typed) -> None:
        self._last_input.type_in(event.character)

    @property
    def active_agent(self) -> str:
        pane = next((a for a in self._last_input.ancestors if isinstance(a, ChatPane)), None)
        return pane.agent if pane else "support"

    # -- keys and the palette ----------------------------------------------------------------------

    @on(ForgetRequested)
    async def _forget_requested(self, request: ForgetRequested) -> None:
        if not self._unavailable():
            await intentions.ask_to_forget(self, request.keys, request.held)

    def action_forget_all(self) -> None:
        self.post_message(ForgetRequested(None))

    def action_show_calls(self) -> None:
        if not self._unavailable():
            intentions.show_calls(self, self.active_agent)

    def action_remembered(self) -> None:
        if not self._unavailable():
            intentions.show_remembered(self)

    def action_help(self) -> None:
        intentions.show_help(self)

    def action_drift(self) -> None:
        if not self._unavailable():
            intentions.open_drift_lab(self)

    def action_export_chronology(self) -> None:
        if not self._unavailable():
            intentions.export_chronology(self)

    def action_drift_on_conversation(self) -> None:
        if not self._unavailable():
            intentions.drift_on_conversation(self)

    def get_system_commands(self, screen: Screen[object]) -> Iterable[SystemCommand]:
        yield from super().get_system_commands(screen)
        yield from workbench_commands(self)
