"""The main screen: the agents' panes beside the fact panel, under the header and over the keys. It keeps
where the user last typed, gives the focus back there when the screens over it close, and takes what the
panes send up: a message is asked as a turn of its pane's agent or run as a console command, in order,
once the session the app connects is there. It draws memory in the fact panel: a turn's in a pause in
typing outside its pane, a forget's or a note's at once."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from functools import partial
from typing import TYPE_CHECKING

from textual import events, on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal
from textual.notifications import SeverityLevel
from textual.screen import Screen
from textual.timer import Timer, TimerCallback
from textual.widgets import Header

from workbench.session.views import NOT_SAVED, SAVED_AGAIN, WRITER_FAILING, WRITER_SWITCHED, EventKind
from workbench.ui.chat import ChatPane
from workbench.ui.composer import Composer
from workbench.ui.console import parse_console_command, run_console_command
from workbench.ui.facts import FactPanel, MemoryView
from workbench.ui.frames import SCREEN_UPDATE, NextFrameTimer
from workbench.ui.keys_footer import KeysFooter
from workbench.ui.messages import TurnEnded
from workbench.ui.panes import Panes, agent_panes

if TYPE_CHECKING:
    from workbench.session.controller import SessionController
    from workbench.session.views import MemoryUpdate
    from workbench.ui.forgetting import ForgetFlow
    from workbench.ui.typing import PauseScheduler

FACT_PANEL = "fact panel"  # the scheduler's lane of the panel's views
NOTE_TITLES = {
    "recall": "Recall",
    WRITER_FAILING: "The writer keeps failing",
    WRITER_SWITCHED: "Writer",
    NOT_SAVED: "Not saved",
    SAVED_AGAIN: "Saved",
}


class MainScreen(Screen[object]):
    """The screen of the main UI, with a pane for each of `agents`. It starts with
    its width's breakpoint class (of `breakpoints`): Textual sets that at the first resize, after the
    first styling, and a class set on a screen restyles every widget again. And its first resume does
    not restyle every widget: they were styled as they were mounted, just before, and nothing they are
    styled by has changed since. Later resumes (back from a modal or the drift lab) restyle as Textual
    decides."""

    BINDINGS = [
        # Moved as the key arrives, not once it has bubbled up from the focused widget (Screen's own
        # binding): keys typed right behind a Tab went to the input it was leaving.
        Binding("tab", "app.focus_next", show=False, priority=True),
        Binding("shift+tab", "app.focus_previous", show=False, priority=True),
    ]

    def __init__(
        self,
        width: int,
        breakpoints: list[tuple[int, str]],
        agents: Sequence[str],
        forgetting: ForgetFlow,
        scheduler: PauseScheduler,
        *,
        labels: Mapping[str, str],
        hints: Mapping[str, str],
    ) -> None:
        size_class = next(name for least, name in reversed(breakpoints) if width >= least)
        super().__init__(id="_default", classes=size_class)  # Textual's own id for the default screen
        self._resumed = False
        self._agents, self._forgetting, self._scheduler = tuple(agents), forgetting, scheduler
        self._labels, self._hints = labels, hints
        self.session: SessionController | None = None
        """The session, once the app has connected it (`connect`): the panes' messages wait for it."""
        self.start_error: str | None = None
        """Why the session could not start, if it could not: nothing can be sent."""
        self.panes: Panes | None = None
        self.last_input: Composer
        """The input the user last typed in (from mount on): the focus comes back to it, and keys typed
        elsewhere go to it."""
        self.widgets_mounted = asyncio.Event()
        """Set once its widgets are mounted: the app waits for them before it connects the session."""

    def compose(self) -> ComposeResult:
        yield Header(icon="")
        with Horizontal(id="main"):
            self.panes = Panes(*self._make_panes(self._agents), id="panes")
            yield self.panes
            yield FactPanel()
        yield KeysFooter()

    def _make_panes(self, agents: Sequence[str]) -> list[ChatPane]:
        """Their panes: titled and hinted as `labels` and `hints` say where they say, the first focused."""
        return agent_panes(
            agents,
            labels=self._labels,
            hints=self._hints,
            workflows=self._forgetting.workflows,
            scheduler=self._scheduler,
            focused=self.app.AUTO_FOCUS or "",
        )

    def on_mount(self) -> None:
        self.last_input = self.query_one(ChatPane).prompt
        self.app.screen_change_signal.subscribe(self, self._screen_changed)
        self.widgets_mounted.set()

    def set_interval(
        self,
        interval: float,
        callback: TimerCallback | None = None,
        *,
        name: str | None = None,
        repeat: int = 0,
        pause: bool = False,
    ) -> Timer:
        """Textual's, but the screen's update timer draws at the next frame slot (`workbench.ui.frames`)."""
        timer = super().set_interval(interval, callback, name=name, repeat=repeat, pause=pause)
        if name == SCREEN_UPDATE:
            timer.__class__ = NextFrameTimer  # its task has not run yet: it runs NextFrameTimer's loop
        return timer

    def on_screen_resume(self, event: events.ScreenResume) -> None:
        # Runs before Screen's own handler (subclass handlers come first), which reads this flag.
        if not self._resumed:
            self._resumed = True
            event.refresh_styles = False

    # -- focus: typing never lands anywhere it could forget something -------------------------------

    def on_descendant_focus(self, event: events.DescendantFocus) -> None:
        if isinstance(event.widget, Composer):
            self.last_input = event.widget

    def _screen_changed(self, screen: Screen[object]) -> None:
        """Back on the main screen after a modal or the drift lab: focus the input last typed in."""
        if screen is self:
            screen.set_focus(self.last_input)

    @on(FactPanel.Typed)
    def _typed_on_the_panel(self, event: FactPanel.Typed) -> None:
        self.last_input.type_in(event.character)

    @property
    def active_agent(self) -> str:
        pane = next((a for a in self.last_input.ancestors if isinstance(a, ChatPane)), None)
        return pane.agent if pane else self.query_one(ChatPane).agent

    def connect(self, session: SessionController) -> bool:
        """The session the app connected: memory in the fact panel, what each agent resumed and the messages
        sent meanwhile asked; False when it runs other agents than the panes opened with (`show_agents`)."""
        self.session = session
        self.query_one(FactPanel).view = MemoryView(session.state().memory)
        if session.agent_names != tuple(p.agent for p in self.query(ChatPane)):
            return False
        self._show_resumed(session)
        for pane in self.query(ChatPane):  # what was sent while they started, in order
            self.app.call_later(self.ask_next, pane)
        return True

    async def show_agents(self, session: SessionController) -> None:
        """The session runs other agents than the panes opened with: their panes instead (a draft typed
        meanwhile stays in the first pane, and what was sent meanwhile is asked there, in order)."""
        panes = self.panes
        assert panes is not None
        draft = self.last_input.text
        waiting = [text for pane in panes.panes for text in pane.prompt.waiting]
        await panes.remove_children()
        await panes.mount_all(self._make_panes(session.agent_names))
        first = panes.panes[0].prompt
        first.insert(draft)
        first.waiting.extend(waiting)  # sent meanwhile: asked of the first agent, in order
        first.focus()
        panes.first = 0
        self._show_resumed(session)
        await self.ask_next(panes.panes[0])

    def _show_resumed(self, session: SessionController) -> None:
        """What each agent resumed from disk (`--persist`), if anything."""
        for pane in self.query(ChatPane):
            if history := session.pane(pane.agent).resumed:
                pane.show_resumed(history)

    def could_not_start(self, error: str) -> None:
        """The agents could not start (`error` says why): the messages sent meanwhile back in front of their
        panes' drafts, each on a line of its own (nothing can be sent now; quit, fix it and start again)."""
        self.start_error = error
        for pane in self.query(ChatPane):
            if waiting := pane.prompt.waiting:
                pane.prompt.put_back("".join(f"{text}\n" for text in waiting))
                waiting.clear()

    def unavailable(self) -> bool:
        """True (and says why) while there is no session: still starting, or start-up failed."""
        if self.start_error is not None:
            self.notify(
                f"The agent runtime could not start: {self.start_error.rstrip('.')}. "
                "Quit (Ctrl+Q), fix it and start again.",
                title="Not available",
                severity="error",
                markup=False,
            )
        elif self.session is None:
            self.notify("Still starting: the agent runtime is loading. Your draft is kept.", severity="warning")
        return self.session is None

    # -- turns: a pane sends its text up, runs the turn accepted here, and posts its end up ---------

    @on(ChatPane.Submitted)
    async def _submitted(self, event: ChatPane.Submitted) -> None:
        """What a pane sent (Enter, or F9 again), which left its input at Enter (`Composer.action_send`),
        so that what is typed after it is a message of its own, never glued onto it: refused, it is put
        back in front of the draft; else it waits its turn: while the agents start or its pane answers,
        the messages sent wait, in order, one turn each."""
        pane, text, session = event.pane, event.text, self.session
        if not text.strip():
            return
        if self.start_error is not None and self.unavailable():
            if not event.again:
                pane.prompt.put_back(text)
            return
        if session is not None and (refusal := session.refusal(text)):
            if not event.again:
                pane.prompt.put_back(text)
            kept = "Your draft is still in the input: F7 selects all of it, and Delete clears it."
            self.notify(f"Not sent: {refusal}. {kept}", title="Message cannot be sent", severity="error", markup=False)
            return
        waiting = pane.prompt.waiting
        if session is not None and pane.free and not waiting:
            await self._ask(session, pane, text)
            return
        waiting.append(text)
        if session is None:
            self.notify("Still starting: the message is sent as soon as the agents are ready.")
        else:
            ahead = f" after the {len(waiting) - 1} before it" if len(waiting) > 1 else ""
            self.notify(f"The {pane.agent} agent is still answering: your message is sent when it is done{ahead}.")

    @on(ChatPane.Free)
    async def _free(self, event: ChatPane.Free) -> None:
        await self.ask_next(event.pane)

    async def ask_next(self, pane: ChatPane) -> None:
        """Ask the oldest message waiting for `pane`, once the agents are ready and its turn is over
        (console commands waiting before it run first)."""
        waiting = pane.prompt.waiting
        while waiting and (session := self.session) is not None and pane.free and pane.is_attached:
            text = waiting.popleft()
            if refusal := session.refusal(text):  # sent before the agents could check it
                pane.prompt.put_back(f"{text}\n")
                self.notify(f"Not sent: {refusal}. It is back in the input.", severity="error", markup=False)
                continue
            await self._ask(session, pane, text)

    async def _ask(self, session: SessionController, pane: ChatPane, text: str) -> None:
        """A console command, or a turn of the pane's agent."""
        if command := parse_console_command(text):
            await run_console_command(command, pane, session, self._forgetting)
        else:
            await pane.ask(session, text)

    # -- memory, in the fact panel ------------------------------------------------------------------

    @on(TurnEnded)
    def _turn_ended(self, event: TurnEnded) -> None:
        """The turn's memory reaches the panel as one view, in a pause in typing outside its pane (the
        turn's end bubbles on to the app)."""
        if event.outcome is not None and event.outcome.memory:
            view = MemoryView.of_turn(event.outcome.memory)
            pane = next(p for p in self.query(ChatPane) if p.agent == event.agent)
            self._scheduler.later(FACT_PANEL, pane.prompt, partial(self._show_view, view))

    async def show_settled(self, update: MemoryUpdate) -> None:
        """A forget or a note, drawn at once after every view before it: nothing waits holding a forgotten
        value. A note is said in a notice too, but a forget's: the ledger says what a forget reached."""
        for note in (e for e in update.outcome.events if e.kind is EventKind.NOTE and e.origin != "forget"):
            title = NOTE_TITLES.get(note.origin, "Writer format")
            timeout = 15 if note.origin in (WRITER_FAILING, NOT_SAVED) else 5
            severity: SeverityLevel = "error" if note.origin == NOT_SAVED else "information"
            self.notify(note.describe(), title=title, severity=severity, markup=False, timeout=timeout)
        await self._scheduler.now(FACT_PANEL)
        self._show_view(MemoryView.after(update))

    def _show_view(self, view: MemoryView, _hurry: bool = False) -> None:
        self.query_one(FactPanel).view = view
