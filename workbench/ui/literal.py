"""Text from people and models, made safe to show as it was written."""

from __future__ import annotations

import unicodedata

from rich.text import Text


def visible(text: str) -> str:
    """Control characters (escape sequences included) as visible `\\xNN` text; newlines and tabs kept."""
    return "".join(
        ch
        if ch in "\n\t" or unicodedata.category(ch) not in {"Cc", "Cf"} or ch == "\u200d"
        else f"\\x{ord(ch):02x}"
        if ord(ch) < 0x100
        else f"\\u{ord(ch):04x}"
        for ch in text
    )


def literal(text: str, style: str = "") -> Text:
    """A Rich Text that shows `[bold]`, `[link=...]` and escapes as the characters they are."""
    return Text(visible(text), style=style)
