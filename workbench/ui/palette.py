"""The workbench's commands in the command palette (Ctrl+P), after Textual's own: each runs what its key
or the app runs, so the palette is one more way in, never a way of its own; and the switches only the
palette offers (mode, recall, the writer)."""

from __future__ import annotations

from collections.abc import Coroutine, Iterable
from typing import TYPE_CHECKING, Any, Protocol

from textual.app import SystemCommand

from workbench.session.views import Mode
from workbench.ui.forgetting import in_pair, replace_histories

if TYPE_CHECKING:
    from textual.notifications import SeverityLevel
    from textual.screen import Screen

    from workbench.session.controller import SessionController
    from workbench.ui.chat import ChatPane
    from workbench.ui.forgetting import ForgetFlow


class Commanded(Protocol):
    """What the palette's commands run: the app's actions and switches."""

    @property
    def screen_stack(self) -> list[Screen[Any]]: ...
    @property
    def ready(self) -> bool: ...
    @property
    def session(self) -> SessionController: ...
    @property
    def panes(self) -> Iterable[ChatPane]: ...
    @property
    def forgetting(self) -> ForgetFlow: ...
    def show_status(self) -> None: ...
    def notify(self, message: str, *, severity: SeverityLevel = "information") -> None: ...
    def run_worker(self, work: Coroutine[Any, Any, None]) -> object: ...
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
    both = "both" if in_pair(app.panes) else "all"
    yield SystemCommand(
        "Forget all facts", f"Remove every fact and replace {both} agents' histories", app.action_forget_all
    )
    if app.ready:
        status = app.session.state().status
        other = Mode.PROVIDER if status.mode is Mode.MANUAL else Mode.MANUAL
        yield SystemCommand(
            f"Switch to {other} mode",
            f"{both.capitalize()} agents start new, empty sessions (their histories are replaced); the facts are kept",
            lambda: app.run_worker(switch_mode(app, other)),
        )
        if status.writer_failing:
            yield SystemCommand(
                "Use the host parse as the writer",
                "The writer model keeps failing the contract: read declarations with the host's own parse, "
                "no model call, for this session (said in the ledger and the header)",
                lambda: app.run_worker(use_host_parse(app)),
            )
        recall_on = status.recall is not None
        yield SystemCommand(
            f"Turn recall {'off' if recall_on else 'on'}",
            "Retrieved chat-history memory (seed 004): store every message, recall similar ones; "
            f"{both} agents start new sessions",
            lambda: app.run_worker(switch_recall(app, not recall_on)),
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


async def switch_mode(app: Commanded, mode: Mode) -> None:
    if any(pane.running for pane in app.panes):
        app.notify("Wait for the running turns to finish before switching mode.", severity="warning")
        return
    await app.session.switch(mode=mode)  # a workflow's agents start new sessions too
    app.show_status()
    await replace_histories(
        app.panes,
        lambda agent: f"Switched to {mode} mode: {app.forgetting.starting_anew(agent)}; the facts are kept.",
    )


async def switch_recall(app: Commanded, on: bool) -> None:
    if any(pane.running for pane in app.panes):
        app.notify("Wait for the running turns to finish before switching recall.", severity="warning")
        return
    if not await app.session.switch(recall=on):
        app.notify("This session was started without recall.", severity="warning")
        return
    app.show_status()
    state = (
        f"on: {'both' if in_pair(app.panes) else 'all'} agents recall from every earlier message of yours"
        if on
        else "off"
    )
    await replace_histories(
        app.panes,
        lambda agent: f"Recall {state}. {capitalized(app.forgetting.starting_anew(agent))}; the facts are kept.",
    )


def capitalized(text: str) -> str:
    return text[:1].upper() + text[1:]


async def use_host_parse(app: Commanded) -> None:
    """The writer model keeps failing the contract: switch this session to the host's own parse."""
    if await app.session.switch(host_parse=True):
        app.show_status()
