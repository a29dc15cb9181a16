"""Agent replies: plain text while streaming, rendered once as Markdown when finished. Imported at the
first turn, not at start-up (Markdown parsing costs tens of milliseconds to import)."""

from __future__ import annotations

from rich.markdown import Markdown as RichMarkdown
from rich.text import Text
from textual.widgets import Static

from workbench.memory.shown import visible


class AgentReply(Static):
    """An agent's answer while it streams: plain text, redrawn at most REDRAW_HZ times a second
    however fast pieces arrive, so typing in the other pane never waits on a streaming reply.
    (Parsing the stream as Markdown mounted a widget per block and re-laid the pane out each
    time: keystroke echo went from about 12 ms to over 200 ms while a long reply streamed.)"""

    REDRAW_HZ = 10
    TAIL_CHARS = 1500  # while streaming only the latest text is drawn; the whole answer at the end

    def __init__(self) -> None:
        super().__init__("", markup=False)
        self._pieces: list[str] = []
        self._pending = False

    async def add(self, fragment: str) -> None:
        self._pieces.append(visible(fragment))
        if not self._pending:
            self._pending = True
            self.set_timer(1 / self.REDRAW_HZ, self._redraw)

    def _redraw(self) -> None:
        self._pending = False
        text = "".join(self._pieces)
        self._pieces = [text]
        if len(text) > self.TAIL_CHARS:
            start = len(text) - self.TAIL_CHARS
            line = text.find("\n", start)
            tail = text[line + 1 :] if line >= 0 else text[start:]
            text = f"[... {len(text):,} characters so far; the whole answer shows when it is done]\n{tail}"
        self.update(Text(text))

    async def close(self) -> None:
        self._pending = False


class AgentAnswer(Static):
    """A finished answer: the whole reply rendered once as Markdown in a single widget, so a
    long conversation stays light (a streaming Markdown widget holds one child per block)."""

    def __init__(self, text: str) -> None:
        self.text = visible(text)
        super().__init__(RichMarkdown(self.text))
