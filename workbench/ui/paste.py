"""Bracketed paste that survives escape codes inside the pasted text.

Textual 8.2's xterm parser reads an ESC inside a bracketed paste as the start of a key sequence:
the bytes after it come out as key presses, ahead of the paste, and the paste keeps only what came
before (`^[31mRED^[0m after bellsymptom=before`). This parser hands Textual's parser the same input
with every ESC inside a paste (other than the closing `ESC[201~`) replaced by PASTED_ESC, a
private-use character, so the paste arrives whole; the composer shows it as `\\x1b` and says so.
It is installed by replacing the parser class the Linux driver instantiates (there is no public
hook for the driver's parser); everything else is Textual's own parsing.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable

from textual._xterm_parser import XTermParser
from textual.message import Message

ESC = "\x1b"
PASTE_START = "\x1b[200~"
PASTE_END = "\x1b[201~"
PASTED_ESC = "\U000f001b"  # supplementary private use: never typed, never in a real paste


def _partial_end(text: str) -> int:
    """How many trailing characters of `text` could begin PASTE_END (held until more input)."""
    for size in range(min(len(text), len(PASTE_END) - 1), 0, -1):
        if PASTE_END.startswith(text[-size:]):
            return size
    return 0


class PasteSafeParser(XTermParser):
    def __init__(self, debug: bool = False) -> None:
        super().__init__(debug)
        self._in_paste = False
        self._held = ""  # a possible start of PASTE_END, split across reads
        self._tail = ""  # the last characters outside a paste, to find a PASTE_START split across reads

    def feed(self, data: str) -> Iterable[Message]:
        if not data:  # end of input: flush what was held, then Textual's end of file
            held, self._held = self._held, ""
            return [*(super().feed(held) if held else ()), *super().feed("")]
        guarded = self._guard(data)
        return super().feed(guarded) if guarded else ()

    def _guard(self, data: str) -> str:
        text, self._held = self._held + data, ""
        out: list[str] = []
        i = 0
        while i < len(text):
            if not self._in_paste:
                window = self._tail + text[i:]
                found = window.find(PASTE_START)
                if found < 0:
                    out.append(text[i:])
                    self._tail = window[-(len(PASTE_START) - 1) :]
                    break
                after = found - len(self._tail) + len(PASTE_START)
                out.append(text[i : i + after])
                i += after
                self._in_paste, self._tail = True, ""
            else:
                end = text.find(PASTE_END, i)
                if end < 0:
                    body = text[i:]
                    keep = _partial_end(body)
                    out.append(body[: len(body) - keep].replace(ESC, PASTED_ESC))
                    self._held = body[len(body) - keep :]
                    break
                out.append(text[i:end].replace(ESC, PASTED_ESC) + PASTE_END)
                i = end + len(PASTE_END)
                self._in_paste = False
        return "".join(out)


def install_paste_guard() -> None:
    """Make the Linux (POSIX) driver read input with PasteSafeParser (idempotent)."""
    if sys.platform != "win32":
        import textual.drivers.linux_driver as linux_driver

        linux_driver.XTermParser = PasteSafeParser  # type: ignore[attr-defined]  # swap in our parser: the driver reads it by this name
