"""How values and quotations are shown to people: as typed, with only the characters a person
cannot see made visible. One style for every surface (fact table, change box, ledger, `mem`,
confirmations, the CLI): a value in double quotes, nothing inside it escaped."""

from __future__ import annotations

import unicodedata

from workbench.text import cut_marker, visible

__all__ = ["quoted", "visible", "visible_controls"]


def _shown(ch: str) -> str:
    return f"\\x{ord(ch):02x}" if ord(ch) < 0x100 else f"\\u{ord(ch):04x}"


def quoted(text: str, limit: int | None = None) -> str:
    """A value or quotation as a person typed it, in double quotes: `"O'Brien \\ Sons"`. With `limit`,
    at most that many characters of `text` are quoted; the cut marker stands outside the quotes, so
    it cannot be read as part of the value."""
    if limit is None or len(text) <= limit:
        return f'"{visible(text)}"'
    return f'"{visible(text[:limit])}"{cut_marker(len(text))}'


def visible_controls(text: str, *, escape: str = "\x1b") -> tuple[str, int]:
    """Text for an input: line ends as `\\n`, other control characters shown as `\\xNN` text (so a
    paste can neither scramble the text around them nor smuggle escape sequences), and how many
    were shown that way. `escape` is read as ESC too (the terminal reader's stand-in for it)."""
    text = text.replace("\r\n", "\n").replace("\r", "\n").replace(escape, "\x1b")
    count = sum(1 for ch in text if ch not in "\n\t" and unicodedata.category(ch) == "Cc")
    if not count:
        return text, 0
    return "".join(_shown(ch) if ch not in "\n\t" and unicodedata.category(ch) == "Cc" else ch for ch in text), count
