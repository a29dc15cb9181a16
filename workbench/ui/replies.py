"""Agent replies: Markdown while streaming, one light widget once finished. Imported at the first
turn, not at start-up (Markdown parsing costs tens of milliseconds to import)."""

from __future__ import annotations

from rich.markdown import Markdown as RichMarkdown
from textual.widgets import Markdown, Static
from textual.widgets.markdown import MarkdownStream

from workbench.memory.shown import visible


class AgentReply(Markdown):
    """An agent's answer while it streams: Markdown fed with deltas."""

    def __init__(self) -> None:
        super().__init__("")
        self._stream: MarkdownStream | None = None

    async def add(self, fragment: str) -> None:
        if self._stream is None:
            self._stream = Markdown.get_stream(self)
        await self._stream.write(visible(fragment))

    async def close(self) -> None:
        if self._stream is not None:
            await self._stream.stop()
            self._stream = None


class AgentAnswer(Static):
    """A finished answer: the whole reply rendered once as Markdown in a single widget, so a
    long conversation stays light (a streaming Markdown widget holds one child per block)."""

    def __init__(self, text: str) -> None:
        self.text = visible(text)
        super().__init__(RichMarkdown(self.text))
