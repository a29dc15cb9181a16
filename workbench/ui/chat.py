"""One agent's pane: its conversation, a working indicator and an input."""

from __future__ import annotations

from dataclasses import dataclass

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.message import Message
from textual.reactive import reactive
from textual.widgets import Input, Markdown, Static
from textual.widgets.markdown import MarkdownStream

from workbench.runtime import Usage, describe_usage
from workbench.ui.literal import literal, visible


class UserMessage(Static):
    def __init__(self, text: str) -> None:
        super().__init__(literal(text), markup=False)


class Notice(Static):
    """A line from the workbench itself (memory snapshots, errors, history replaced)."""

    def __init__(self, text: str, *, kind: str = "info") -> None:
        super().__init__(literal(text), markup=False, classes=f"-{kind}")


class AgentReply(Markdown):
    """An agent's answer, streamed as Markdown and finished with one full update."""

    def __init__(self) -> None:
        super().__init__("")
        self._stream: MarkdownStream | None = None
        self._text = ""

    async def add(self, fragment: str) -> None:
        if self._stream is None:
            self._stream = Markdown.get_stream(self)
        self._text += fragment
        await self._stream.write(visible(fragment))

    async def finish(self, text: str) -> None:
        if self._stream is not None:
            await self._stream.stop()
            self._stream = None
        self._text = text
        await self.update(visible(text))


class ChatPane(Vertical):
    """Renders one agent's conversation; sends what the user typed up as `ChatPane.Submitted`."""

    BINDINGS = [Binding("escape", "cancel", "Cancel turn", id="cancel_turn")]

    busy: reactive[bool] = reactive(False)
    turns: reactive[int] = reactive(0)
    usage: reactive[Usage | None] = reactive(Usage(0, 0))

    @dataclass
    class Submitted(Message):
        pane: ChatPane
        text: str

    @dataclass
    class CancelRequested(Message):
        pane: ChatPane

    def __init__(self, agent: str, *, title: str, placeholder: str) -> None:
        super().__init__(id=agent, classes="chat-pane")
        self.agent = agent
        self.border_title = title
        self._placeholder = placeholder
        self._in_flight: tuple[UserMessage, AgentReply] | None = None

    def compose(self) -> ComposeResult:
        yield VerticalScroll(classes="conversation")
        yield Static("working... (Esc cancels)", classes="working")
        yield Input(placeholder=self._placeholder, classes="prompt")

    def on_mount(self) -> None:
        self.query_one(".conversation", VerticalScroll).anchor()
        self.query_one(Input).cursor_blink = False
        self._update_subtitle()

    @property
    def conversation(self) -> VerticalScroll:
        return self.query_one(".conversation", VerticalScroll)

    @property
    def prompt(self) -> Input:
        return self.query_one(Input)

    def watch_busy(self, busy: bool) -> None:
        self.set_class(busy, "-busy")

    def _update_subtitle(self) -> None:
        tokens = describe_usage(self.usage) if self.turns else "no calls yet"
        self.border_subtitle = f"turns: {self.turns} · tokens reported: {tokens}"

    def watch_turns(self) -> None:
        self._update_subtitle()

    def watch_usage(self) -> None:
        self._update_subtitle()

    @on(Input.Submitted)
    def _submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self.post_message(self.Submitted(self, event.value))

    def action_cancel(self) -> None:
        self.post_message(self.CancelRequested(self))

    async def start_turn(self, text: str) -> AgentReply:
        """Show the user's message and an empty reply to stream into."""
        user, reply = UserMessage(text), AgentReply()
        self._in_flight = (user, reply)
        await self.conversation.mount_all([user, reply])
        return reply

    def end_turn(self) -> None:
        self._in_flight = None

    async def notice(self, text: str, *, kind: str = "info") -> None:
        await self.conversation.mount(Notice(text, kind=kind))

    async def replace_history(self, reason: str) -> None:
        """The agent's history was replaced: clear what it no longer holds, keep a turn in flight."""
        keep = set(self._in_flight or ())
        await self.conversation.remove_children([w for w in self.conversation.children if w not in keep])
        notice = Notice(reason, kind="replaced")
        if self.conversation.children:
            await self.conversation.mount(notice, before=0)
        else:
            await self.conversation.mount(notice)
