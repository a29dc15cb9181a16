"""The message input: multi-line, Enter sends, pasted lines kept, pasted control and invisible
characters shown."""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass

from textual import events
from textual.message import Message
from textual.reactive import reactive
from textual.strip import Strip
from textual.widgets import TextArea

from workbench.session.views import visible_controls
from workbench.ui.paste import PASTED_ESC

# Where the terminal tells Shift+Enter from Enter, it starts a line too.
_NEW_LINE = ("ctrl+j", "shift+enter")


class Composer(TextArea):
    """Enter sends the message; Ctrl+J (or Shift+Enter, where the terminal tells it from Enter)
    starts a new line. A paste keeps its lines, so a multi-line paste declares every line."""

    # Compact from the start, with its class given at construction: TextArea's own default (False)
    # removes the class and `compact=True` adds it back, each time restyling the unmounted widget.
    compact: reactive[bool] = reactive(True, toggle_class="-textual-compact")

    @dataclass
    class Sent(Message):
        composer: Composer
        text: str

        @property
        def control(self) -> Composer:
            return self.composer

    def __init__(self, placeholder: str) -> None:
        super().__init__(
            soft_wrap=True,
            tab_behavior="focus",
            show_line_numbers=False,
            placeholder=placeholder,
            compact=True,
            classes="prompt -textual-compact",
        )
        self.cursor_blink = False
        # Sent (Enter) and not asked yet, oldest first: the agents were starting, or its pane was answering.
        self.waiting: deque[str] = deque()
        # The message of this pane's last turn that failed, which F9 sends again.
        self.unanswered: str | None = None

    def render_line(self, y: int) -> Strip:
        """Nothing when no column is left inside the input: a terminal narrower than the pane, or a
        frame laid out before a resize's breakpoint styles apply. (TextArea wraps its placeholder to
        the content width, and a wrap to width 0 raises ValueError: Textual 8.2.)"""
        if not self.content_size.width:
            return Strip.blank(0)
        return super().render_line(y)

    async def _on_key(self, event: events.Key) -> None:
        """Enter sends and Ctrl+J starts a line, both handled here in the composer's own queue, in
        the order they were typed. (Not bindings: a priority binding runs as the key arrives, ahead of
        the characters still queued for this widget, so a burst such as `priority=high` + Enter would
        send only the first few characters; an ordinary one runs once the key has bubbled up to the
        app, after the characters typed behind it.)"""
        if event.key in _NEW_LINE:
            event.prevent_default()
            event.stop()
            self.insert("\n")
        elif event.key == "enter":
            event.prevent_default()  # TextArea's own handler would insert a newline
            event.stop()
            self.action_send()

    def action_send(self) -> None:
        """Enter: the draft leaves the input at once, and goes up as a message (the app puts back one it
        refuses, `put_back`). Taken when the app had handled it, a draft sent in a burst of typing (Enter,
        the next text, Enter, in one read of the terminal) was sent again with that text glued on: the
        composer handles a burst's keys before the app sees the first Enter. The edit history goes too:
        Ctrl+Z cannot bring back a sent (and maybe since forgotten) text."""
        text = self.text
        if not text.strip():
            return
        self.load_text("")
        self.post_message(self.Sent(self, text))

    def put_back(self, sent: str) -> None:
        """A sent text that was not asked after all, back in front of what was typed after it."""
        self.load_text(sent + self.text)
        self.move_cursor(self.document.end)

    def undo_texts(self) -> list[str]:
        """The text the undo history could bring back: what was typed (and sent) and what edits replaced;
        and the messages sent from here that no turn holds: waiting to be asked, or kept for F9."""
        edits = [edit for batch in (*self.history.undo_stack, *self.history.redo_stack) for edit in batch]
        # Edit._edit_result: the replaced text, which undo restores; Textual keeps it only there.
        replaced = [e._edit_result.replaced_text for e in edits if e._edit_result is not None]
        kept = [*self.waiting, *([self.unanswered] if self.unanswered is not None else [])]
        return ["".join(e.text for e in edits), *replaced, *kept]

    def forget_undo(self) -> int:
        """Clear the undo history, and the messages waiting or kept for F9 (a forget starts both agents
        afresh: none of them is asked after it); returns how many edits and messages it held."""
        held = len(self.history.undo_stack) + len(self.history.redo_stack) + len(self.waiting)
        held += self.unanswered is not None
        self.history.clear()
        self.waiting.clear()
        self.unanswered = None
        return held

    def type_in(self, text: str) -> None:
        """Put text typed elsewhere at the cursor, and take the focus."""
        self.insert(text)
        self.focus()

    def on_paste(self, event: events.Paste) -> None:
        """Insert the paste ourselves (TextArea's own handler is skipped): lines kept, control and
        invisible characters shown as `\\x1b`-style text, and the user told that it happened."""
        event.prevent_default()
        event.stop()
        if self.read_only:
            return
        text, hidden = visible_controls(event.text, escape=PASTED_ESC)
        self.move_cursor(self.replace(text, *self.selection).end_location)
        self.focus()
        if hidden:
            self.notify(
                f"The pasted text held {hidden:,} control or invisible character(s) (such as terminal escape "
                "codes or text-direction marks). They are shown as \\x1b or \\u202e text in your draft and are "
                "not sent as themselves.",
                title="Paste",
                severity="warning",
                markup=False,
            )
