"""The workbench TUI: the agents' panes beside a live fact panel, on the main screen
(`workbench.ui.main_screen`). The app starts and connects the session (`workbench.session`, its only
door) and hands it down; it holds the keys and the screens they open, and the flows they start live
in modules of their own: the forget (`forgetting`), console commands (`console`), the palette
(`palette`), export and the drift lab (`exporting`), quitting (`quitting`). Each pane runs its own
turns and posts their ends up; nothing is posted down to a widget."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Collection, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Protocol, runtime_checkable

from textual import events, on
from textual.app import App, SystemCommand
from textual.binding import Binding
from textual.content import Content
from textual.notifications import SeverityLevel
from textual.reactive import var
from textual.screen import Screen
from textual.worker import Worker, WorkerState

from workbench.session.views import EventKind
from workbench.ui.chat import BUILT_IN, ChatPane
from workbench.ui.composer import Composer
from workbench.ui.exporting import ask_to_export, drift_lab, open_lab_on_conversation
from workbench.ui.facts import ForgetRequested
from workbench.ui.forgetting import ForgetFlow
from workbench.ui.header import header_titles
from workbench.ui.main_screen import MainScreen
from workbench.ui.messages import MemoryUpdated, TurnEnded
from workbench.ui.palette import lab_open, workbench_commands
from workbench.ui.paste import install_paste_guard
from workbench.ui.quitting import Quitting
from workbench.ui.startup import SETTLE_AFTER_READY, error_line, say_library_notes, settle_the_heap, stylesheet_dir
from workbench.ui.typing import PauseScheduler, TypingClock

if TYPE_CHECKING:
    from textual.css.query import DOMQuery

    from workbench.session.controller import SessionController
    from workbench.session.views import Completed, LibraryLog, MemoryUpdate


@runtime_checkable
class ReadsMemory(Protocol):
    """A screen that shows what memory holds (what is remembered, F3): told when memory changed."""

    def memory_changed(self, update: MemoryUpdate | None) -> None: ...


class WorkbenchApp(App[None]):
    """Renders the session's state and turns user intentions into session calls."""

    TITLE = "workbench"
    CSS_PATH = [stylesheet_dir() / "workbench.tcss"]
    HORIZONTAL_BREAKPOINTS = [(0, "-narrow"), (110, "-wide")]
    AUTO_FOCUS = "#pane-0 Composer"  # where on_mount focuses: focus set once, not moved (each move restyles)
    BINDINGS = [
        Binding("f1", "help", "Help", id="help"),
        Binding("f2", "show_calls", "What the model saw", id="show_calls"),
        # Not in the footer: at 80 columns it has no room left (F1 help, the palette and the README list it).
        Binding("f3", "remembered", "What is remembered", id="remembered", show=False),
        Binding("f4", "other_agents", "Agents", id="other_agents"),  # the others: shown when some are out of view
        Binding("f5", "drift", "Drift lab", id="drift"),
        Binding("f8", "forget_all", "Forget all", id="forget_all"),
        Binding("ctrl+q", "quit", "Quit", id="quit"),
    ]

    settled: var[bool] = var(False)
    """Start-up's last step done: the heap settled once the runtime has loaded (`settle_the_heap`)."""

    def __init__(
        self,
        session: SessionController | None = None,
        *,
        start: Callable[[], SessionController] | None = None,
        agents: Sequence[str] | None = None,
        notices: Mapping[str, str] | None = None,
        labels: Mapping[str, str] | None = None,
        hints: Mapping[str, str] | None = None,
        workflows: Collection[str] | Mapping[str, Sequence[str]] = (),
        logged: LibraryLog | None = None,
    ) -> None:
        """Give an assembled session (`workbench.build`), or `start`, which assembles one right after the first frame,
        so the window opens before Agent Framework and pydantic have loaded; then `agents` names the panes it opens with
        (default: the built-in agents). A session started with other agents gets their panes when it connects.
        `notices`: what the start has to say, by title (entries not loaded, names the workbench gave), shown once the
        window opens; `labels`: a pane's title where it is not its agent's name alone ("weather_agent (folder name)", a
        workflow's); `hints`: a pane's hint where it is not an agent's (a workflow's); `workflows`: the panes a workflow
        answers in, or each with the names of the agents its executors run (a forget's note names them); `logged`: what
        the libraries log (`workbench.notes`), said in notices while the window is open."""
        if (session is None) == (start is None):
            raise ValueError("give the app a session, or a way to start one")
        super().__init__()
        self._built, self._start = session, start
        self._agents = tuple(session.agent_names if session is not None else agents or BUILT_IN)
        self._notices = dict(notices or {})
        self.forgetting = ForgetFlow(self, workflows)
        self._logged = logged
        self._session: SessionController | None = None
        self._disconnect: list[Callable[[], None]] = []
        self.quitting = Quitting(self)
        install_paste_guard()
        # Where the user last typed: finished answers and a turn's facts are drawn in a pause in typing elsewhere.
        self.typing = TypingClock()
        self.scheduler = PauseScheduler.of_app(self.typing, self)
        self._labels, self._hints = dict(labels or {}), dict(hints or {})

    def get_default_screen(self) -> Screen[object]:
        self.main = MainScreen(  # the main UI: the panes, the fact panel, and their handlers
            self.size.width,
            self.HORIZONTAL_BREAKPOINTS,
            self._agents,
            self.forgetting,
            self.scheduler,
            labels=self._labels,
            hints=self._hints,
        )
        return self.main

    async def on_event(self, event: events.Event) -> None:
        """Where input enters: an answer to the forget question that came before it was drawn goes
        no further (a printable key goes to the draft instead); keys note where the user types."""
        if self.forgetting.held_back(event, lambda: self.main.last_input):
            return
        if isinstance(event, events.Key | events.Paste) and not event.is_forwarded:
            self.typing.noted(self.screen.focused if self.screen_stack else None)
        await super().on_event(event)

    async def on_mount(self) -> None:
        await self.main.widgets_mounted.wait()  # composed in its own task: the session is connected to them
        self.quitting.on_signals(lambda name: self.call_later(self.quit_asked, name))
        for title, notice in self._notices.items():
            self.notify(notice, title=title, severity="warning", timeout=30, markup=False)
        if self._logged is not None:
            say_library_notes(self, self._logged)
        if self._built is not None:
            self._connect()
        else:
            self.sub_title = "starting: loading the agent runtime ..."
            self.call_after_refresh(self._start_session)

    async def on_unmount(self) -> None:
        if self._logged is not None:
            self._logged.send_to(None)  # kept: the command says them on stderr once the window is gone
        for disconnect in self._disconnect:
            disconnect()
        self.quitting.off_signals()
        if self._built is not None:  # connected, or its forget cut short could not be completed
            # The state file written whole (a copy of it alone resumes everything), the recall store
            # closed, the folders let go: every quit (Ctrl+Q, Ctrl+C, a signal) ends here, once.
            await self._built.aclose()

    def format_title(self, title: str, sub_title: str) -> Content:
        return super().format_title(title, sub_title) if title else Content(sub_title)

    # -- the session: started, connected, asked ---------------------------------------------------

    def _start_session(self) -> None:
        """Right after the first frame: assemble the session (keys typed meanwhile wait in the terminal).
        A thread would not help: the imports hold the GIL, and compete with the UI for it."""
        assert self._start is not None
        try:
            self._built = built = self._start()
        except Exception as exc:
            self.main.could_not_start(error := error_line(exc))
            self.sub_title = f"could not start: {error}"
            self.notify(error, title="Start-up failed", severity="error", timeout=30, markup=False)
            self.log.error("start-up failed", exc)
        else:
            if (completing := built.start()) is not None:  # before anything else: no turn can be asked meanwhile
                self.sub_title = "starting: completing a forget that was cut short ..."
                self.run_worker(self._complete_pending(completing), name="completing a forget", exit_on_error=False)
            else:
                self._connect()
        finally:
            # Once the frame that says the agents are ready is out (Textual draws a change within a
            # sixtieth of a second; `call_after_refresh` can come before the header's own refresh):
            # about 100 ms (a module the first turn needs, a full collection) in which keys typed wait
            # in the terminal. It also ends the command's hold on the collector (`workbench.heap`).
            self.set_timer(SETTLE_AFTER_READY, self._settle, name="settle the heap")

    @property
    def start_failed(self) -> bool:
        """The agent runtime could not start (the header says why)."""
        return self.main.start_error is not None

    def _settle(self) -> None:
        settle_the_heap()
        self.settled = True

    async def _complete_pending(self, completing: Awaitable[Completed | None]) -> None:
        try:
            completed = await completing
        except Exception as exc:  # no turn may run before it: the app stays unavailable and says why
            self.main.could_not_start(error := f"a forget cut short could not be completed: {error_line(exc)}")
            self.sub_title = f"could not start: {error}"
            raise
        self._connect()
        if completed is not None:
            severity: SeverityLevel = "error" if completed.report.failures else "information"
            self.notify(
                completed.report.describe(), title=f"Start-up {completed.said}", severity=severity, markup=False
            )

    def _connect(self) -> None:
        assert self._built is not None
        self._session = session = self._built
        session.drafts.attach(lambda: self.query(Composer))
        self._disconnect = [session.subscribe(self._settled)]
        self.show_status()
        if not self.main.connect(session):
            self.run_worker(self.main.show_agents(session), name="the agents' panes", exit_on_error=False)

    def _settled(self, update: MemoryUpdate) -> None:  # may run on another thread: post, never draw
        self.post_message(MemoryUpdated(update))

    @property
    def session(self) -> SessionController:
        if self._session is None:
            raise RuntimeError("the agent runtime is not running")
        return self._session

    @property
    def ready(self) -> bool:
        return self._session is not None

    def show_status(self, width: int | None = None) -> None:
        status = self.session.state().status
        self.title, self.sub_title = header_titles(self.TITLE or "", status, width or self.size.width)

    def on_resize(self, event: events.Resize) -> None:
        if self.ready:
            self.show_status(event.size.width)

    def pane(self, agent: str) -> ChatPane:
        return next(p for p in self.panes if p.agent == agent)

    @property
    def panes(self) -> DOMQuery[ChatPane]:
        """The agents' panes."""
        return self.query(ChatPane)

    @on(TurnEnded)
    def _turn_ended(self, _: TurnEnded) -> None:
        self._memory_changed(None)  # the turn may have written any memory

    @on(MemoryUpdated)
    async def _memory_updated(self, message: MemoryUpdated) -> None:
        """A forget or a note is drawn at once, after every view before it: nothing waits holding a forgotten value."""
        self._memory_changed(message.update)
        if any(e.kind is EventKind.NOTE for e in message.update.outcome.events):
            self.show_status()
        await self.main.show_settled(message.update)

    def _memory_changed(self, update: MemoryUpdate | None) -> None:
        """A turn ended (`update` None: it may have written any memory) or memory settled `update`:
        an open screen that shows memory reads it again."""
        for screen in self.screen_stack:
            if isinstance(screen, ReadsMemory):
                screen.memory_changed(update)

    @on(Worker.StateChanged)
    async def _worker_changed(self, event: Worker.StateChanged) -> None:
        """Every worker's unexpected failure ends here or in its pane: shown, logged, and the app keeps running."""
        if event.state is not WorkerState.ERROR:
            return
        panes = [p for p in self.panes if p.turn_group == event.worker.group]
        for pane in panes:  # an answer's drawing: said in its pane
            await pane.failed(event.worker)
        if not panes:
            detail = error_line(event.worker.error)
            self.log.error(f"worker {event.worker.name!r} failed", event.worker.error)
            title = f"{event.worker.name or 'A task'} failed unexpectedly"
            self.notify(detail, title=title, severity="error", markup=False)

    # -- forget: one question, one forget through the session -----------------------------------------

    @on(ForgetRequested)
    async def _forget_requested(self, request: ForgetRequested) -> None:
        if not self.main.unavailable():
            await self.forgetting.ask(self.session, request.keys, request.held)

    # -- keys ---------------------------------------------------------------------------------------

    def action_forget_all(self) -> None:
        self.post_message(ForgetRequested(None))

    def action_other_agents(self) -> None:
        if self.main.panes is not None:
            self.main.panes.turn()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """F4 is the main screen's, with nothing over it, and shows only while some agents' panes are
        out of view. F5 opens a drift lab only while none is open: a second one's id ended the app."""
        if action == "other_agents":
            on_main = len(self.screen_stack) == 1
            return on_main and self.main.panes is not None and self.main.panes.out_of_view > 0
        if action == "drift":
            return not lab_open(self)
        return True

    def action_help(self) -> None:
        from workbench.ui.screens import HelpScreen  # loads when first opened, not at start-up

        self.push_screen(HelpScreen(self.session.state().status if self.ready else None))

    def action_show_calls(self) -> None:
        from workbench.ui.screens import CallsScreen  # loads when first opened, not at start-up

        if not self.main.unavailable():
            self.push_screen(CallsScreen.of(self.session, self.main.active_agent))

    def action_remembered(self) -> None:
        from workbench.ui.remembered_screen import RememberedScreen  # loads when first opened, not at start-up

        if not self.main.unavailable():
            RememberedScreen.shown(self, self.session, self.session.state().status.contract.max_value_chars)

    def action_drift(self) -> None:
        if not self.main.unavailable():
            self.push_screen(drift_lab(self.session))

    def action_drift_on_conversation(self) -> None:
        if not self.main.unavailable():
            open_lab_on_conversation(self, self.session)

    def action_export_chronology(self) -> None:
        if not self.main.unavailable():
            ask_to_export(self, self.session)

    # -- quitting: nothing admitted is lost in silence -------------------------------------------------

    async def action_quit(self) -> None:
        """Ctrl+Q, and the palette's Quit."""
        await self.quit_asked()

    async def quit_asked(self, signalled: str | None = None) -> None:
        """Ctrl+Q, the palette's Quit, SIGTERM and SIGHUP (`workbench.ui.quitting`)."""
        self.quitting.ask(self._session, signalled)

    @property
    def not_saved(self) -> str | None:
        """What the quit left unsaved, once the user chose to go without it: the command prints it."""
        return self.quitting.not_saved

    def get_system_commands(self, screen: Screen[object]) -> Iterable[SystemCommand]:
        """The command palette (Ctrl+P): Textual's commands, then the workbench's."""
        yield from super().get_system_commands(screen)
        yield from workbench_commands(self)
