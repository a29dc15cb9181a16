"""The lines of a pane's conversation besides the agent's answers (`workbench.ui.replies`): the user's
messages, the workbench's notices, the pane's hint, and the note that earlier messages left the screen.
A line that can leave the screen keeps what draws it again (`Shown`)."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Protocol, runtime_checkable

from textual.message import Message
from textual.reactive import reactive
from textual.widget import Widget
from textual.widgets import Static

from workbench.session.views import literal


@runtime_checkable
class Shown(Protocol):
    """A message in a pane that can leave the screen and be drawn again from what it keeps."""

    def again(self) -> Callable[[], Widget]: ...


class UserMessage(Static):
    def __init__(self, text: str) -> None:
        super().__init__(literal(text), markup=False)
        self.text = text

    def again(self) -> Callable[[], Widget]:
        return partial(UserMessage, self.text)


class Notice(Static):
    """A line from the workbench itself (memory snapshots, errors, history replaced)."""

    def __init__(self, text: str, *, kind: str = "info") -> None:
        super().__init__(literal(text), markup=False, classes=f"-{kind}")
        self.text, self.kind = text, kind

    def again(self) -> Callable[[], Widget]:
        return partial(Notice, self.text, kind=self.kind)


class ResumedOpening(Notice):
    """The divider above a resumed conversation. It stays at the top, with the hint, whatever the
    window: the resumed messages behind the hidden note come back below it, where they belong."""


class Hint(Static):
    """What a pane is for, shown until its first forget or mode switch."""

    def __init__(self, text: str) -> None:
        super().__init__(text, markup=False)


class HiddenNote(Static):
    """Says how many earlier messages left the screen to keep the pane fast; a click shows more."""

    count: reactive[int] = reactive(0)
    more: reactive[int] = reactive(0)  # how many a click brings back

    class ShowMore(Message):
        """The user asked to see earlier messages again."""

    def __init__(self, count: int, more: int) -> None:
        super().__init__(markup=False)
        self.set_reactive(HiddenNote.count, count)
        self.set_reactive(HiddenNote.more, more)

    def render(self) -> str:
        again = f" Click here to show {self.more} more." if self.more else ""
        return f"{self.count} earlier message(s) are not shown here; the agent's history still holds them.{again}"

    def on_click(self) -> None:
        if self.more:
            self.post_message(self.ShowMore())
