"""Export the conversation as a chronology: where to save it, and which questions are probes."""

from __future__ import annotations

from dataclasses import dataclass

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Input, SelectionList, Static
from textual.widgets.selection_list import Selection

from workbench.ui.keys_footer import KeysFooter

QUESTION_CHARS = 70


@dataclass(frozen=True)
class ExportRequest:
    path: str
    probes: list[int]


class ExportChronology(ModalScreen[ExportRequest | None]):
    """Every question (a message that declares nothing) is ticked as a probe; untick to leave it out."""

    BINDINGS = [Binding("escape", "cancel", "Cancel")]
    AUTO_FOCUS = "#export-path"  # the app's own matches nothing here: typing and Enter went nowhere

    def __init__(self, questions: list[tuple[int, str, str]], path: str) -> None:
        super().__init__(classes="modal")
        self.questions = questions
        self.path = path

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog", classes="wide export"):
            yield Static(Text("Export conversation as chronology", "bold"), id="question")
            yield Input(self.path, id="export-path", placeholder="file to write (JSON)")
            yield Static("Probes: the questions whose requests and answers the lab scores.", classes="hint-left")
            yield SelectionList[int](
                *(Selection(Text(f"{agent}: {_short(text)}"), index, True) for index, agent, text in self.questions),
                id="export-probes",
            )
            with Horizontal(id="buttons"):
                yield Button("Cancel", id="cancel")
                yield Button("Save", id="save", variant="primary")
        yield KeysFooter()

    @on(Button.Pressed, "#save")
    @on(Input.Submitted, "#export-path")
    def _save(self) -> None:
        path = self.query_one("#export-path", Input).value.strip()
        if not path:
            self.notify("Give a file name to write.", severity="warning")
            return
        self.dismiss(ExportRequest(path, sorted(self.query_one(SelectionList).selected)))

    @on(Button.Pressed, "#cancel")
    def action_cancel(self) -> None:
        self.dismiss(None)


def _short(text: str) -> str:
    line = " ".join(text.split())
    return line if len(line) <= QUESTION_CHARS else line[: QUESTION_CHARS - 3] + "..."
