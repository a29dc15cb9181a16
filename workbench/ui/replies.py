"""Agent replies: plain text while streaming, rendered once as Markdown when finished, with nothing of
the text hidden (`shown_markdown`). Imported once the runtime is ready, not before the first frame
(Markdown parsing costs tens of milliseconds to import)."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from functools import partial

from rich.console import Console, ConsoleOptions, RenderableType
from rich.segment import Segment
from rich.text import Text
from textual.css.styles import RulesMap
from textual.strip import Strip
from textual.style import Style
from textual.visual import RenderOptions, RichVisual, Visual
from textual.widget import Widget
from textual.widgets import Static

from workbench.session.views import visible
from workbench.ui.shown_markdown import ShownMarkdown


class AgentReply(Static):
    """An agent's answer while it streams: plain text, redrawn at most REDRAW_HZ times a second
    however fast pieces arrive, and never taller than TAIL_LINES, so typing in the other pane never
    waits on a streaming reply. The reply wraps its own latest lines to its width: once it is
    TAIL_LINES tall its size no longer changes, and a redraw repaints it alone, without a layout of
    the screen. (A reply that grew with its text re-laid the screen out at every redraw, about 70 ms
    each: keystroke echo in the other pane went from 12 ms to over 100 ms median. Parsing the stream
    as Markdown, a widget per block, was worse still.)"""

    REDRAW_HZ = 10
    TAIL_LINES = 10  # while streaming only the latest lines are drawn; the whole answer at the end
    TAIL_CHARS = 4000  # enough text to fill TAIL_LINES at any width a pane can have

    def __init__(self) -> None:
        super().__init__("", markup=False)
        self._pieces: list[str] = []
        self._pending = False
        self._shape: tuple[int, int] | None = None  # (width, rows) of the last redraw that asked for a layout

    async def add(self, fragment: str) -> None:
        self._pieces.append(fragment)
        if not self._pending:
            self._pending = True
            self.set_timer(1 / self.REDRAW_HZ, self._redraw)

    def _redraw(self) -> None:
        self._pending = False
        text = "".join(self._pieces)
        self._pieces = [text]
        console, width = self.app.console, max(self.content_size.width, 10)
        # Made visible as a whole, not piece by piece: whether a joiner shows depends on its neighbours.
        lines = Text(visible(text[-self.TAIL_CHARS :]).rstrip("\n")).wrap(console, width)
        if len(lines) > self.TAIL_LINES or len(text) > self.TAIL_CHARS:
            # Wrapped like the text, so every row is one line on screen: in a narrow pane the banner
            # takes two or three, and the reply must still end with the newest line, not lose it below.
            banner = Text(f"[... {len(text):,} characters so far; the whole answer shows when it is done]", "dim")
            rows = banner.wrap(console, width)
            shown = [*rows, *lines[-max(self.TAIL_LINES - len(rows), 1) :]]
        else:
            shown = list(lines)
        # The conversation's stream layout sizes the reply by its content when it lays the screen out,
        # so a layout is needed whenever the rows or the width changed since the last one (after a
        # resize, the layout measured the old rows re-wrapped at the new width).
        shape = (width, len(shown))
        resized = shape != self._shape
        if resized:
            self._shape = shape
            self.styles.height = len(shown)  # grows until TAIL_LINES, then stays: no more layouts
        self.update(Text("\n").join(shown), layout=resized)

    async def close(self) -> None:
        self._pending = False


class PreRendered(Visual):
    """An answer's Markdown rendered ahead at one width and cut into lines, in slices between other
    work (`AgentAnswer.rendered`).

    Textual draws a Rich renderable by rendering it whole and cutting it into lines, more than once
    (to measure its height, to draw it): for a long answer that was a stall of tens of milliseconds
    at the swap, with typing frozen. At the width it was rendered for, these lines are drawn as they
    are, with the widget's style laid over each piece as Textual lays it over any Rich renderable;
    at any other width (the pane was resized) the renderable is drawn as Static would draw it.
    (Rendering in a thread instead still froze typing for 150 to 330 ms: the thread holds the GIL.)"""

    def __init__(self, widget: Widget, renderable: RenderableType, width: int, lines: list[list[Segment]]) -> None:
        self.renderable = renderable
        self.width = width
        self.lines = lines
        self._whole = RichVisual(widget, renderable)

    def render_strips(self, width: int, height: int | None, style: Style, options: RenderOptions) -> list[Strip]:
        if width != self.width:
            return self._whole.render_strips(width, height, style, options)
        lines = self.lines[:height] if height is not None else self.lines
        base = style.rich_style
        if not base:
            return [Strip(line) for line in lines]
        over = base.__add__
        return [Strip([Segment(text, over(piece), None) for text, piece, _ in line]) for line in lines]

    def get_optimal_width(self, rules: RulesMap, container_width: int) -> int:
        return self._whole.get_optimal_width(rules, container_width)

    def get_height(self, rules: RulesMap, width: int) -> int:
        return len(self.lines) if width == self.width else self._whole.get_height(rules, width)


class AgentAnswer(Static):
    """A finished answer: the whole reply rendered once as Markdown in a single widget, so a
    long conversation stays light (a streaming Markdown widget holds one child per block)."""

    SLICE_SECONDS = 0.005

    def __init__(self, text: str, ahead: tuple[ShownMarkdown, int, list[list[Segment]]] | None = None) -> None:
        self.text = visible(text)
        super().__init__(ShownMarkdown(self.text) if ahead is None else PreRendered(self, *ahead))

    def again(self) -> Callable[[], Widget]:
        return partial(AgentAnswer, self.text)

    @classmethod
    async def rendered(cls, text: str, console: Console, options: ConsoleOptions) -> AgentAnswer:
        """The answer with its Markdown parsed in a thread, then rendered and cut into lines on the
        event loop in slices of at most SLICE_SECONDS, so keys typed meanwhile are handled between."""
        options = options.update(highlight=False)
        markdown = await asyncio.to_thread(ShownMarkdown, visible(text))
        width = options.max_width
        lines: list[list[Segment]] = []
        pause_at = time.perf_counter() + cls.SLICE_SECONDS
        pieces = console.render(markdown, options)
        for line in Segment.split_and_crop_lines(pieces, width, include_new_lines=False, pad=False):
            lines.append(line)
            if time.perf_counter() > pause_at:
                await asyncio.sleep(0)
                pause_at = time.perf_counter() + cls.SLICE_SECONDS
        return cls(text, (markdown, width, lines))
