"""How values and quotations are shown to people: as typed, with only the characters a person
cannot see made visible. One style for every surface (fact table, change box, ledger, `mem`,
confirmations, the CLI): a value in double quotes, nothing inside it escaped."""

from __future__ import annotations

from workbench.text import cut_marker, hidden_count, visible

__all__ = ["quoted", "visible_controls"]


def quoted(text: str, limit: int | None = None) -> str:
    """A value or quotation as a person typed it, in double quotes on one line: `"O'Brien \\ Sons"`,
    a line break or a tab inside shown as `\\n`, `\\t` (what `visible` keeps as layout). With `limit`, at
    most that many characters of `text` are quoted; the cut marker stands outside the quotes, so it
    cannot be read as part of the value."""
    cut = limit is not None and len(text) > limit
    inner = visible(text[:limit] if cut else text).replace("\n", "\\n").replace("\t", "\\t")
    return f'"{inner}"{cut_marker(len(text))}' if cut else f'"{inner}"'


def visible_controls(text: str, *, escape: str = "\x1b") -> tuple[str, int]:
    """Text for an input: line ends as `\\n`, other control and invisible characters shown as `visible`
    shows them (`\\x1b`, `\\u202e`: a paste can neither scramble the text around them, smuggle escape
    sequences nor hide words), and how many were shown that way. `escape` is read as ESC too (the
    terminal reader's stand-in for it)."""
    text = text.replace("\r\n", "\n").replace("\r", "\n").replace(escape, "\x1b")
    count = hidden_count(text)
    return (visible(text), count) if count else (text, 0)
