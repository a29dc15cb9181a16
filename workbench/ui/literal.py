"""Text from people and models, made safe to show as it was written."""

from __future__ import annotations

from rich.text import Text

from workbench.memory.shown import visible


def literal(text: str, style: str = "") -> Text:
    """A Rich Text that shows `[bold]`, `[link=...]` and escapes as the characters they are."""
    return Text(visible(text), style=style)
