"""The workbench's commands in the command palette (Ctrl+P), after Textual's own: each runs what its key
or the app runs, so the palette is one more way in, never a way of its own."""

from __future__ import annotations

from collections.abc import Coroutine, Iterable
from typing import TYPE_CHECKING, Any, Protocol

from textual.app import SystemCommand

from workbench.runtime.config import Mode

if TYPE_CHECKING:
    from textual.screen import Screen

    from workbench.session.controller import SessionController


class Commanded(Protocol):
    """What the palette's commands run: the app's actions and switches."""

    @property
    def screen_stack(self) -> list[Screen[Any]]: ...
    @property
    def ready(self) -> bool: ...
    @property
    def session(self) -> SessionController: ...
    @property
    def pair(self) -> bool: ...
    def run_worker(self, work: Coroutine[Any, Any, None]) -> object: ...
    def set_session_mode(self, mode: Mode) -> Coroutine[Any, Any, None]: ...
    def set_session_recall(self, on: bool) -> Coroutine[Any, Any, None]: ...
    def use_host_parse(self) -> None: ...
    def action_forget_all(self) -> None: ...
    def action_show_calls(self) -> None: ...
    def action_remembered(self) -> None: ...
    def action_drift(self) -> None: ...
    def action_export_chronology(self) -> None: ...
    def action_drift_on_conversation(self) -> None: ...
    def action_help(self) -> None: ...


def lab_open(app: Commanded) -> bool:
    """A drift lab is on the stack, on top or under a modal. Known by its id: its module (and the chart
    library) loads only when a lab opens."""
    return any(screen.id == "drift" for screen in app.screen_stack)


def workbench_commands(app: Commanded) -> Iterable[SystemCommand]:
    """The workbench's commands, those that need the session once it runs."""
    both = "both" if app.pair else "all"
    yield SystemCommand(
        "Forget all facts", f"Remove every fact and replace {both} agents' histories", app.action_forget_all
    )
    if app.ready:
        session = app.session
        other = Mode.PROVIDER if session.mode is Mode.MANUAL else Mode.MANUAL
        yield SystemCommand(
            f"Switch to {other} mode",
            f"{both.capitalize()} agents start new, empty sessions (their histories are replaced); the facts are kept",
            lambda: app.run_worker(app.set_session_mode(other)),
        )
        if session.writer_failing:
            yield SystemCommand(
                "Use the host parse as the writer",
                "The writer model keeps failing the contract: read declarations with the host's own parse, "
                "no model call, for this session (said in the ledger and the header)",
                app.use_host_parse,
            )
        recall_on = session.status.recall is not None
        yield SystemCommand(
            f"Turn recall {'off' if recall_on else 'on'}",
            "Retrieved chat-history memory (seed 004): store every message, recall similar ones; "
            f"{both} agents start new sessions",
            lambda: app.run_worker(app.set_session_recall(not recall_on)),
        )
    yield SystemCommand("What the model saw", "The last turn's calls of the focused pane", app.action_show_calls)
    yield SystemCommand(
        "What is remembered",
        "Every memory the agents run and what each holds now, live; forget any of it from there (F3)",
        app.action_remembered,
    )
    if not lab_open(app):  # one lab at a time, as F5
        yield SystemCommand(
            "Drift lab", "Run the built-in chronology through every context policy and compare", app.action_drift
        )
    yield SystemCommand(
        "Export conversation as chronology",
        f"{both.capitalize()} panes' messages and every forget, to a file the drift lab runs; questions are probes",
        app.action_export_chronology,
    )
    if not lab_open(app):
        yield SystemCommand(
            "Run the drift lab on this conversation",
            f"Replay {both} panes' messages and forgets through every context policy",
            app.action_drift_on_conversation,
        )
    yield SystemCommand("Workbench help", "The contract, the commands and the keys", app.action_help)
