"""One agent's pane: its conversation, a working indicator, a composer, and the lifecycle of its
turns (start, stream, finish, fail, cancel)."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.message import Message
from textual.reactive import reactive
from textual.widget import Widget
from textual.widgets import Static

from workbench.runtime.usage import Usage, describe_usage
from workbench.ui.composer import Composer
from workbench.ui.literal import literal, visible
from workbench.ui.typing import TypingClock

if TYPE_CHECKING:
    from workbench.session.controller import TurnOutcome
    from workbench.ui.replies import AgentReply

# Runs one turn, streaming the answer's pieces to the callable it is given.
Ask = Callable[[Callable[[str], Awaitable[None]]], Awaitable["TurnOutcome"]]


class UserMessage(Static):
    def __init__(self, text: str) -> None:
        super().__init__(literal(text), markup=False)


class Notice(Static):
    """A line from the workbench itself (memory snapshots, errors, history replaced)."""

    def __init__(self, text: str, *, kind: str = "info") -> None:
        super().__init__(literal(text), markup=False, classes=f"-{kind}")


class Hint(Static):
    """What a pane is for, shown until its first forget or mode switch."""

    def __init__(self, text: str) -> None:
        super().__init__(text, markup=False)


class HiddenNote(Static):
    """Says how many earlier messages left the screen to keep the pane fast."""

    count: reactive[int] = reactive(0)

    def __init__(self, count: int) -> None:
        super().__init__(markup=False)
        self.set_reactive(HiddenNote.count, count)

    def render(self) -> str:
        return f"{self.count} earlier message(s) are not shown here; the agent's history still holds them."


class ChatPane(Vertical):
    """One agent's conversation. Sends what the user typed up as `ChatPane.Submitted`; runs the
    turn it is then given in its own worker, and says when it ended with `ChatPane.TurnEnded`."""

    MAX_SHOWN = 100
    WORKING = "working... (Esc cancels)"
    READY = "ready: shown when you stop typing"  # answered; drawn in a pause in typing elsewhere

    BINDINGS = [Binding("escape", "cancel", "Cancel turn", id="cancel_turn")]

    busy: reactive[bool] = reactive(False)
    turns: reactive[int] = reactive(0)
    usage: reactive[Usage | None] = reactive(Usage(0, 0))

    @dataclass
    class Submitted(Message):
        pane: ChatPane
        text: str

        @property
        def control(self) -> ChatPane:
            return self.pane

    @dataclass
    class TurnEnded(Message):
        pane: ChatPane

        @property
        def control(self) -> ChatPane:
            return self.pane

    def __init__(
        self, agent: str, *, title: str, placeholder: str, hint: str, typing: TypingClock | None = None
    ) -> None:
        super().__init__(id=agent, classes="chat-pane")
        self.agent = agent
        self.typing = typing or TypingClock()
        self.border_title = title
        self._placeholder = placeholder
        self._hint = hint
        self._in_flight: tuple[UserMessage, AgentReply] | None = None
        self._answered = False  # the turn in flight has its answer (or its failure): it is finishing
        self._hidden = 0

    def compose(self) -> ComposeResult:
        with VerticalScroll(classes="conversation"):
            yield Hint(self._hint)
        yield Static(self.WORKING, classes="working")
        yield Composer(self._placeholder)

    def on_mount(self) -> None:
        conversation = self.query_one(".conversation", VerticalScroll)
        conversation.can_focus = False  # Tab goes from input to input; the wheel still scrolls
        conversation.anchor()
        self._update_subtitle()

    @property
    def conversation(self) -> VerticalScroll:
        return self.query_one(".conversation", VerticalScroll)

    @property
    def prompt(self) -> Composer:
        return self.query_one(Composer)

    def watch_busy(self, busy: bool) -> None:
        # The indicator's own display, not a class on the pane: a class would restyle every message.
        working = self.query_one(".working", Static)
        working.display = busy
        if busy and working.content != self.WORKING:
            working.update(self.WORKING)

    def _update_subtitle(self) -> None:
        tokens = f"{describe_usage(self.usage)} tokens" if self.usage is not None else "tokens unknown"
        plural = "" if self.turns == 1 else "s"
        self.border_subtitle = f"since start: {self.turns} turn{plural}" + (f" · {tokens}" if self.turns else "")

    def watch_turns(self) -> None:
        self._update_subtitle()

    def watch_usage(self) -> None:
        self._update_subtitle()

    @on(Composer.Sent)
    def _sent(self, event: Composer.Sent) -> None:
        event.stop()
        self.post_message(self.Submitted(self, event.text))

    # -- the turn ------------------------------------------------------------------------

    def start_turn(self, text: str, ask: Ask) -> None:
        """Take the draft, show it, and run the turn in this pane's worker."""
        self.prompt.take(text)
        self.turns += 1
        self.busy = True
        # The worker belongs to the app, where every worker's failure is handled in one place
        # (Worker.StateChanged does not bubble); the group keeps this pane's turns apart.
        self.app.run_worker(
            self._turn(text, ask), name=f"{self.agent} turn", group=self.turn_group, exit_on_error=False
        )

    async def _turn(self, text: str, ask: Ask) -> None:
        from workbench.ui.replies import AgentReply  # loaded once the runtime is ready, not before the first frame

        user, reply = UserMessage(text), AgentReply()
        self._in_flight = (user, reply)
        answer: str | None = None
        try:
            await self._show(user, reply)
            result = (await ask(reply.add)).result
            if result.ok:
                answer = result.reply
            else:
                await self.notice(
                    f"The {self.agent} agent's call failed: {result.error}. Facts and history are unchanged.",
                    kind="error",
                )
                self.notify(visible(result.error), title=f"{self.agent} agent failed", severity="error", markup=False)
        except asyncio.CancelledError:
            await self.notice("Cancelled. Nothing from this turn was stored.", kind="error")
            raise
        finally:
            try:
                await self._finish(reply, answer)
            finally:  # Esc while the answer renders cancels _finish: the turn has ended all the same
                self.busy = False
                self.post_message(self.TurnEnded(self))

    async def _finish(self, reply: AgentReply, text: str | None) -> None:
        """Replace the streaming reply by the finished answer, or drop it when the turn failed. While
        the user types in another pane the streamed text stays on screen; in a pause the answer is
        rendered ahead, in slices, and the swap and the end of the turn are drawn as one frame."""
        from workbench.ui.replies import AgentAnswer

        await reply.close()
        self._answered = True  # in the history now: a forget from here on clears this turn too
        answer: AgentAnswer | None = None
        try:
            if text is not None:
                try:
                    await self._wait_for_a_pause()
                    options = self.app.console_options.update_width(max(reply.content_size.width, 1))
                    answer = await AgentAnswer.rendered(text, self.app.console, options)
                    await self._wait_for_a_pause()  # typing again while it rendered: wait once more
                except asyncio.CancelledError:  # Esc while waiting or rendering: the answer is stored, show it
                    answer = answer or AgentAnswer(text)
                    raise
        finally:
            with self.app.batch_update():
                if self._in_flight is not None:  # else a forget meanwhile cleared this turn
                    if answer is not None:
                        await self.conversation.mount(answer, before=reply)
                    await reply.remove()
                self._in_flight = None
                self._answered = False
                self.busy = False

    async def _wait_for_a_pause(self) -> None:
        """Wait while the user types in another pane, the indicator saying the answer is ready."""
        if self.typing.typing_elsewhere(self.prompt):
            working = self.query_one(".working", Static)
            working.update(self.READY, layout=working.content_size.width < len(self.READY))
            await self.typing.pause(self.prompt)

    @property
    def turn_group(self) -> str:
        return f"{self.agent}-turn"

    def action_cancel(self) -> None:
        self.app.workers.cancel_group(self.app, self.turn_group)

    # -- what the pane shows ---------------------------------------------------------------

    async def notice(self, text: str, *, kind: str = "info") -> None:
        await self._show(Notice(text, kind=kind))

    async def batch_refused(self, reasons: Iterable[str]) -> None:
        """Says, beside the turn's reply, that memory refused the batch: the reply was written before
        the check, so it may use the refused values, and it confirms nothing."""
        why = "; ".join(reasons) or "the batch failed the host's checks"
        await self.notice(
            f"Batch refused ({why}): the facts were not changed, whatever the reply above assumed.", kind="error"
        )

    async def _show(self, *widgets: Widget) -> None:
        """Mount at the bottom; beyond MAX_SHOWN messages the oldest leave the screen (not the history)."""
        await self.conversation.mount_all(widgets)
        shown = [w for w in self.conversation.children if not isinstance(w, HiddenNote | Hint)]
        excess = len(shown) - self.MAX_SHOWN
        if excess <= 0:
            return
        self._hidden += excess
        await self.conversation.remove_children(shown[:excess])
        note = self.conversation.query(HiddenNote)
        if note:
            note.first().count = self._hidden
        else:
            await self.conversation.mount(HiddenNote(self._hidden), before=0)

    async def replace_history(self, reason: str) -> None:
        """The agent's history was replaced: clear what it no longer holds. A reply still streaming
        stays (its turn finishes on the old session); a turn already answered, its answer waiting
        for a pause in typing, was in the history replaced, so it goes, and its answer is not drawn."""
        if self._answered:
            self._in_flight = None
        keep = set(self._in_flight or ())
        self._hidden = 0
        self.prompt.history.clear()  # the undo history holds what was sent, forgotten values included
        await self.conversation.remove_children([w for w in self.conversation.children if w not in keep])
        notice = Notice(reason, kind="replaced")
        if self.conversation.children:
            await self.conversation.mount(notice, before=0)
        else:
            await self.conversation.mount(notice)
