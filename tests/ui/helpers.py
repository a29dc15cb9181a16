import asyncio
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TypeVar

from textual import events
from textual.app import App
from textual.dom import DOMNode
from textual.pilot import Pilot
from textual.screen import Screen

from workbench.memory import WorkingMemory
from workbench.runtime import CallLog, Mode, ModelConfig, build_models
from workbench.session.assemble import assemble
from workbench.ui.app import WorkbenchApp
from workbench.ui.chat import ChatPane
from workbench.ui.confirm import ConfirmForget
from workbench.ui.facts import FactPanel, MemoryView

FIXED = datetime(2026, 11, 30, 9, 15, 0, tzinfo=UTC)
# How long a wait on something awaited may take before the test fails (a loaded machine is slow).
TIMEOUT = 60.0
S = TypeVar("S", bound=Screen[Any])


async def reached(node: DOMNode, attribute: str, holds: Callable[[Any], bool]) -> None:
    """Return once the reactive `node.attribute` holds: at once if it does, else when a change makes it."""
    if holds(getattr(node, attribute)):
        return
    done = asyncio.Event()
    node.watch(node, attribute, lambda value: done.set() if holds(value) else None, init=False)
    await asyncio.wait_for(done.wait(), TIMEOUT)


async def pushed(app: App[Any], kind: type[S]) -> S:
    """The screen of `kind` on top, once it has been pushed (the app's screen-change signal)."""
    if not isinstance(app.screen, kind):
        done = asyncio.Event()
        listener = app.screen_stack[0]  # a running node of its own: unsubscribing it leaves the app's own
        app.screen_change_signal.subscribe(
            listener, lambda screen: done.set() if isinstance(screen, kind) else None, immediate=True
        )
        try:
            await asyncio.wait_for(done.wait(), TIMEOUT)
        finally:
            app.screen_change_signal.unsubscribe(listener)
    screen = app.screen
    assert isinstance(screen, kind)
    return screen


def make_app(mode: Mode = Mode.MANUAL, *, delay: float = 0.0) -> WorkbenchApp:
    """The real app on the built-in model, with a fixed clock so recorded times never change."""
    memory = WorkingMemory(clock=lambda: FIXED)
    return WorkbenchApp(assemble(build_models(ModelConfig(), scripted_delay=delay), memory=memory, mode=mode))


async def say(pilot: Pilot, agent: str, text: str, *, typed: bool = False) -> None:
    """Enter text into an agent's input (key by key when `typed`, else as a paste), press Enter,
    and wait for the turn to finish."""
    app = pilot.app
    assert isinstance(app, WorkbenchApp)
    prompt = app.pane(agent).prompt
    prompt.focus()
    await pilot.pause()
    if typed:
        await pilot.press(*text)
    else:
        app.post_message(events.Paste(text))
        await pilot.pause()
    await pilot.press("enter")
    await app.workers.wait_for_complete()
    await pilot.pause()


async def drawn(pilot: Pilot) -> ConfirmForget:
    """The forget question, once it has been pushed and drawn."""
    screen = await pushed(pilot.app, ConfirmForget)
    await reached(screen, "shown_at", lambda at: at < float("inf"))
    return screen


async def read_question(pilot: Pilot) -> None:
    """Wait as a person does until the confirmation on screen has been drawn and read."""
    await drawn(pilot)
    await pilot.pause(ConfirmForget.GUARD_SECONDS)


async def answer(pilot: Pilot, key: str) -> None:
    """Answer the confirmation on screen as a person does: once it has been drawn and read."""
    await read_question(pilot)
    await pilot.press(key)
    await pilot.pause()


def make_recall_app(*, on: bool = True) -> WorkbenchApp:
    """The app with recall (--recall when `on`) on an in-memory store and the built-in lexical embedder."""
    from workbench.recall.config import RecallConfig

    memory = WorkingMemory(clock=lambda: FIXED)
    calls = CallLog()
    recall = RecallConfig(store="memory").build(calls)
    return WorkbenchApp(assemble(build_models(ModelConfig()), memory=memory, calls=calls, recall=recall, recall_on=on))


def make_persisted_app(directory: Path, mode: Mode = Mode.MANUAL) -> WorkbenchApp:
    """The app as `workbench --persist` assembles it, on `directory`, with the fixed clock."""
    from workbench.persist.sessions import PersistedSessions

    persisted = PersistedSessions(directory, clock=lambda: FIXED)
    return WorkbenchApp(assemble(build_models(ModelConfig()), persisted=persisted, mode=mode))


def release(app: WorkbenchApp) -> None:
    """The workbench quits: its lock on the persisted directory goes with the process."""
    from workbench.persist.sessions import PersistedSessions

    assert isinstance(app.session.runtime.histories, PersistedSessions)
    app.session.runtime.histories.close()


async def start_turn(pilot: Pilot, agent: str, text: str) -> ChatPane:
    """Send `text` from `agent`'s pane and return once the turn is running (not finished)."""
    app = pilot.app
    assert isinstance(app, WorkbenchApp)
    pane = app.pane(agent)
    pane.prompt.focus()
    pane.prompt.insert(text)
    await pilot.pause()
    await pilot.press("enter")
    await reached(pane, "busy", bool)
    return pane


async def start_ended(pilot: Pilot) -> None:
    """Wait until the runtime's start, run right after the first frame, has ended (started or failed):
    on a loaded machine that frame may take more than one pause."""
    await reached(pilot.app, "sub_title", lambda title: not title.startswith("starting:"))
    await pilot.pause()  # what it notified is handled


_REPORTS: list[Any] = []  # the built-in lab's report, once per test process


async def built_in_report() -> Any:
    """The built-in story through every policy on the built-in model, run once per test process: the
    screens that draw a report are tested on a real one without running the lab for each test."""
    from workbench.drift import run_drift

    if not _REPORTS:
        _REPORTS.append(await run_drift(build_models(ModelConfig())))
    return _REPORTS[0]


def built_in_lab() -> Any:
    """The drift lab's screen showing the built-in story's report, as F5 shows it once the lab ran."""
    from workbench.ui.drift_screen import DriftScreen

    async def lab(*, progress: Any) -> Any:
        return await built_in_report()

    return DriftScreen(lab, build_models(ModelConfig()).agent_label)


def scripted_session(mode: Mode = Mode.MANUAL, **options: Any):
    """A session on the built-in model with the fixed clock, as `make_app`'s, without the app."""
    return assemble(build_models(ModelConfig()), memory=WorkingMemory(clock=lambda: FIXED), mode=mode, **options)


class ScreenHost(App[None]):
    """An empty app that opens one screen, styled as in the app."""

    CSS_PATH = WorkbenchApp.CSS_PATH
    HORIZONTAL_BREAKPOINTS = WorkbenchApp.HORIZONTAL_BREAKPOINTS

    def __init__(self, screen: Screen[Any]) -> None:
        super().__init__()
        self.first = screen
        self.answers: list[Any] = []  # what the screen was dismissed with

    def on_mount(self) -> None:
        self.push_screen(self.first, self.answers.append)


class PaneHost(App[None]):
    """One agent's pane alone, styled as in the app; what it sends up it asks of `session`, as the app does."""

    CSS_PATH = WorkbenchApp.CSS_PATH

    def __init__(self, session: Any, agent: str = "support") -> None:
        super().__init__()
        self.session, self.agent = session, agent

    def compose(self):
        yield ChatPane(self.agent, title=self.agent, placeholder="type", hint="hint")

    @property
    def pane(self) -> ChatPane:
        return self.query_one(ChatPane)

    async def on_chat_pane_submitted(self, event: ChatPane.Submitted) -> None:
        await event.pane.ask(self.session, event.text)

    async def sent(self, pilot: Pilot) -> None:
        """Press Enter in the pane and wait until its turn is drawn to the end."""
        before = self.pane.turns
        await pilot.press("enter")
        await reached(self.pane, "turns", lambda turns: turns > before)
        await reached(self.pane, "busy", lambda busy: not busy)
        await self.workers.wait_for_complete()  # the answer's drawing, too
        await pilot.pause()

    async def say(self, pilot: Pilot, text: str) -> None:
        """Paste `text` into the pane's input, press Enter, and wait until its turn is drawn to the end."""
        self.pane.prompt.focus()
        self.post_message(events.Paste(text))
        await pilot.pause()
        await self.sent(pilot)


class PanelHost(App[None]):
    """The fact panel alone, styled as in the app, showing `view` (as the app sets it)."""

    CSS_PATH = WorkbenchApp.CSS_PATH

    def __init__(self, view: MemoryView) -> None:
        super().__init__()
        self.view = view

    def compose(self):
        yield FactPanel()

    def on_mount(self) -> None:
        self.query_one(FactPanel).view = self.view
