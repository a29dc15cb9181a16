"""The workbench TUI: two agent panes beside a live fact panel."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from textual import on
from textual.app import App, ComposeResult, SystemCommand
from textual.binding import Binding
from textual.containers import Container, Horizontal
from textual.message import Message
from textual.screen import Screen
from textual.widgets import Footer, Header

from workbench.memory.contract import ALLOWED_KEYS, MAX_MESSAGE_CHARS
from workbench.memory.ledger import EventKind, MemoryEvent
from workbench.runtime.config import Mode
from workbench.ui.chat import ChatPane
from workbench.ui.console import Forget, ShowMemory, parse_console_command
from workbench.ui.drift_screen import DriftScreen
from workbench.ui.facts import FactPanel, ForgetRequested
from workbench.ui.screens import CallsScreen, ConfirmForget, HelpScreen

if TYPE_CHECKING:
    from workbench.runtime.agents import AgentRuntime
    from workbench.ui.replies import AgentReply


def stylesheet_dir() -> Path:
    """styles/ ships inside the package when installed; a checkout keeps it at the top level."""
    package = Path(__file__).resolve().parent.parent
    shipped = package / "styles"
    return shipped if shipped.is_dir() else package.parent / "styles"


@dataclass
class MemoryChanged(Message):
    event: MemoryEvent


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
        """Give a runtime, or `start`, which builds one in a thread after the first frame, so the
        window opens before Agent Framework and pydantic have loaded."""
        if (runtime is None) == (start is None):
            raise ValueError("give the app a runtime, or a way to start one")
        super().__init__()
        self._runtime = runtime
        self._start = start
        self._batch: list[MemoryEvent] = []
        self._refresh_pending = False
        self._active_pane = "support"
        self._unsubscribe = lambda: None

    def compose(self) -> ComposeResult:
        yield Header(icon="")
        with Horizontal(id="main"):
            with Container(id="panes"):
                yield ChatPane(
                    "support",
                    title="support agent",
                    placeholder="Ask support · key=value declares a fact · mem · forget KEY",
                    hint="The support agent helps with product problems. Declare what you know as "
                    "key=value, e.g. module=Reporting; database=PostgreSQL. F1 shows help.",
                )
                yield ChatPane(
                    "logs",
                    title="logs agent",
                    placeholder="Ask about logs · key=value declares a fact · mem · forget KEY",
                    hint="The logs agent says where logs live and how to read them. It has its own "
                    "history and shares only the facts, e.g. ask: Where can I find logs?",
                )
            yield FactPanel()
        yield Footer()

    @property
    def runtime(self) -> AgentRuntime:
        if self._runtime is None:
            raise RuntimeError("the agent runtime is still starting")
        return self._runtime

    @property
    def ready(self) -> bool:
        return self._runtime is not None

    def on_mount(self) -> None:
        self.pane("support").prompt.focus()
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
            self.sub_title = "could not start the agent runtime"
            self.notify(f"{type(exc).__name__}: {exc}", title="Start-up failed", severity="error", timeout=30)
            return
        self._connect_runtime()

    def _connect_runtime(self) -> None:
        self._update_header()
        self._unsubscribe = self.runtime.memory.ledger.subscribe(self._post_memory_change)
        self._refresh_memory()

    def _post_memory_change(self, event: MemoryEvent) -> None:
        self.post_message(MemoryChanged(event))

    def _starting(self) -> bool:
        """True (and says so) while the runtime is not there yet."""
        if not self.ready:
            self.notify("Still starting: the agent runtime is loading. Your draft is kept.", severity="warning")
        return not self.ready

    def on_unmount(self) -> None:
        self._unsubscribe()

    def pane(self, agent: str) -> ChatPane:
        return self.query_one(f"#{agent}", ChatPane)

    def _update_header(self) -> None:
        self.sub_title = (
            f"model: {self.runtime.models.agent_label} · mode: {self.runtime.mode} · "
            f"writer: {self.runtime.updater.writer.format_summary}"
        )

    # -- memory ------------------------------------------------------------------------

    @on(MemoryChanged)
    def _memory_changed(self, message: MemoryChanged) -> None:
        event = message.event
        same_batch = (
            self._batch
            and event.kind is not EventKind.FORGOTTEN
            and self._batch[-1].kind is not EventKind.FORGOTTEN
            and self._batch[-1].turn == event.turn
        )
        self._batch = [*self._batch, event] if same_batch else [event]
        if event.kind is EventKind.NOTE:
            self._update_header()
            self.notify(event.describe(), title="Writer format")
        if not self._refresh_pending:  # one redraw for the several events of one batch
            self._refresh_pending = True
            self.call_after_refresh(self._refresh_memory)

    def _refresh_memory(self) -> None:
        self._refresh_pending = False
        panel = self.query_one(FactPanel)
        panel.show_facts(self.runtime.memory.facts(), self._batch)
        panel.show_changes(self._batch)
        panel.show_ledger(self.runtime.memory.ledger.latest())

    # -- turns -------------------------------------------------------------------------

    @on(ChatPane.Submitted)
    async def _submitted(self, event: ChatPane.Submitted) -> None:
        pane, text = event.pane, event.text
        if not text.strip() or self._starting():
            return
        if command := parse_console_command(text):
            pane.prompt.clear()
            await self._console(pane, command)
            return
        if len(text) > MAX_MESSAGE_CHARS:
            self.notify(
                f"Not sent: the message has {len(text):,} characters and the limit is {MAX_MESSAGE_CHARS:,}. "
                "Your draft is still in the input.",
                title="Message too long",
                severity="error",
            )
            return
        if pane.busy:
            self.notify(f"The {pane.agent} agent is still answering: wait, or press Esc to cancel.", severity="warning")
            return
        pane.prompt.clear()
        pane.turns += 1
        reply = await pane.start_turn(text)
        pane.busy = True
        self.run_worker(self._turn(pane, text, reply), group=pane.agent, exit_on_error=False)

    async def _turn(self, pane: ChatPane, text: str, reply: AgentReply) -> None:
        answer: str | None = None
        try:
            result = await self.runtime.ask(pane.agent, text, on_text=reply.add)
            if result.ok:
                answer = result.reply
            else:
                await pane.notice(
                    f"The {pane.agent} agent's call failed: {result.error}. Facts and history are unchanged.",
                    kind="error",
                )
                self.notify(result.error, title=f"{pane.agent} agent failed", severity="error")
        except asyncio.CancelledError:
            await pane.notice("Cancelled. Nothing from this turn was stored.", kind="error")
            raise
        finally:
            await pane.finish_turn(reply, answer)
            pane.busy = False
            pane.usage = self.runtime.calls.total(pane.agent)

    @on(ChatPane.CancelRequested)
    def _cancel(self, event: ChatPane.CancelRequested) -> None:
        if event.pane.busy:
            self.workers.cancel_group(self, event.pane.agent)

    # -- console commands and forget ---------------------------------------------------

    async def _console(self, pane: ChatPane, command: ShowMemory | Forget) -> None:
        if isinstance(command, ShowMemory):
            facts = self.runtime.memory.facts()
            lines = [f"mem: {len(facts)} fact(s)"] + [
                f"{f.key} = {f.value!r} (turn {f.turn}) quoting {f.evidence!r}" for f in facts
            ]
            await pane.notice("\n".join(lines))
        elif command.key is not None and command.key not in ALLOWED_KEYS:
            self.notify(
                f"{command.key!r} is not a key. Keys: {', '.join(sorted(ALLOWED_KEYS))}.",
                title="Nothing forgotten",
                severity="error",
            )
        else:
            await self.forget(command.key)

    @on(ForgetRequested)
    def _forget_requested(self, request: ForgetRequested) -> None:
        if self._starting():
            return
        facts = {f.key: f for f in self.runtime.memory.facts()}
        if request.key is not None and request.key not in facts:
            return
        value = facts[request.key].value if request.key else None

        async def confirmed(answer: bool | None) -> None:
            if answer:
                await self.forget(request.key)

        self.push_screen(ConfirmForget(request.key, value), callback=confirmed)

    async def forget(self, key: str | None) -> None:
        await self.runtime.forget(key)
        what = f"forget {key}" if key else "forget (every fact)"
        for agent in ("support", "logs"):
            await self.pane(agent).replace_history(
                f"History replaced by {what}: the {agent} agent starts a new session and no longer sees "
                "the messages that were here."
            )
        self.notify(f"{'Forgot ' + key if key else 'Forgot every fact'}; both histories replaced.")

    # -- actions -----------------------------------------------------------------------

    def on_descendant_focus(self, event: object) -> None:
        focused = self.focused
        pane = next((a for a in focused.ancestors_with_self if isinstance(a, ChatPane)), None) if focused else None
        if pane is not None:
            self._active_pane = pane.agent

    def action_forget_all(self) -> None:
        self.post_message(ForgetRequested(None))

    def action_show_calls(self) -> None:
        if self._starting():
            return
        calls = self.runtime.calls.records(origin=self._active_pane)
        last_turn = max((c.turn for c in calls if c.turn is not None), default=None)
        self.push_screen(CallsScreen(self._active_pane, [c for c in calls if c.turn == last_turn]))

    def action_help(self) -> None:
        self.push_screen(HelpScreen())

    def action_drift(self) -> None:
        if self._starting():
            return
        self.push_screen(DriftScreen(self.runtime.models))

    async def switch_integration_mode(self, mode: Mode) -> None:
        if any(self.pane(a).busy for a in ("support", "logs")):
            self.notify("Wait for the running turns to finish before switching mode.", severity="warning")
            return
        self.runtime.set_mode(mode)
        self._update_header()
        for agent in ("support", "logs"):
            await self.pane(agent).replace_history(
                f"Switched to {mode} mode: the {agent} agent starts a new session; the facts are kept."
            )

    def get_system_commands(self, screen: Screen) -> Iterable[SystemCommand]:
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
        yield SystemCommand("What the model saw", "The last turn's calls of the focused pane", self.action_show_calls)
        yield SystemCommand(
            "Drift lab", "Run the fixed chronology through five context policies and compare", self.action_drift
        )
        yield SystemCommand("Workbench help", "The contract, the commands and the keys", self.action_help)
