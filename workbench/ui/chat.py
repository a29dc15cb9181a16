"""One agent's pane: its conversation, a working indicator, a composer, and its turns: each one asked
of the session by the pane's own worker, drawn here (start, stream, finish, fail, cancel), and posted
up to the app when it ends (TurnEnded)."""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Awaitable, Callable, Coroutine, Iterable
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING, Any, Protocol

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.content import Content
from textual.message import Message
from textual.reactive import reactive, var
from textual.widget import Widget
from textual.widgets import Static
from textual.worker import Worker, WorkerState

from workbench.session.views import Usage, describe_usage, visible
from workbench.ui.chat_lines import HiddenNote, Hint, Notice, ResumedOpening, Shown, UserMessage
from workbench.ui.composer import Composer
from workbench.ui.messages import Streamed, TurnEnded
from workbench.ui.startup import error_line
from workbench.ui.typing import PauseScheduler, TypingClock

if TYPE_CHECKING:
    from textual.widget import AwaitMount

    from workbench.session.controller import TurnOutcome
    from workbench.session.views import PaneView, ResumedHistory
    from workbench.ui.replies import AgentReply


UNCHANGED = "Facts and history are unchanged."
SEND_AGAIN = "F9 sends your message again."
# A turn ended without an answer after its batch was admitted (by Esc or a memory's failed call after extraction).
UNFINISHED_APPLIED = (
    "{ended} Its facts were admitted before it ended and stay (click one in the panel to forget it);"
    " the history is unchanged."
)
# The built-in agents' panes: title, placeholder, and what the pane is for.
PANES = {
    "support": (
        "support agent",
        "Ask support · Ctrl+J new line",
        "The support agent helps with product problems. "
        "Declare what you know as key=value, e.g. module=Reporting; database=PostgreSQL. F1 shows help.",
    ),
    "logs": (
        "logs agent",
        "Ask about logs · Ctrl+J new line",
        "The logs agent says where logs live and how to read "
        "them. It has its own history and shares only the facts, e.g. ask: Where can I find logs?",
    ),
}
BUILT_IN = tuple(PANES)


def pane_words(agent: str) -> tuple[str, str, str]:
    """A pane's title, placeholder and hint: the built-in agents' own, or those of any agent by its name."""
    return PANES.get(agent) or (
        agent,
        "Ask · Ctrl+J new line",
        f"{agent}: your agent as you built it, with the working memory added. Declare facts as key=value, "
        "e.g. module=Reporting; the agents share them. F1 shows help.",
    )


class Asker(Protocol):
    """What a pane asks of the session (the SessionController) to run its turns."""

    async def ask(
        self, agent: str, text: str, on_text: Callable[[str], Awaitable[None] | None] | None = None
    ) -> TurnOutcome: ...

    def pane(self, agent: str) -> PaneView: ...


class ChatPane(Vertical):
    """One agent's conversation. Sends what the user typed up (`Submitted`); runs the turn the app
    accepts (`ask`) as its own worker, whose Streamed pieces and TurnEnded it draws, and lets TurnEnded
    bubble on to the app. Esc cancels its turn. A finished answer is drawn in a pause in typing
    elsewhere (`scheduler`)."""

    # Messages drawn as widgets: each one more makes every layout of the screen slower, so older ones
    # leave the screen (a 1,000-message pane appends as fast as a short one), kept to show again on a
    # click (MAX_KEPT of them, SHOW_MORE at a time); the agent's history holds them all.
    MAX_SHOWN = 20
    MAX_KEPT = 1000
    SHOW_MORE = 20
    WORKING = "working... (Esc cancels)"
    READY = "ready: shown when you stop typing"  # answered; drawn in a pause in typing elsewhere

    BINDINGS = [
        Binding("escape", "cancel", "Cancel turn", id="cancel_turn"),
        # Not in the footer (no room at 80 columns): the notice of the turn that failed names it.
        Binding("f9", "send_again", "Send again", id="send_again", show=False),
    ]

    busy: reactive[bool] = reactive(False)
    turns: reactive[int] = reactive(0)
    # None (unknown) until a turn ends with what its calls reported: during the first turn no call has
    # reported anything, and "0 in / 0 out" would say the provider counted nothing.
    usage: reactive[Usage | None] = reactive(None)
    answered: var[bool] = var(False)  # the turn in flight has its answer (stored): it is being drawn

    @dataclass
    class Submitted(Message):
        """`text` sent: the draft (Enter), or with `again` the message of a turn that failed (F9)."""

        pane: ChatPane
        text: str
        again: bool = False

        @property
        def control(self) -> ChatPane:
            return self.pane

    @dataclass
    class Free(Message):
        """The pane's turn is over and drawn: the next message waiting for it can be asked."""

        pane: ChatPane

        @property
        def control(self) -> ChatPane:
            return self.pane

    def __init__(
        self,
        agent: str,
        *,
        title: str,
        placeholder: str,
        hint: str,
        scheduler: PauseScheduler | None = None,
        focused: bool = False,
        id: str | None = None,
        kind: str = "agent",
    ) -> None:
        """`focused`: the pane the focus starts in, drawn as focused from its first frame. `title` is
        shown as given (an agent's name is not markup). `kind`: what answers in it, "agent" or "workflow"
        (a failure says "the pair_flow workflow's run failed")."""
        super().__init__(id=id, classes="chat-pane -focused" if focused else "chat-pane")
        self.agent = agent
        self.kind = kind
        self.scheduler = scheduler or PauseScheduler(TypingClock(), self._run_lane)
        self.border_title = Content(title)
        self._placeholder = placeholder
        self._hint = hint
        self._in_flight: tuple[UserMessage, AgentReply] | None = None
        self._turn_open = False  # from a turn's start until its end is drawn (`Free` is posted then)
        # The turn its worker has not run yet (a worker cancelled before it runs runs nothing of it).
        self._unasked: Coroutine[Any, Any, None] | None = None
        self._hidden = 0
        self._earlier: deque[Callable[[], Widget]] = deque(maxlen=self.MAX_KEPT)  # hidden, newest last
        self._window = self.MAX_SHOWN

    def _run_lane(self, work: Coroutine[Any, Any, None], lane: str) -> None:
        """Without the app's scheduler (a pane on its own), its drawing still runs as the app's worker."""
        self.app.run_worker(work, group=lane, exit_on_error=False)

    def compose(self) -> ComposeResult:
        with VerticalScroll(classes="conversation"):
            yield Hint(self._hint)
        yield Static(self.WORKING, classes="working")
        yield Composer(self._placeholder)

    # The pane the user types in has its own border. A class, not `:focus-within`: with that pseudo-class
    # the pane, messages and input were all styled again when the focus first landed, at start-up.
    def on_descendant_focus(self) -> None:
        self.add_class("-focused")

    def on_descendant_blur(self) -> None:
        self.remove_class("-focused")

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

    @property
    def turn_group(self) -> str:
        """The worker group of this pane's turns and of its answer waiting to be drawn."""
        return f"{self.agent}-turn"

    def watch_busy(self, busy: bool) -> None:
        # The indicator's own display, not a class on the pane: a class would restyle every message.
        working = self.query_one(".working", Static)
        working.display = busy
        if busy and working.content != self.WORKING:
            working.update(self.WORKING)

    def _update_subtitle(self) -> None:
        """The turns since start and their tokens; where the border is too narrow for all of it, the
        words go before the token count does (at 140 columns it read "tokens un…")."""
        tokens = f"{describe_usage(self.usage)} tokens" if self.usage is not None else "tokens unknown"
        plural = "" if self.turns == 1 else "s"
        turns = f"{self.turns} turn{plural}"
        if not self.turns:
            self.border_subtitle = f"since start: {turns}"
            return
        forms = (f"since start: {turns} · {tokens}", f"{turns} · {tokens}", tokens)
        room = self.size.width - 4  # the corners and a space either side
        self.border_subtitle = next((f for f in forms if len(f) <= room), forms[-1]) if room > 0 else forms[0]

    def on_resize(self) -> None:
        self._update_subtitle()

    def watch_turns(self) -> None:
        self._update_subtitle()

    def watch_usage(self) -> None:
        self._update_subtitle()

    @on(Composer.Sent)
    def _sent(self, event: Composer.Sent) -> None:
        event.stop()
        self.post_message(self.Submitted(self, event.text))

    def action_cancel(self) -> None:
        """Esc: cancel this pane's turn, and draw at once its answer waiting for a pause in typing."""
        for worker in [w for w in self.app.workers if w.group == self.turn_group]:
            worker.cancel()
        if self._unasked is not None:  # cancelled before its worker ran: nothing was asked
            self._unasked.close()
            self._unasked = None
            self.post_message(TurnEnded(self.agent, None, cancelled=True, usage=self.usage))

    @property
    def free(self) -> bool:
        """No turn of this pane is open: the next message can be asked now."""
        return not self._turn_open

    def action_send_again(self) -> None:
        """F9: send the message of the turn that failed again, as it was (the draft stays as it is)."""
        text, self.prompt.unanswered = self.prompt.unanswered, None
        if text is not None:
            self.post_message(self.Submitted(self, text, again=True))

    @property
    def running(self) -> bool:
        """Whether a turn of this pane runs, or its answer waits to be drawn."""
        return self.busy or any(w.group == self.turn_group and not w.is_finished for w in self.app.workers)

    # -- the turn: asked by the pane's worker, drawn as its messages arrive ----------------

    async def ask(self, session: Asker, text: str) -> None:
        """Run `text` as this agent's turn: drawn from here on, asked of `session` by a worker. Its failure
        ends in `_worker_changed`; its end is TurnEnded, drawn here and then the app's."""
        await self.begin(text)
        self._unasked = work = self._turn(session, text)
        self.run_worker(work, name=f"{self.agent} turn", group=self.turn_group, exit_on_error=False)

    async def begin(self, text: str) -> None:
        """Draw the start of a turn of `text` (it left the draft when it was sent): its reply streams below it."""
        from workbench.ui.replies import AgentReply  # loaded once the runtime is ready, not before the first frame

        self._turn_open = True
        self.turns += 1
        self.busy = True
        self._in_flight = (UserMessage(text), AgentReply())
        await self._show(*self._in_flight)

    async def _turn(self, session: Asker, text: str) -> None:
        self._unasked = None
        outcome: TurnOutcome | None = None
        cancelled = False
        try:
            outcome = await session.ask(self.agent, text, self._stream)
        except asyncio.CancelledError:
            cancelled = True
            raise
        finally:
            pane = session.pane(self.agent)
            applied = outcome is None and pane.applied_unfinished
            self.post_message(TurnEnded(self.agent, outcome, cancelled, pane.usage, applied))

    def _stream(self, piece: str) -> None:
        self.post_message(Streamed(piece))

    @on(Worker.StateChanged)
    async def _worker_changed(self, event: Worker.StateChanged) -> None:
        """The turn's unexpected failure: shown here and as a notification, logged; the app keeps running."""
        if event.state is WorkerState.ERROR:
            await self.failed(event.worker)

    async def failed(self, worker: Worker[object]) -> None:
        """`worker`, of this pane's turn (its asking, or its answer's drawing), failed unexpectedly."""
        detail = error_line(worker.error)
        self.log.error(f"worker {worker.name!r} failed", worker.error)
        self.notify(detail, title=f"{worker.name or 'A task'} failed unexpectedly", severity="error", markup=False)
        await self.notice(
            f"This turn stopped on an unexpected error: {detail}. The app keeps running; the ledger says what "
            "memory did.",
            kind="error",
        )

    @on(Streamed)
    async def _streamed(self, event: Streamed) -> None:
        event.stop()
        if self._in_flight is not None:
            await self._in_flight[1].add(event.text)

    @on(TurnEnded)
    async def _ended(self, event: TurnEnded) -> None:
        """Draw the end of the turn; the message goes on to the app, which draws memory."""
        outcome = event.outcome
        reply = self._in_flight[1] if self._in_flight is not None else None
        if reply is not None:
            await reply.close()
        self.usage = event.usage
        if outcome is not None and outcome.result.ok:
            self.answered = True  # in the history now: a forget from here on clears this turn too
            if self.scheduler.typing.typing_elsewhere(self.prompt):
                working = self.query_one(".working", Static)
                working.update(self.READY, layout=working.content_size.width < len(self.READY))
            self.scheduler.later(self.turn_group, self.prompt, partial(self._draw_answer, reply, outcome))
            return
        if self._in_flight is not None:  # nothing the user typed is lost: F9 sends it again
            self.prompt.unanswered = self._in_flight[0].text
        again = f" {SEND_AGAIN}" if self._in_flight is not None else ""
        if event.cancelled and event.applied:
            await self.notice(UNFINISHED_APPLIED.format(ended="Cancelled.") + again, kind="error")
        elif event.cancelled:
            await self.notice(f"Cancelled. Nothing from this turn was stored.{again}", kind="error")
        elif outcome is not None:
            error = outcome.result.error
            ended = f"The {self.agent} {self.kind}'s {'call' if self.kind == 'agent' else 'run'} failed: {error}."
            applied = any(update.outcome.applied for update in outcome.memory)
            await self.notice(
                (UNFINISHED_APPLIED.format(ended=ended) if applied else f"{ended} {UNCHANGED}") + again, kind="error"
            )
            self.notify(visible(error), title=f"{self.agent} {self.kind} failed", severity="error", markup=False)
        elif again:  # stopped by an unexpected error (`failed` says which)
            await self.notice(SEND_AGAIN.capitalize(), kind="error")
        await self._end_turn(reply, None)
        self._turn_over()

    def _turn_over(self) -> None:
        self._turn_open = False
        self.post_message(self.Free(self))

    async def _draw_answer(self, reply: AgentReply | None, outcome: TurnOutcome, hurry: bool) -> None:
        """Replace the streaming reply by the finished answer, run in a pause in typing elsewhere:
        the answer is rendered ahead, in slices, and the swap and the end of the turn are drawn as one
        frame. In a hurry (Esc, a forget) it is drawn plainly, at once."""
        from workbench.ui.replies import AgentAnswer

        text = outcome.result.reply
        answer: AgentAnswer | None = None
        try:
            if not hurry and reply is not None and self._in_flight is not None:
                options = self.app.console_options.update_width(max(reply.content_size.width, 1))
                answer = await AgentAnswer.rendered(text, self.app.console, options)
                await self.scheduler.pause(self.prompt)  # typing again while it rendered: wait once more
        finally:  # Esc while rendering cancels this: the answer is stored, so it is shown all the same
            shown = self._in_flight is not None  # else a forget meanwhile cleared this turn
            await self._end_turn(reply, (answer or AgentAnswer(text)) if shown else None)
            if shown and outcome.refused is not None:
                await self.batch_refused(outcome.refused)
            if shown and outcome.result.unsaved is not None:
                await self.notice(
                    f"This turn was NOT saved: {visible(outcome.result.unsaved)}. It is kept in this run; the next "
                    "save that succeeds writes it.",
                    kind="error",
                )
            if shown and outcome.recalled:
                agents = " and ".join(sorted({r.agent for r in outcome.recalled}))
                await self.notice(
                    f"Recall put {len(outcome.recalled)} earlier message(s) into this turn, from {agents} "
                    "agent history. F2 shows them."
                )
            self._turn_over()

    async def _end_turn(self, reply: AgentReply | None, answer: Widget | None) -> None:
        if not self.is_attached:  # the app is closing
            return
        with self.app.batch_update():
            if self._in_flight is not None and reply is not None:
                if answer is not None:
                    await self.conversation.mount(answer, before=reply)
                await reply.remove()
            self._in_flight = None
            self.answered = False
            self.busy = False

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
        """Mount at the bottom; beyond the window's messages the oldest leave the screen (not the history)."""
        await self.conversation.mount_all(widgets)
        shown = [w for w in self.conversation.children if not isinstance(w, HiddenNote | Hint | ResumedOpening)]
        excess = len(shown) - self._window
        if excess <= 0:
            return
        self._hidden += excess
        self._earlier.extend(w.again() for w in shown[:excess] if isinstance(w, Shown))
        await self.conversation.remove_children(shown[:excess])
        await self._note_hidden()

    async def _note_hidden(self) -> None:
        more = min(self.SHOW_MORE, len(self._earlier))
        note = self.conversation.query(HiddenNote)
        if not self._hidden:
            await note.remove()
        elif note:
            note.first().count, note.first().more = self._hidden, more
        else:
            await self._mount_hidden_note(HiddenNote(self._hidden, more))

    def _mount_hidden_note(self, note: HiddenNote) -> AwaitMount:
        """Below the hint and the resumed conversation's opening, above every message that can leave
        the screen: messages shown again are mounted right after it, in their places."""
        pinned = [w for w in self.conversation.children if isinstance(w, Hint | ResumedOpening)]
        return self.conversation.mount(note, after=pinned[-1]) if pinned else self.conversation.mount(note, before=0)

    @on(HiddenNote.ShowMore)
    async def _show_more(self, event: HiddenNote.ShowMore) -> None:
        """Bring back the latest hidden messages above the shown ones; the window grows to hold them."""
        event.stop()
        back = [self._earlier.pop()() for _ in range(min(self.SHOW_MORE, len(self._earlier)))][::-1]
        self._window += len(back)
        self._hidden -= len(back)
        await self.conversation.mount_all(back, after=self.conversation.query_one(HiddenNote))
        await self._note_hidden()

    def show_resumed(self, history: ResumedHistory) -> None:
        """The agent's resumed conversation between two dividers, drawn as its turns were drawn live:
        the user's text as typed, each answer rendered once. Like live messages, at most MAX_SHOWN
        widgets are mounted; the earlier ones wait behind the hidden note, as live ones do. Mounted at once,
        before any turn of this run can start, so they always come first."""
        from workbench.ui.replies import AgentAnswer

        room = self.MAX_SHOWN - 2  # the two dividers
        shown = history.messages[-room:] if len(history.messages) > room else history.messages
        messages = [UserMessage(m.text) if m.role == "user" else AgentAnswer(m.text) for m in shown]
        self.conversation.mount_all(
            [ResumedOpening(history.opening, kind="resumed"), *messages, Notice(history.closing, kind="resumed")]
        )
        if earlier := history.messages[: len(history.messages) - len(shown)]:
            self._earlier.extend(partial(UserMessage if m.role == "user" else AgentAnswer, m.text) for m in earlier)
            self._hidden += len(earlier)
            self._mount_hidden_note(HiddenNote(self._hidden, min(self.SHOW_MORE, len(self._earlier))))

    async def replace_history(self, reason: str) -> None:
        """The agent's history was replaced: clear what it no longer holds, a turn in flight included.
        Its question and its answer (still streaming, or waiting for a pause in typing) may hold what
        a forget removed: neither is drawn again; the turn itself ends as it would, on the old session."""
        if self._in_flight is not None:
            reason += " The turn under way is not shown: its answer goes to the old session only."
        self._in_flight = None
        self._hidden, self._window = 0, self.MAX_SHOWN
        self._earlier.clear()
        await self.conversation.remove_children(list(self.conversation.children))
        await self.conversation.mount(Notice(reason, kind="replaced"))
