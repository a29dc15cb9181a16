"""F2's picture of a request: one bar per turn, split into instructions, the facts block, history
and the current message, so history growing beside a flat facts block shows at a glance."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from rich.text import Text
from textual.geometry import Size
from textual.widget import Widget

from workbench.session.views import UNKNOWN

if TYPE_CHECKING:
    from workbench.session.views import ContextSplit

PART_STYLES = (
    ("instructions", "blue"),
    ("facts block", "green"),
    ("history", "yellow"),
    ("current message", "magenta"),
)
LABEL_WIDTH = 8  # "turn 12 "


def bar(split: ContextSplit, width: int, scale: int) -> Text:
    """`split` as `width` cells at most, a part's length in proportion to its characters / `scale`."""
    text = Text()
    cells = max(1, round(width * split.chars / scale)) if scale else 0
    used = 0
    for index, ((_name, style), chars) in enumerate(zip(PART_STYLES, split.parts, strict=True)):
        last = index == len(PART_STYLES) - 1
        share = cells - used if last else round(cells * chars / split.chars) if split.chars else 0
        if chars and share == 0 and used < cells:
            share = 1  # a part that is there is never invisible
        share = min(share, cells - used)
        text.append("█" * share, style=style)
        used += share
    return text


def _reported(split: ContextSplit) -> str:
    return UNKNOWN if split.reported_input is None else f"{split.reported_input:,}"


def render_context(splits: Sequence[ContextSplit], width: int) -> Text:
    """The last request's parts and the recent turns to one scale (`splits` holds at least one)."""
    last = splits[-1]
    out = Text()
    out.append(f"Context of the last request (turn {last.turn})\n", style="bold")
    out.append_text(bar(last, max(10, width), last.chars))
    out.append("\n")
    for (name, style), chars in zip(PART_STYLES, last.parts, strict=True):
        out.append("■ ", style=style)
        out.append(f"{name} {chars:,}  ")
    out.append(
        f"\n= {last.chars:,} characters · ~{last.estimate:,} tokens (characters/4, an estimate) · "
        f"reported input tokens: {_reported(last)}\n\n"
    )
    out.append("Recent turns, to one scale", style="bold")
    out.append(" (characters; ~estimate; reported input tokens)\n", style="dim")
    scale = max(s.chars for s in splits)
    numbers = [f" {s.chars:,} ~{s.estimate:,} rep {_reported(s)}" for s in splits]
    room = max(10, width - LABEL_WIDTH - max(len(n) for n in numbers))
    for split, figures in zip(splits, numbers, strict=True):
        out.append(f"turn {split.turn if split.turn is not None else '-':<3}", style="dim")
        out.append_text(bar(split, room, scale))
        out.append(f"{figures}\n")
    out.rstrip()
    return out


class ContextBar(Widget):
    """Draws the bars for its own width, of at least one request (`splits`)."""

    def __init__(self, splits: Sequence[ContextSplit]) -> None:
        super().__init__(id="context-bar")
        self.splits = splits

    def render(self) -> Text:
        return render_context(self.splits, self.content_size.width)

    def get_content_height(self, container: Size, viewport: Size, width: int) -> int:
        return len(render_context(self.splits, width).wrap(self.app.console, width))
