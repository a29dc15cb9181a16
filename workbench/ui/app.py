"""The workbench TUI: the agents' panes beside a live fact panel, all in one place. The app connects
the session (`workbench.session`, its only door), accepts what the panes send up, sets the fact
panel's view, and turns keys, console commands and the palette into session calls. Each pane runs
its own turns and posts their ends up; nothing is posted down to a widget."""

from __future__ import annotations

import asyncio
import contextlib
import shlex
import signal
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Protocol, runtime_checkable

from textual import events, on
from textual.app import App, ComposeResult, SystemCommand
from textual.binding import Binding
from textual.containers import Horizontal
from textual.content import Content
from textual.notifications import SeverityLevel
from textual.reactive import var
from textual.screen import Screen
from textual.widgets import Header
from textual.worker import Worker, WorkerState

from workbench.memory import EventKind
from workbench.runtime.config import Mode
from workbench.runtime.view import NOT_SAVED, SAVED_AGAIN, WRITER_FAILING, WRITER_SWITCHED
from workbench.text import clip, visible
from workbench.ui.chat import BUILT_IN, ChatPane, pane_words
from workbench.ui.composer import Composer
from workbench.ui.confirm import ConfirmForget
from workbench.ui.console import parse_console_command, run_console_command
from workbench.ui.facts import FactPanel, ForgetRequested, MemoryView
from workbench.ui.forgetting import ForgetFlow, in_pair, replace_histories
from workbench.ui.header import header_titles
from workbench.ui.keys_footer import KeysFooter
from workbench.ui.main_screen import MainScreen
from workbench.ui.messages import MemoryUpdated, TurnEnded
from workbench.ui.palette import lab_open, workbench_commands
from workbench.ui.panes import Panes
from workbench.ui.paste import install_paste_guard
from workbench.ui.startup import ERROR_CHARS, SETTLE_AFTER_READY, error_line, settle_the_heap, stylesheet_dir
from workbench.ui.typing import PauseScheduler, TypingClock

if TYPE_CHECKING:
    from collections.abc import Coroutine
    from typing import Any

    from workbench.chronology import Chronology
    from workbench.notes import LibraryLog
    from workbench.runtime.view import MemoryUpdate
    from workbench.session.controller import SessionController
    from workbench.ui.drift_screen import DriftScreen
    from workbench.ui.export_screen import ExportRequest
    from workbench.ui.quit_screen import QuitAnswer

FACT_PANEL = "fact panel"  # the scheduler's lane of the panel's views
# Where "Export conversation as chronology" proposes to write, relative to the working directory.
EXPORT_PATH = "conversation.chronology.json"
NOTE_TITLES = {
    "recall": "Recall",
    WRITER_FAILING: "The writer keeps failing",
    WRITER_SWITCHED: "Writer",
    NOT_SAVED: "Not saved",
    SAVED_AGAIN: "Saved",
}
NOT_SAVED_EXIT = 1  # the exit status of a quit that left something admitted unsaved
QUIT_SIGNALS = (signal.SIGTERM, signal.SIGHUP)  # quit as Ctrl+Q does (SIGHUP: the window closed)


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
        notice: str | None = None,
        labels: Mapping[str, str] | None = None,
        hints: Mapping[str, str] | None = None,
        workflows: Collection[str] | Mapping[str, Sequence[str]] = (),
        logged: LibraryLog | None = None,
    ) -> None:
        """Give an assembled session (`workbench.session.assemble`), or `start`, which assembles one
        right after the first frame, so the window opens before Agent Framework and pydantic have loaded;
        then `agents` names the panes it opens with (default: the built-in agents). A session started
        with other agents gets their panes when it connects. `notice`: what loading the user's agents has to
        say (entries not loaded, names the workbench gave), shown once the window opens; `labels`: a pane's
        title where it is not its agent's name alone ("weather_agent (folder name)", a workflow's); `hints`: a
        pane's hint where it is not an agent's (a workflow's); `workflows`: the panes a workflow answers in,
        or each with the names of the agents its executors run (a forget's note names them);
        `logged`: what the libraries log (`workbench.notes`), said in notices while the window is open."""
        if (session is None) == (start is None):
            raise ValueError("give the app a session, or a way to start one")
        super().__init__()
        self._built, self._start = session, start
        self._agents = tuple(session.agent_names if session is not None else agents or BUILT_IN)
        self._notice, self._labels, self._hints = notice, dict(labels or {}), dict(hints or {})
        self.forgetting = ForgetFlow(self, workflows)
        self._logged = logged
        self._pane_box: Panes | None = None
        self._session: SessionController | None = None
        self._start_error: str | None = None
        self._disconnect: list[Callable[[], None]] = []
        self._signals: list[signal.Signals] = []
        self.not_saved: str | None = None
        """What the quit left unsaved, in one line, once the user chose to go without it (or nobody was left
        to ask): the command prints it and exits non-zero."""
        install_paste_guard()
        # Where the user last typed: finished answers and a turn's facts are drawn in a pause in typing elsewhere.
        self.typing = TypingClock()
        self.scheduler = PauseScheduler(self.typing, self._run_lane, self._on_screen)

    def get_default_screen(self) -> Screen[object]:
        return MainScreen(self.size.width, self.HORIZONTAL_BREAKPOINTS)

    def compose(self) -> ComposeResult:
        yield Header(icon="")
        with Horizontal(id="main"):
            self._pane_box = Panes(*self._panes(self._agents), id="panes")
            yield self._pane_box
            yield FactPanel()
        yield KeysFooter()

    def _panes(self, agents: Sequence[str]) -> list[ChatPane]:
        """One pane per agent, titled with its name; the first drawn focused from the first frame."""
        panes = []
        for number, agent in enumerate(agents):
            title, placeholder, hint = pane_words(agent)
            title, hint = self._labels.get(agent, title), self._hints.get(agent, hint)
            pane_id = f"pane-{number}"
            focused = f"#{pane_id} " in (self.AUTO_FOCUS or "")
            panes.append(
                ChatPane(
                    agent,
                    title=title,
                    placeholder=placeholder,
                    hint=hint,
                    scheduler=self.scheduler,
                    focused=focused,
                    id=pane_id,
                    kind="workflow" if agent in self.forgetting.workflows else "agent",
                )
            )
        return panes

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
        self._last_input = self.query_one(ChatPane).prompt
        self.screen_change_signal.subscribe(self, self._screen_changed)
        self._handle_quit_signals()
        if self._notice:
            self.notify(self._notice, title="Your agents", severity="warning", timeout=30, markup=False)
        if self._logged is not None:
            loop = asyncio.get_running_loop()

            def said_soon(line: str) -> None:
                loop.call_soon_threadsafe(self._library_said, line)

            for line in self._logged.send_to(said_soon):
                self._library_said(line)
        if self._built is not None:
            self._connect()
        else:
            self.sub_title = "starting: loading the agent runtime ..."
            self.call_after_refresh(self._start_session)

    def _library_said(self, line: str) -> None:
        """A library's warning (`workbench.notes`: one line, made visible), in a notice. Given through the
        event loop: a record may be logged on any thread."""
        self.notify(line, title="Logged by a library", severity="warning", timeout=15, markup=False)

    def on_unmount(self) -> None:
        if self._logged is not None:
            self._logged.send_to(None)  # kept: the command says them on stderr once the window is gone
        for disconnect in self._disconnect:
            disconnect()
        loop = asyncio.get_running_loop()
        for handled in self._signals:
            loop.remove_signal_handler(handled)
        if self._session is not None:
            self._session.close()  # the state file written whole: a copy of it alone resumes everything

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
            self._start_error = error_line(exc)
            self._restore_waiting()
            self.sub_title = f"could not start: {self._start_error}"
            self.notify(self._start_error, title="Start-up failed", severity="error", timeout=30, markup=False)
            self.log.error("start-up failed", exc)
        else:
            if built.forget_pending:  # completed before anything else: no turn can be asked meanwhile
                self.sub_title = "starting: completing a forget that was cut short ..."
                self.run_worker(self._complete_pending(built), name="completing a forget", exit_on_error=False)
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
        return self._start_error is not None

    def _settle(self) -> None:
        settle_the_heap()
        self.settled = True

    async def _complete_pending(self, session: SessionController) -> None:
        try:
            report = await session.complete_pending()
        except Exception as exc:  # no turn may run before it: the app stays unavailable and says why
            self._start_error = f"a forget cut short could not be completed: {error_line(exc)}"
            self._restore_waiting()
            self.sub_title = f"could not start: {self._start_error}"
            raise
        self._connect()
        if report is not None:
            severity: SeverityLevel = "error" if report.failures else "information"
            self.notify(report.describe(), title=f"Start-up {session.completed}", severity=severity, markup=False)

    def _connect(self) -> None:
        assert self._built is not None
        self._session = session = self._built
        session.drafts.attach(lambda: self.query(Composer))
        self._disconnect = [session.subscribe(self._settled)]
        self.show_status()
        self.query_one(FactPanel).view = MemoryView(session.snapshot())
        if session.agent_names != tuple(p.agent for p in self.query(ChatPane)):
            self.run_worker(self._agents_panes(session.agent_names), name="the agents' panes", exit_on_error=False)
        else:
            self._show_resumed()
            for pane in self.query(ChatPane):  # what was sent while they started, in order
                self.call_later(self._next, pane)

    def _restore_waiting(self) -> None:
        """The agents could not start: the messages sent meanwhile back in front of their panes' drafts,
        each on a line of its own (nothing can be sent now; quit, fix it and start again)."""
        for pane in self.query(ChatPane):
            if waiting := pane.prompt.waiting:
                pane.prompt.put_back("".join(f"{text}\n" for text in waiting))
                waiting.clear()

    async def _agents_panes(self, agents: Sequence[str]) -> None:
        """The session runs other agents than the panes opened with: their panes instead (a draft typed
        meanwhile stays in the first pane)."""
        panes = self._pane_box
        assert panes is not None
        draft = self._last_input.text
        waiting = [text for pane in self.query(ChatPane) for text in pane.prompt.waiting]
        await panes.remove_children()
        await panes.mount_all(self._panes(agents))
        first = panes.panes[0].prompt
        first.insert(draft)
        first.waiting.extend(waiting)  # sent meanwhile: asked of the first agent, in order
        first.focus()
        panes.first = 0
        self._show_resumed()
        await self._next(panes.panes[0])

    def _show_resumed(self) -> None:
        """What each agent resumed from disk (`--persist`), if anything."""
        for pane in self.query(ChatPane):
            if history := self.session.resumed(pane.agent):
                pane.show_resumed(history)

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

    def _unavailable(self) -> bool:
        """True (and says why) while there is no session: still starting, or start-up failed."""
        if self._start_error is not None:
            self.notify(
                f"The agent runtime could not start: {self._start_error.rstrip('.')}. "
                "Quit (Ctrl+Q), fix it and start again.",
                title="Not available",
                severity="error",
                markup=False,
            )
        elif not self.ready:
            self.notify("Still starting: the agent runtime is loading. Your draft is kept.", severity="warning")
        return not self.ready

    def show_status(self, width: int | None = None) -> None:
        self.title, self.sub_title = header_titles(self.TITLE or "", self.session.status, width or self.size.width)

    def on_resize(self, event: events.Resize) -> None:
        if self.ready:
            self.show_status(event.size.width)

    def pane(self, agent: str) -> ChatPane:
        return next(p for p in self.query(ChatPane) if p.agent == agent)

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
        return pane.agent if pane else self.query_one(ChatPane).agent

    # -- turns: a pane sends its text up, runs the turn the app accepts, and posts its end up ---------

    @on(ChatPane.Submitted)
    async def _submitted(self, event: ChatPane.Submitted) -> None:
        """What a pane sent (Enter, or F9 again), which left its input at Enter (`Composer.action_send`),
        so that what is typed after it is a message of its own, never glued onto it: refused, it is put
        back in front of the draft; else it waits its turn: while the agents start or its pane answers,
        the messages sent wait, in order, one turn each."""
        pane, text = event.pane, event.text
        if not text.strip():
            return
        if self.start_failed and self._unavailable():
            if not event.again:
                pane.prompt.put_back(text)
            return
        if self.ready and (refusal := self.session.refusal(text)):
            if not event.again:
                pane.prompt.put_back(text)
            kept = "Your draft is still in the input: F7 selects all of it, and Delete clears it."
            self.notify(f"Not sent: {refusal}. {kept}", title="Message cannot be sent", severity="error", markup=False)
            return
        waiting = pane.prompt.waiting
        if self.ready and pane.free and not waiting:
            await self._ask(pane, text)
            return
        waiting.append(text)
        if not self.ready:
            self.notify("Still starting: the message is sent as soon as the agents are ready.")
        else:
            ahead = f" after the {len(waiting) - 1} before it" if len(waiting) > 1 else ""
            self.notify(f"The {pane.agent} agent is still answering: your message is sent when it is done{ahead}.")

    @on(ChatPane.Free)
    async def _free(self, event: ChatPane.Free) -> None:
        await self._next(event.pane)

    async def _next(self, pane: ChatPane) -> None:
        """Ask the oldest message waiting for `pane`, once the agents are ready and its turn is over
        (console commands waiting before it run first)."""
        waiting = pane.prompt.waiting
        while waiting and self.ready and pane.free and pane.is_attached:
            text = waiting.popleft()
            if refusal := self.session.refusal(text):  # sent before the agents could check it
                pane.prompt.put_back(f"{text}\n")
                self.notify(f"Not sent: {refusal}. It is back in the input.", severity="error", markup=False)
                continue
            await self._ask(pane, text)

    async def _ask(self, pane: ChatPane, text: str) -> None:
        """A console command, or a turn of the pane's agent."""
        if command := parse_console_command(text):
            await run_console_command(command, pane, self.session, self.ask_to_forget)
        else:
            await pane.ask(self.session, text)

    @property
    def pair(self) -> bool:
        """Two agents run (the built-in pair, or two of the user's): messages say "both"."""
        return in_pair(self)

    def turns_running(self) -> bool:
        return any(pane.running for pane in self.query(ChatPane))

    @on(TurnEnded)
    def _turn_ended(self, event: TurnEnded) -> None:
        """The turn's memory reaches the panel as one view, in a pause in typing outside its pane."""
        if event.outcome is not None and event.outcome.memory:
            view = MemoryView.of_turn(event.outcome.memory)
            self.scheduler.later(FACT_PANEL, self.pane(event.agent).prompt, partial(self._show_view, view))
        self._memory_changed(None)  # the turn may have written any memory

    def _show_view(self, view: MemoryView, _hurry: bool = False) -> None:
        self.query_one(FactPanel).view = view

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
        self._show_view(MemoryView.after(message.update))

    def _memory_changed(self, update: MemoryUpdate | None) -> None:
        """A turn ended (`update` None: it may have written any memory) or memory settled `update`:
        an open screen that shows memory reads it again."""
        for screen in self.screen_stack:
            if isinstance(screen, ReadsMemory):
                screen.memory_changed(update)

    async def _on_screen(self) -> None:
        """Returns once the screen was refreshed, with what was drawn before the call on it (at most half a
        second: a screen that is not refreshed, the app closing, holds nothing back)."""
        shown = asyncio.Event()
        self.call_after_refresh(shown.set)
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(shown.wait(), 0.5)

    def _run_lane(self, work: Coroutine[Any, Any, None], lane: str) -> None:
        """The scheduler's lanes run as the app's workers; their failures end in `_worker_changed`."""
        self.run_worker(work, name=lane, group=lane, exit_on_error=False)

    @on(Worker.StateChanged)
    async def _worker_changed(self, event: Worker.StateChanged) -> None:
        """Every worker's unexpected failure ends here or in its pane: shown, logged, and the app keeps running."""
        if event.state is not WorkerState.ERROR:
            return
        panes = [p for p in self.query(ChatPane) if p.turn_group == event.worker.group]
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
        if not self._unavailable():
            await self.ask_to_forget(request.keys, request.held)

    async def ask_to_forget(self, keys: Sequence[str] | None, held: Mapping[str, Sequence[str]] | None = None) -> None:
        await self.forgetting.ask(self.session, keys, held)

    # -- keys ---------------------------------------------------------------------------------------

    def action_forget_all(self) -> None:
        self.post_message(ForgetRequested(None))

    def action_other_agents(self) -> None:
        if self._pane_box is not None:
            self._pane_box.turn()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """F4 is the main screen's, with nothing over it, and shows only while some agents' panes are
        out of view. F5 opens a drift lab only while none is open: a second one's id ended the app."""
        if action == "other_agents":
            on_main = len(self.screen_stack) == 1
            return on_main and self._pane_box is not None and self._pane_box.out_of_view > 0
        if action == "drift":
            return not lab_open(self)
        return True

    def action_help(self) -> None:
        from workbench.ui.screens import HelpScreen  # loads when first opened, not at start-up

        self.push_screen(HelpScreen(self.session.status if self.ready else None))

    def action_show_calls(self) -> None:
        from workbench.ui.screens import CallsScreen  # loads when first opened, not at start-up

        if self._unavailable():
            return
        agent, session = self.active_agent, self.session
        calls = session.last_turn_calls(agent)
        self.push_screen(
            CallsScreen(
                agent,
                calls,
                splits=session.context_by_turn(agent),
                recalled=session.recalled(agent),
                unrecorded=session.unrecorded(agent),
            )
        )

    def action_remembered(self) -> None:
        """Open what is remembered (once) and read it."""
        from workbench.ui.remembered_screen import RememberedScreen  # loads when first opened, not at start-up

        if self._unavailable():
            return
        screen = next((s for s in self.screen_stack if isinstance(s, RememberedScreen)), None)
        if screen is None:
            screen = RememberedScreen(self.session, value_chars=self.session.contract.max_value_chars)
            self.push_screen(screen)
        screen.read()

    def action_drift(self) -> None:
        if not self._unavailable():
            self.push_screen(self._drift_lab())

    def _drift_lab(self, chronology: Chronology | None = None) -> DriftScreen:
        """The lab on the session's models, replaying `chronology` (default: the built-in story)."""
        from workbench.drift import run_drift
        from workbench.ui.drift_screen import DriftScreen  # its chart library loads when the lab opens

        models = self.session.models
        return DriftScreen(partial(run_drift, models, chronology=chronology), models.agent_label)

    def action_drift_on_conversation(self) -> None:
        from workbench.chronology import ChronologyError

        if self._unavailable():
            return
        try:
            chronology = self.session.chronology()
        except ChronologyError as exc:
            self.notify(
                "Ask at least one question (a message that declares nothing) to give the lab a probe. "
                + "; ".join(exc.problems),
                title="Nothing to compare yet",
                severity="warning",
                markup=False,
            )
            return
        self.push_screen(self._drift_lab(chronology))

    def action_export_chronology(self) -> None:
        """Ask where to save and which questions are probes; the session writes the file."""
        from workbench.ui.export_screen import ExportChronology

        if self._unavailable():
            return
        if not self.session.transcript.entries:
            self.notify("Nothing to export yet: the conversation is empty.", severity="warning")
            return

        def save(request: ExportRequest | None) -> None:
            if request is not None:
                self._write_chronology(request)

        self.push_screen(ExportChronology(self.session.transcript.questions(), EXPORT_PATH), callback=save)

    def _write_chronology(self, request: ExportRequest) -> None:
        from workbench.chronology import ChronologyError

        def failed(detail: str) -> None:
            self.notify(detail, title="Not exported", severity="error", markup=False)

        try:
            exported = self.session.export(request.path, request.probes)
        except ChronologyError as exc:
            return failed("\n".join(exc.problems))
        except FileExistsError:
            where = visible(clip(request.path, ERROR_CHARS))
            return failed(f"{where} already exists and was left as it was: export again under another name.")
        except OSError as exc:
            return failed(visible(clip(f"{request.path}: {exc.strerror or exc}", ERROR_CHARS)))
        where = visible(
            clip(shlex.quote(str(Path(request.path).absolute())), ERROR_CHARS)
        )  # a relative name says where
        self.notify(
            f"{exported.steps} steps, {exported.probes} probe(s): workbench drift --chronology {where}",
            title="Chronology exported",
            markup=False,
        )

    # -- quitting: nothing admitted is lost in silence -------------------------------------------------

    def _handle_quit_signals(self) -> None:
        """SIGTERM and SIGHUP quit as Ctrl+Q does: by default they ended the process at once, the
        terminal left as the app had set it and nothing saved that a failed save had left."""
        try:
            loop = asyncio.get_running_loop()
            for handled in QUIT_SIGNALS:
                loop.add_signal_handler(handled, self._signalled, handled)
                self._signals.append(handled)
        except (NotImplementedError, RuntimeError, ValueError):  # not the main thread, or no such signal here
            return

    def _signalled(self, received: signal.Signals) -> None:
        self.call_later(self.quit_asked, received.name)

    async def action_quit(self) -> None:
        """Ctrl+Q, and the palette's Quit."""
        await self.quit_asked()

    async def quit_asked(self, signalled: str | None = None) -> None:
        """Quit once everything admitted is on disk: a save that failed is tried once more; if it fails
        again, ask what to do (stay, export the conversation and go, or go), unless the window closed
        (SIGHUP: nobody is left to answer) or a second signal came while asking."""
        from workbench.ui.quit_screen import QuitUnsaved  # loads when a quit finds something unsaved

        asked = next((s for s in self.screen_stack if isinstance(s, QuitUnsaved)), None)
        if asked is not None:
            if signalled is not None:
                self._leave(asked.unsaved)
            return
        unsaved = self._session.unsaved() if self._session is not None else None
        if unsaved is None:
            self.exit()
        elif signalled == "SIGHUP":
            self._leave(unsaved)
        else:
            why = f"{signalled} received. " if signalled else ""
            self.push_screen(QuitUnsaved(unsaved, EXPORT_PATH, why), callback=partial(self._quit_answered, unsaved))

    def _quit_answered(self, unsaved: str, answer: QuitAnswer | None) -> None:
        if answer is None:
            return  # stays: the save is retried meanwhile
        if answer.export is None:
            return self._leave(unsaved)
        where = visible(clip(answer.export, ERROR_CHARS))
        try:
            self.session.export(answer.export, checked=False)
        except FileExistsError:
            detail = f"{where} already exists and was left as it was: quit again and export under another name."
        except OSError as exc:
            detail = f"{where}: {visible(clip(exc.strerror or str(exc), ERROR_CHARS))}. Nothing was exported."
        else:
            exported = visible(clip(shlex.quote(str(Path(answer.export).absolute())), ERROR_CHARS))
            return self._leave(f"{unsaved}; the conversation was exported to {exported}")
        self.notify(detail, title="Not exported: still running", severity="error", markup=False)

    def _leave(self, unsaved: str) -> None:
        """Quit without what is unsaved: the command says it in one line and exits non-zero."""
        self.not_saved = unsaved
        self.exit(return_code=NOT_SAVED_EXIT)

    # -- switches, from the palette ------------------------------------------------------------------

    async def set_session_mode(self, mode: Mode) -> None:
        if self.turns_running():
            self.notify("Wait for the running turns to finish before switching mode.", severity="warning")
            return
        self.session.set_mode(mode)
        self.show_status()
        await replace_histories(
            self.query(ChatPane),
            lambda agent: f"Switched to {mode} mode: the {agent} agent starts a new session; the facts are kept.",
        )

    async def set_session_recall(self, on: bool) -> None:
        if self.turns_running():
            self.notify("Wait for the running turns to finish before switching recall.", severity="warning")
            return
        if not self.session.set_recall(on):
            self.notify("This session was started without recall.", severity="warning")
            return
        self.show_status()
        state = (
            f"on: {'both' if self.pair else 'all'} agents recall from every earlier message of yours" if on else "off"
        )
        await replace_histories(
            self.query(ChatPane),
            lambda agent: f"Recall {state}. The {agent} agent starts a new session; the facts are kept.",
        )

    def use_host_parse(self) -> None:
        """The writer model keeps failing the contract: switch this session to the host's own parse."""
        if self.session.use_host_parse():
            self.show_status()

    def get_system_commands(self, screen: Screen[object]) -> Iterable[SystemCommand]:
        """The command palette (Ctrl+P): Textual's commands, then the workbench's."""
        yield from super().get_system_commands(screen)
        yield from workbench_commands(self)
