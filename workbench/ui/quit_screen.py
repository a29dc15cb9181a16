"""The question a quit asks when what was admitted is not on disk (`--persist` and a save that still
fails on its last try): what is unsaved, and where to write the conversation before going. Staying is
the safe answer, focused first."""

from __future__ import annotations

from dataclasses import dataclass

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Input, Static

from workbench.ui.keys_footer import KeysFooter


@dataclass(frozen=True)
class QuitAnswer:
    """Quit, after exporting the conversation to `export` (None: without an export)."""

    export: str | None


class QuitUnsaved(ModalScreen[QuitAnswer | None]):
    """None: stay (Esc, the Stay button); a QuitAnswer: quit, with or without an export first."""

    BINDINGS = [Binding("escape", "stay", "Stay")]
    AUTO_FOCUS = "#stay"

    def __init__(self, unsaved: str, path: str, why: str = "") -> None:
        super().__init__(classes="modal")
        self.unsaved = unsaved
        self.path = path
        self.why = why

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog", classes="wide export"):
            yield Static(Text(f"{self.why}Not saved: quit anyway?", "bold"), id="question")
            yield Static(Text(f"Not on disk: {self.unsaved}."), classes="hint-left")
            yield Static(
                "Stay, and it is saved as soon as the disk takes it (it is retried meanwhile); or export this "
                "conversation (every message and forget, as a chronology: its declarations give the facts again) "
                "before quitting:",
                classes="hint-left",
            )
            yield Input(self.path, id="quit-export", placeholder="file to write (JSON)")
            with Horizontal(id="buttons"):
                yield Button("Stay", id="stay", variant="primary")
                yield Button("Quit without saving", id="quit", variant="error")
                yield Button("Export and quit", id="export")
        yield KeysFooter()

    @on(Button.Pressed, "#export")
    @on(Input.Submitted, "#quit-export")
    def _export(self) -> None:
        path = self.query_one("#quit-export", Input).value.strip()
        if not path:
            self.notify("Give a file name to write.", severity="warning")
            return
        self.dismiss(QuitAnswer(path))

    @on(Button.Pressed, "#quit")
    def _quit(self) -> None:
        self.dismiss(QuitAnswer(None))

    @on(Button.Pressed, "#stay")
    def action_stay(self) -> None:
        self.dismiss(None)
