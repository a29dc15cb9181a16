"""How a turn goes and comes back: a message sent from a pane is checked by the session, asked by the
app's worker, streamed to the pane as messages, and ends as one TurnEnded message that the pane
draws and the app hands on to the fact panel; memory's other batches come as MemoryUpdated."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine
from functools import partial
from typing import TYPE_CHECKING, Any

from textual import events, on
from textual.app import App
from textual.notifications import SeverityLevel
from textual.worker import Worker, WorkerState

from workbench.memory import EventKind
from workbench.runtime.view import NOT_SAVED, WRITER_FAILING, WRITER_SWITCHED
from workbench.ui import intentions
from workbench.ui.chat import ChatPane
from workbench.ui.composer import Composer
from workbench.ui.console import parse_console_command
from workbench.ui.facts import FactPanel, MemoryView
from workbench.ui.header import header_titles
from workbench.ui.messages import MemoryChanged, MemoryUpdated, Streamed, TurnEnded, TurnStarted
from workbench.ui.startup import error_line, settle_the_heap
from workbench.ui.typing import PauseScheduler

if TYPE_CHECKING:
    from workbench.runtime.view import MemoryUpdate
    from workbench.session.controller import SessionController, TurnOutcome

FACT_PANEL = "fact panel"  # the scheduler's lane of the panel's views

NOTE_TITLES = {
    "recall": "Recall",
    WRITER_FAILING: "The writer keeps failing",
    WRITER_SWITCHED: "Writer",
    NOT_SAVED: "Not saved",
}


class TurnFlow(App[None]):
    """The part of the workbench app that runs turns through the session (the app is its subclass)."""

    _built: SessionController | None = None
    _session: SessionController | None = None
    _start_error: str | None = None
    scheduler: PauseScheduler

    def __init__(self, session: SessionController | None, *, start: Callable[[], SessionController] | None) -> None:
        """Give an assembled session (`workbench.session.assemble`), or `start`, which assembles one
        right after the first frame, so the window opens before Agent Framework and pydantic have loaded."""
        if (session is None) == (start is None):
            raise ValueError("give the app a session, or a way to start one")
        super().__init__()
        self._built, self._start = session, start
        self._disconnect: list[Callable[[], None]] = []

    def start_runtime(self) -> None:
        """Connect the session given, or start one right after the first frame."""
        if self._built is not None:
            self._connect()
        else:
            self.sub_title = "starting: loading the agent runtime ..."
            self.call_after_refresh(self._start_runtime)

    def _start_runtime(self) -> None:
        """Right after the first frame: assemble the session (keys typed meanwhile wait in the terminal).
        A thread would not help: the imports hold the GIL, and compete with the UI for it."""
        assert self._start is not None
        try:
            self._built = built = self._start()
        except Exception as exc:
            self._start_error = error_line(exc)
            self.sub_title = f"could not start: {self._start_error}"
            self.notify(self._start_error, title="Start-up failed", severity="error", timeout=30, markup=False)
            self.log.error("start-up failed", exc)
        else:
            if built.forget_pending:  # completed before anything else: no turn can be asked meanwhile
                self.sub_title = "starting: completing a forget that was cut short ..."
                self.run_worker(self._complete_pending(), name="completing a forget", exit_on_error=False)
            else:
                self._connect()
        finally:
            settle_the_heap()  # also ends the command's hold on the collector (`workbench.heap`)

    async def _complete_pending(self) -> None:
        assert self._built is not None
        session = self._built
        try:
            report = await session.complete_pending()
        except Exception as exc:  # no turn may run before it: the app stays unavailable and says why
            self._start_error = f"a forget cut short could not be completed: {error_line(exc)}"
            self.sub_title = f"could not start: {self._start_error}"
            raise
        self._connect()
        if report is not None:
            title = f"Start-up {session.completed}"
            self.notify(
                report.describe(), title=title, severity="error" if report.failures else "information", markup=False
            )

    def _connect(self) -> None:
        assert self._built is not None
        self._session = session = self._built
        session.drafts.attach(lambda: self.query(Composer))
        self._disconnect = [session.subscribe(self._settled)]
        self.show_status()
        intentions.show_resumed(self)
        self.query_one(FactPanel).view = MemoryView(self.session.snapshot())

    def _settled(self, update: MemoryUpdate) -> None:  # may run on another thread: post, never draw
        self.post_message(MemoryUpdated(update))

    def on_unmount(self) -> None:
        for disconnect in self._disconnect:
            disconnect()

    @property
    def session(self) -> SessionController:
        if self._session is None:
            raise RuntimeError("the agent runtime is not running")
        return self._session

    @property
    def ready(self) -> bool:
        return self._session is not None

    def pane(self, agent: str) -> ChatPane:
        return self.query_one(f"#{agent}", ChatPane)

    def show_status(self, width: int | None = None) -> None:
        self.title, self.sub_title = header_titles(self.TITLE or "", self.session.status, width or self.size.width)

    def on_resize(self, event: events.Resize) -> None:
        if self.ready:
            self.show_status(event.size.width)

    def _unavailable(self) -> bool:
        """True (and says why) while there is no runtime: still starting, or start-up failed."""
        if self._start_error is not None:
            self.notify(
                f"The agent runtime could not start: {self._start_error}. Quit (Ctrl+Q), fix it and start again.",
                title="Not available",
                severity="error",
                markup=False,
            )
        elif not self.ready:
            self.notify("Still starting: the agent runtime is loading. Your draft is kept.", severity="warning")
        return not self.ready

    def _run_lane(self, work: Coroutine[Any, Any, None], lane: str) -> None:
        """The scheduler's lanes run as the app's workers; their failures end in `_worker_changed`."""
        self.run_worker(work, name=lane, group=lane, exit_on_error=False)

    # -- turns: the app's worker asks the session; the pane draws the messages it is sent -------------

    @on(ChatPane.Submitted)
    async def _submitted(self, event: ChatPane.Submitted) -> None:
        pane, text = event.pane, event.text
        if not text.strip() or self._unavailable():
            return
        if command := parse_console_command(text):
            pane.accepted(text)
            await intentions.console(self, pane, command)
        elif refusal := self.session.refusal(text):
            self.notify(
                f"Not sent: {refusal}. Your draft is still in the input: F7 selects all of it, and Delete clears it.",
                title="Message cannot be sent",
                severity="error",
                markup=False,
            )
        elif self.turns_running(pane):
            self.notify(f"The {pane.agent} agent is still answering: wait, or press Esc to cancel.", severity="warning")
        else:
            pane.post_message(TurnStarted(text))
            # Worker.StateChanged does not bubble: every turn's failure is handled here, in `_worker_changed`.
            work = self._ask(pane, text)
            self.run_worker(work, name=f"{pane.agent} turn", group=pane.turn_group, exit_on_error=False)

    async def _ask(self, pane: ChatPane, text: str) -> None:
        outcome: TurnOutcome | None = None
        cancelled = False

        def stream(piece: str) -> None:
            pane.post_message(Streamed(piece))

        try:
            outcome = await self.session.ask(pane.agent, text, stream)
        except asyncio.CancelledError:
            cancelled = True
            raise
        finally:
            applied = outcome is None and self.session.applied_unfinished(pane.agent)
            pane.post_message(TurnEnded(pane.agent, outcome, cancelled, self.session.usage(pane.agent), applied))

    def turns_running(self, *panes: ChatPane) -> bool:
        groups = {p.turn_group for p in panes or self.query(ChatPane)}
        return any(p.busy for p in self.query(ChatPane) if p.turn_group in groups) or any(
            w.group in groups and not w.is_finished for w in self.workers
        )

    @on(TurnEnded)
    def _turn_ended(self, event: TurnEnded) -> None:
        """The turn's batches reach the panel in order, in a pause in typing outside its pane."""
        panel, here = self.query_one(FactPanel), self.pane(event.agent).prompt
        for update in event.outcome.memory if event.outcome else ():
            self.scheduler.later(FACT_PANEL, here, partial(panel.show, MemoryView.after(update)))
        self._memory_changed(None)  # the turn may have written any memory

    @on(MemoryUpdated)
    async def _memory_updated(self, message: MemoryUpdated) -> None:
        """A forget or a note is drawn at once, after every view before it: nothing waits holding a forgotten value."""
        self._memory_changed(message.update)
        notes = [e for e in message.update.outcome.events if e.kind is EventKind.NOTE]
        if notes:
            self.show_status()
        for note in (n for n in notes if n.origin != "forget"):  # what a forget reached: the ledger says it
            title = NOTE_TITLES.get(note.origin, "Writer format")
            timeout = 15 if note.origin in (WRITER_FAILING, NOT_SAVED) else 5
            severity: SeverityLevel = "error" if note.origin == NOT_SAVED else "information"
            self.notify(note.describe(), title=title, severity=severity, markup=False, timeout=timeout)
        await self.scheduler.now(FACT_PANEL)
        self.query_one(FactPanel).show(MemoryView.after(message.update))

    def _memory_changed(self, update: MemoryUpdate | None) -> None:
        for screen in self.screen_stack:
            screen.post_message(MemoryChanged(update))

    @on(ChatPane.CancelRequested)
    def _cancel(self, event: ChatPane.CancelRequested) -> None:
        self.workers.cancel_group(self, event.pane.turn_group)

    @on(Worker.StateChanged)
    async def _worker_changed(self, event: Worker.StateChanged) -> None:
        """Every worker's unexpected failure ends here: shown, logged, and the app keeps running."""
        if event.state is not WorkerState.ERROR:
            return
        detail = error_line(event.worker.error)
        self.log.error(f"worker {event.worker.name!r} failed", event.worker.error)
        title = f"{event.worker.name or 'A task'} failed unexpectedly"
        self.notify(detail, title=title, severity="error", markup=False)
        for pane in [p for p in self.query(ChatPane) if p.turn_group == event.worker.group]:
            await pane.notice(
                f"This turn stopped on an unexpected error: {detail}. The app keeps running; the ledger "
                "says what memory did.",
                kind="error",
            )
