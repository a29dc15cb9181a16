"""The workbench TUI: two agent panes beside a live fact panel."""

from __future__ import annotations

import gc
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from textual import events, on
from textual.app import App, ComposeResult, SystemCommand
from textual.binding import Binding
from textual.containers import Container, Horizontal
from textual.content import Content
from textual.message import Message
from textual.screen import Screen
from textual.widgets import Footer, Header
from textual.worker import Worker, WorkerState

from workbench.heap import pace_young_collections
from workbench.memory import ALLOWED_KEYS, MAX_MESSAGE_CHARS, EventKind
from workbench.memory.contract import unencodable
from workbench.memory.ledger import MAX_KEY_ECHO
from workbench.memory.shown import quoted
from workbench.runtime.config import Mode
from workbench.runtime.view import WRITER_FAILING, WRITER_SWITCHED
from workbench.text import clip, visible
from workbench.ui.chat import ChatPane
from workbench.ui.composer import Composer
from workbench.ui.console import Forget, ShowMemory, parse_console_command
from workbench.ui.drift_screen import DriftScreen
from workbench.ui.facts import FactPanel, ForgetRequested, MemoryView
from workbench.ui.paste import install_paste_guard
from workbench.ui.screens import CallsScreen, ConfirmForget, HelpScreen
from workbench.ui.typing import TypingClock

if TYPE_CHECKING:
    from workbench.runtime import AgentRuntime, MemoryUpdate
    from workbench.session.controller import SessionController
    from workbench.session.transcript import Transcript
    from workbench.ui.export_screen import ExportRequest

# Where "Export conversation as chronology" proposes to write, relative to the working directory.
EXPORT_PATH = "conversation.chronology.json"
# Columns of Textual's header taken by its icon and clock space, not by the title.
HEADER_CHROME = 18
# How much of an unexpected error's text a notification shows.
ERROR_CHARS = 300


def stylesheet_dir() -> Path:
    """styles/ ships inside the package when installed; a checkout keeps it at the top level."""
    package = Path(__file__).resolve().parent.parent
    shipped = package / "styles"
    return shipped if shipped.is_dir() else package.parent / "styles"


def _settle_the_heap() -> None:
    """Load what the first turn needs (Markdown), then freeze every object start-up made.

    Start-up leaves some 140,000 long-lived objects (the OpenAI SDK's types, the framework, Textual)
    that Python's cyclic collector would otherwise walk at each full collection: 250 to 350 ms with
    the UI frozen, several times during a long streamed reply. Frozen objects are still freed by
    reference counting; the collector just stops re-scanning them. Young collections then run less
    often (`workbench.heap`), so a frame's short-lived strips and caches die young."""
    import workbench.ui.replies  # noqa: F401  (its import is a stall of its own at the first turn)

    gc.collect()
    gc.freeze()
    pace_young_collections()


@dataclass
class MemoryUpdated(Message):
    """One settled batch, posted from the runtime's subscription: its Outcome and memory after it."""

    update: MemoryUpdate


NOTE_TITLES = {"recall": "Recall", WRITER_FAILING: "The writer keeps failing", WRITER_SWITCHED: "Writer"}


class WorkbenchApp(App[None]):
    """Renders runtime state and turns user intentions into runtime calls."""

    TITLE = "workbench"
    CSS_PATH = [stylesheet_dir() / "workbench.tcss"]
    HORIZONTAL_BREAKPOINTS = [(0, "-narrow"), (110, "-wide")]
    BINDINGS = [
        Binding("f1", "help", "Help", id="help"),
        Binding("f2", "show_calls", "What the model saw", id="show_calls"),
        Binding("f5", "drift", "Drift lab", id="drift"),
        Binding("f8", "forget_all", "Forget all", id="forget_all"),
        Binding("ctrl+q", "quit", "Quit", id="quit"),
    ]

    def __init__(self, runtime: AgentRuntime | None = None, *, start: Callable[[], AgentRuntime] | None = None) -> None:
        """Give a runtime, or `start`, which builds one right after the first frame, so the
        window opens before Agent Framework and pydantic have loaded."""
        if (runtime is None) == (start is None):
            raise ValueError("give the app a runtime, or a way to start one")
        super().__init__()
        install_paste_guard()
        self._runtime = runtime
        self._start = start
        self._start_error: str | None = None
        self._unsubscribe: Callable[[], None] = lambda: None
        self._session: SessionController | None = None
        # Where the user last typed: a pane draws its finished answer, and the panel a turn's batch,
        # in a pause in typing elsewhere.
        self.typing = TypingClock()
        # A turn's settled batches not drawn yet, oldest first, each with the pane whose turn it was.
        self._memory_views: deque[tuple[MemoryView, str]] = deque()
        # Why each pane's running turn had its batch refused (the contract's words, no user text), said
        # beside its reply when the turn ends.
        self._refused: dict[str, list[str]] = {}
        self._drawing_memory: Worker[None] | None = None

    def compose(self) -> ComposeResult:
        yield Header(icon="")
        with Horizontal(id="main"):
            with Container(id="panes"):
                yield ChatPane(
                    "support",
                    title="support agent",
                    placeholder="Ask support · Ctrl+J new line",
                    hint="The support agent helps with product problems. Declare what you know as "
                    "key=value, e.g. module=Reporting; database=PostgreSQL. F1 shows help.",
                    typing=self.typing,
                )
                yield ChatPane(
                    "logs",
                    title="logs agent",
                    placeholder="Ask about logs · Ctrl+J new line",
                    hint="The logs agent says where logs live and how to read them. It has its own "
                    "history and shares only the facts, e.g. ask: Where can I find logs?",
                    typing=self.typing,
                )
            yield FactPanel()
        yield Footer()

    @property
    def runtime(self) -> AgentRuntime:
        if self._runtime is None:
            raise RuntimeError("the agent runtime is not running")
        return self._runtime

    @property
    def ready(self) -> bool:
        return self._runtime is not None

    async def on_event(self, event: events.Event) -> None:
        if isinstance(event, events.Key | events.Paste) and not event.is_forwarded:
            self.typing.noted(self.screen.focused if self.screen_stack else None)
        await super().on_event(event)

    def on_mount(self) -> None:
        self._last_input = self.pane("support").prompt
        self._last_input.focus()
        self.screen_change_signal.subscribe(self, self._screen_changed)
        if self._runtime is not None:
            self._connect_runtime()
        else:
            self.sub_title = "starting: loading the agent runtime ..."
            self.call_after_refresh(self._start_runtime)

    def _start_runtime(self) -> None:
        """Right after the first frame: build the runtime (keys typed meanwhile wait in the terminal).
        A thread would not help: the imports hold the GIL, and compete with the UI for it."""
        assert self._start is not None
        try:
            self._runtime = self._start()
        except Exception as exc:
            self._start_error = visible(clip(f"{type(exc).__name__}: {exc}", ERROR_CHARS))
            self.sub_title = f"could not start: {self._start_error}"
            self.notify(self._start_error, title="Start-up failed", severity="error", timeout=30, markup=False)
            self.log.error("start-up failed", exc)
            return
        self._connect_runtime()
        _settle_the_heap()

    @property
    def session(self) -> SessionController:
        if self._session is None:
            raise RuntimeError("the agent runtime is not running")
        return self._session

    @property
    def transcript(self) -> Transcript:
        """What the user said to each pane and every forget, for the drift lab (scrubbed by forget)."""
        return self.session.transcript

    def _connect_runtime(self) -> None:
        from workbench.session.controller import SessionController

        self._session = SessionController(self.runtime)
        self._show_status()
        self._unsubscribe = self.runtime.subscribe(self._post_memory_update)
        self.query_one(FactPanel).view = MemoryView(self.runtime.snapshot())

    def _post_memory_update(self, update: MemoryUpdate) -> None:
        self.post_message(MemoryUpdated(update))

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

    def on_unmount(self) -> None:
        self._unsubscribe()

    def pane(self, agent: str) -> ChatPane:
        return self.query_one(f"#{agent}", ChatPane)

    def _show_status(self, width: int | None = None) -> None:
        """The status in words when it fits the header; in a narrow terminal its values alone,
        without the app's name, so that mode and writer stay in view (F1 says what each is)."""
        status = self.runtime.status
        room = (width or self.size.width) - HEADER_CHROME
        if len(f"{self.TITLE} — {status.summary}") <= room:
            self.title, self.sub_title = self.TITLE, status.summary
        else:
            self.title, self.sub_title = "", status.compact

    def format_title(self, title: str, sub_title: str) -> Content:
        return super().format_title(title, sub_title) if title else Content(sub_title)

    def on_resize(self, event: events.Resize) -> None:
        if self.ready:
            self._show_status(event.size.width)

    # -- memory: one message per settled batch, rendered by the panel's one view ---------------

    @on(MemoryUpdated)
    def _memory_updated(self, message: MemoryUpdated) -> None:
        events = message.update.outcome.events
        notes = [e for e in events if e.kind is EventKind.NOTE]
        if notes:
            self._show_status()
        for note in notes:
            if note.origin == "forget":
                continue  # what a forget reached: the ledger says it; the forget itself is notified
            title = NOTE_TITLES.get(note.origin, "Writer format")
            self.notify(note.describe(), title=title, markup=False, timeout=15 if note.origin == WRITER_FAILING else 5)
        origins = {e.origin for e in events}
        turn_of = origins.pop() if len(origins) == 1 and origins <= {"support", "logs"} else None
        rejected = [e for e in events if e.kind is EventKind.REJECTED]
        if turn_of and rejected and self.pane(turn_of).busy:
            self._refused[turn_of] = sorted({r.generic for e in rejected for r in e.reasons})
        if turn_of and not notes and all(e.kind is not EventKind.FORGOTTEN for e in events):
            self._memory_views.append((MemoryView.after(message.update), turn_of))
            if self._drawing_memory is None:
                self._drawing_memory = self.run_worker(self._draw_memory(), name="fact panel", group="fact panel")
            return
        # A forget (or a note) is drawn at once, after every batch before it: nothing waits holding a
        # forgotten value.
        panel = self.query_one(FactPanel)
        while self._memory_views:
            panel.view = self._memory_views.popleft()[0]
        panel.view = MemoryView.after(message.update)

    async def _draw_memory(self) -> None:
        """Each batch a turn settled reaches the panel in order, in a pause in typing outside the pane
        whose turn it was: redrawing the panel lays the screen out (20-30 ms), and a key typed in the
        other pane meanwhile would wait on it."""
        panel = self.query_one(FactPanel)
        try:
            while self._memory_views:
                here = self.pane(self._memory_views[0][1]).prompt
                if self.typing.typing_elsewhere(here):
                    await self.typing.pause(here)  # a forget meanwhile may have drawn everything
                    continue
                panel.view = self._memory_views.popleft()[0]
        finally:
            self._drawing_memory = None

    # -- turns -------------------------------------------------------------------------

    @on(ChatPane.Submitted)
    async def _submitted(self, event: ChatPane.Submitted) -> None:
        pane, text = event.pane, event.text
        if not text.strip() or self._unavailable():
            return
        if command := parse_console_command(text):
            pane.prompt.take(text)
            await self._console(pane, command)
            return
        if len(text) > MAX_MESSAGE_CHARS:
            self.notify(
                f"Not sent: the message has {len(text):,} characters and the limit is {MAX_MESSAGE_CHARS:,}. "
                "Your draft is still in the input: F7 selects all of it, and Delete clears it.",
                title="Message too long",
                severity="error",
            )
            return
        if problem := unencodable(text):
            self.notify(f"Not sent: {problem}.", title="Message cannot be sent", severity="error")
            return
        if pane.busy:
            self.notify(f"The {pane.agent} agent is still answering: wait, or press Esc to cancel.", severity="warning")
            return
        session, agent = self.session, pane.agent
        pane.start_turn(text, lambda on_text: session.ask(agent, text, on_text))

    @on(ChatPane.TurnEnded)
    async def _turn_ended(self, event: ChatPane.TurnEnded) -> None:
        if (refused := self._refused.pop(event.pane.agent, None)) is not None:
            await event.pane.batch_refused(refused)
        event.pane.usage = self.runtime.usage(event.pane.agent)
        if recalled := self.runtime.recalled(event.pane.agent):
            await event.pane.notice(
                f"Recall put {len(recalled)} earlier message(s) into this turn, from "
                f"{' and '.join(sorted({r.agent for r in recalled}))} agent history. F2 shows them."
            )

    @on(Worker.StateChanged)
    async def _worker_changed(self, event: Worker.StateChanged) -> None:
        """Every worker's unexpected failure ends here: shown, logged, and the app keeps running."""
        if event.state is not WorkerState.ERROR:
            return
        error = event.worker.error
        detail = visible(clip(f"{type(error).__name__}: {error}", ERROR_CHARS))
        self.log.error(f"worker {event.worker.name!r} failed", error)
        self.notify(
            detail, title=f"{event.worker.name or 'A task'} failed unexpectedly", severity="error", markup=False
        )
        for pane in [p for p in self.query(ChatPane) if p.turn_group == event.worker.group]:
            await pane.notice(
                f"This turn stopped on an unexpected error: {detail}. The app keeps running; the ledger "
                "says what memory did.",
                kind="error",
            )

    # -- console commands and forget ---------------------------------------------------

    async def _console(self, pane: ChatPane, command: ShowMemory | Forget) -> None:
        if isinstance(command, ShowMemory):
            facts = self.runtime.snapshot().facts
            lines = [f"mem: {len(facts)} fact(s)"] + [
                f"{f.key} = {quoted(f.value)} (turn {f.turn}) quoting {quoted(f.evidence)}" for f in facts
            ]
            await pane.notice("\n".join(lines))
        elif command.key is not None and command.key not in ALLOWED_KEYS:
            self.notify(
                f"{quoted(command.key, MAX_KEY_ECHO)} is not a key. Keys: {', '.join(sorted(ALLOWED_KEYS))}.",
                title="Nothing forgotten",
                severity="error",
                markup=False,
            )
        else:
            await self.forget(command.key)

    @on(ForgetRequested)
    def _forget_requested(self, request: ForgetRequested) -> None:
        if self._unavailable():
            return
        facts = {f.key: f for f in self.runtime.snapshot().facts}
        if request.key is not None and request.key not in facts:
            return
        value = facts[request.key].value if request.key else None

        async def confirmed(answer: bool | None) -> None:
            if answer:
                await self.forget(request.key)

        self.push_screen(ConfirmForget(request.key, value, kept=len(facts) - 1), callback=confirmed)

    async def forget(self, key: str | None) -> None:
        await self.session.forget(key)
        self._refused.clear()  # the turns they were for are cleared from the panes
        what = f"forget {key}" if key else "forget (every fact)"
        for agent in ("support", "logs"):
            await self.pane(agent).replace_history(
                f"History replaced by {what}: the {agent} agent starts a new session and no longer sees "
                "the messages that were here."
            )
        self.notify(f"{'Forgot ' + key if key else 'Forgot every fact'}; both histories replaced.")

    # -- focus: typing never lands anywhere it could forget something --------------------

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

    # -- actions -----------------------------------------------------------------------

    def action_forget_all(self) -> None:
        self.post_message(ForgetRequested(None))

    def action_show_calls(self) -> None:
        if self._unavailable():
            return
        agent = self.active_agent
        runtime = self.runtime
        self.push_screen(
            CallsScreen(
                agent,
                runtime.last_turn_calls(agent),
                splits=runtime.context_by_turn(agent),
                recalled=runtime.recalled(agent),
            )
        )

    def action_help(self) -> None:
        self.push_screen(HelpScreen(self.runtime.status if self.ready else None))

    def action_drift(self) -> None:
        if self._unavailable():
            return
        self.push_screen(DriftScreen(self.runtime.models))

    def action_export_chronology(self) -> None:
        from workbench.ui.export_screen import ExportChronology

        if not self.transcript.entries:
            self.notify("Nothing to export yet: the conversation is empty.", severity="warning")
            return

        def save(request: ExportRequest | None) -> None:
            if request is not None:
                self._write_chronology(request)

        self.push_screen(ExportChronology(self.transcript.questions(), EXPORT_PATH), callback=save)

    def _write_chronology(self, request: ExportRequest) -> None:
        from workbench.drift import ChronologyError

        try:
            exported = self.session.export(request.path, request.probes)
        except ChronologyError as exc:
            self.notify("\n".join(exc.problems), title="Not exported", severity="error", markup=False)
            return
        except OSError as exc:
            self.notify(
                visible(clip(f"{request.path}: {exc.strerror or exc}", ERROR_CHARS)),
                title="Not exported",
                severity="error",
                markup=False,
            )
            return
        self.notify(
            f"{exported.steps} steps, {exported.probes} probe(s): workbench drift --chronology {request.path}",
            title="Chronology exported",
            markup=False,
        )

    def action_drift_on_conversation(self) -> None:
        from workbench.drift import ChronologyError

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
        self.push_screen(DriftScreen(self.runtime.models, chronology=chronology))

    async def switch_integration_mode(self, mode: Mode) -> None:
        if any(self.pane(a).busy for a in ("support", "logs")):
            self.notify("Wait for the running turns to finish before switching mode.", severity="warning")
            return
        self.runtime.set_mode(mode)
        self._show_status()
        for agent in ("support", "logs"):
            await self.pane(agent).replace_history(
                f"Switched to {mode} mode: the {agent} agent starts a new session; the facts are kept."
            )

    async def switch_recall(self, on: bool) -> None:
        if any(self.pane(a).busy for a in ("support", "logs")):
            self.notify("Wait for the running turns to finish before switching recall.", severity="warning")
            return
        if not self.runtime.set_recall(on):
            self.notify("This session was started without recall.", severity="warning")
            return
        self._show_status()
        state = "on: both agents recall from every earlier message of yours" if on else "off"
        for agent in ("support", "logs"):
            await self.pane(agent).replace_history(
                f"Recall {state}. The {agent} agent starts a new session; the facts are kept."
            )

    def use_host_parse(self) -> None:
        if self.runtime.use_host_parse():
            self._show_status()

    def get_system_commands(self, screen: Screen[object]) -> Iterable[SystemCommand]:
        yield from super().get_system_commands(screen)
        yield SystemCommand(
            "Forget all facts", "Remove every fact and replace both agents' histories", self.action_forget_all
        )
        if self.ready:
            other = Mode.PROVIDER if self.runtime.mode is Mode.MANUAL else Mode.MANUAL
            yield SystemCommand(
                f"Switch to {other} mode",
                "Both agents start new, empty sessions (their histories are replaced); the facts are kept",
                lambda: self.run_worker(self.switch_integration_mode(other)),
            )
            if self.runtime.writer_failing:
                yield SystemCommand(
                    "Use the host parse as the writer",
                    "The writer model keeps failing the contract: read declarations with the host's own parse, "
                    "no model call, for this session (said in the ledger and the header)",
                    self.use_host_parse,
                )
            recall_on = self.runtime.status.recall is not None
            yield SystemCommand(
                f"Turn recall {'off' if recall_on else 'on'}",
                "Retrieved chat-history memory (seed 004): store every message, recall similar ones; "
                "both agents start new sessions",
                lambda: self.run_worker(self.switch_recall(not recall_on)),
            )
        yield SystemCommand("What the model saw", "The last turn's calls of the focused pane", self.action_show_calls)
        yield SystemCommand(
            "Drift lab", "Run the built-in chronology through six context policies and compare", self.action_drift
        )
        yield SystemCommand(
            "Export conversation as chronology",
            "Both panes' messages and every forget, to a file the drift lab runs; questions are probes",
            self.action_export_chronology,
        )
        yield SystemCommand(
            "Run the drift lab on this conversation",
            "Replay both panes' messages and forgets through every context policy",
            self.action_drift_on_conversation,
        )
        yield SystemCommand("Workbench help", "The contract, the commands and the keys", self.action_help)
