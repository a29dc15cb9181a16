"""Text written by people and models, made safe to keep, send and show.

Three promises, one module, no dependencies (the memory core uses it):
- an echo is bounded: `clip` cuts with a visible marker that gives the original length;
- nothing hides: `visible` shows control and invisible characters as escapes a person can read;
- JSON says exactly the stored value: `escape_json` writes every character that could hide text
  or drive a terminal as a JSON escape (a surrogate pair above U+FFFF), so decoding gives it back.
"""

from __future__ import annotations

import json
import re
import unicodedata
from collections.abc import Iterator
from functools import lru_cache
from typing import Any

# Unicode's Default_Ignorable_Code_Point ranges (DerivedCoreProperties.txt): characters a renderer
# shows as nothing, among them variation selectors (FE00-FE0F, E0100-E01EF) and tag characters
# (E0000-E007F), which can carry a whole hidden text.
_DEFAULT_IGNORABLE = (
    (0x00AD, 0x00AD),
    (0x034F, 0x034F),
    (0x061C, 0x061C),
    (0x115F, 0x1160),
    (0x17B4, 0x17B5),
    (0x180B, 0x180F),
    (0x200B, 0x200F),
    (0x202A, 0x202E),
    (0x2060, 0x206F),
    (0x3164, 0x3164),
    (0xFE00, 0xFE0F),
    (0xFEFF, 0xFEFF),
    (0xFFA0, 0xFFA0),
    (0xFFF0, 0xFFF8),
    (0x1BCA0, 0x1BCA3),
    (0x1D173, 0x1D17A),
    (0xE0000, 0xE0FFF),
)
# Controls, formats, surrogates, private use, unassigned, line and paragraph separators.
_HIDING_CATEGORIES = frozenset({"Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp"})
# Kept raw by `visible` (not by `escape_json`): layout.
_SHOWN_AS_IS = frozenset("\n\t")
_ZWJ, _VS16, _KEYCAP = "\u200d", "\ufe0f", "\u20e3"
# Characters besides symbols that take the emoji presentation selector (emoji-variation-sequences.txt).
_EMOJI_PUNCTUATION = frozenset("\u203c\u2049\u3030\u303d")


# Printable ASCII, newline and tab hide nothing: only the other characters are looked up (a long
# reply is checked in a regex pass, not a Python call per character).
_SUSPECT = re.compile(r"[^\x20-\x7e\n\t]")


@lru_cache(maxsize=4096)
def hides(ch: str) -> bool:
    """Whether `ch` is invisible, a control, or not a character at all."""
    code = ord(ch)
    return unicodedata.category(ch) in _HIDING_CATEGORIES or any(lo <= code <= hi for lo, hi in _DEFAULT_IGNORABLE)


# Half of a surrogate pair: not a character, no UTF-8 encoding (a valid pair is one code point in a str).
LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def mend(text: str) -> str:
    """`text` with each half of a surrogate pair replaced by U+FFFD, as a UTF-8 decoder does."""
    return LONE_SURROGATE.sub("\ufffd", text)


def json_escape_char(ch: str) -> str:
    """`ch` as a JSON escape: `\\uXXXX`, or a surrogate pair above U+FFFF."""
    code = ord(ch)
    if code <= 0xFFFF:
        return f"\\u{code:04x}"
    code -= 0x10000
    return f"\\u{0xD800 + (code >> 10):04x}\\u{0xDC00 + (code & 0x3FF):04x}"


def escape_json(encoded: str, also: str = "") -> str:
    """JSON text (from `json.dumps`) with every hiding character, and those in `also`, escaped.
    `json.dumps` escapes newlines and tabs inside strings, so the raw ones are layout and stay; the
    other characters can only stand inside strings, so the result decodes to the same data."""
    pattern = re.compile(f"{_SUSPECT.pattern}|[{re.escape(also)}]") if also else _SUSPECT
    return pattern.sub(lambda m: json_escape_char(m[0]) if m[0] in also or hides(m[0]) else m[0], encoded)


def dumps(data: Any, *, indent: int | None = 2) -> str:
    """JSON for a terminal or a file: readable unicode, nothing that hides or steers a terminal."""
    return escape_json(json.dumps(data, indent=indent, ensure_ascii=False))


def visible(text: str) -> str:
    """Control and invisible characters as visible escapes (`\\x1b`, `\\u202e`, `\\U000e0041`);
    newlines, tabs and what emoji need are kept: a joiner between two pictographs, a presentation
    selector after one (a joiner between letters, `pa\\u200dss`, is invisible and is escaped)."""
    return _SUSPECT.sub(_shown, text)


def hidden_count(text: str) -> int:
    """How many characters of `text` `visible` shows as escapes."""
    return sum(1 for m in _SUSPECT.finditer(text) if not _kept(m))


def _pictograph(ch: str) -> bool:
    """Whether `ch` can be (part of) an emoji picture: a symbol beyond ASCII, a skin tone included."""
    return ch > "\x7f" and (unicodedata.category(ch) in ("So", "Sk", "Sm") or ch in _EMOJI_PUNCTUATION)


def _kept(match: re.Match[str]) -> bool:
    """Whether `visible` keeps this character raw: it hides nothing, is layout, or joins an emoji
    (a joiner also after a virama, as Indic scripts write conjuncts)."""
    ch = match[0]
    if ch in _SHOWN_AS_IS or not hides(ch):
        return True
    text, start = match.string, match.start()
    before = text[start - 1] if start else ""
    after = text[start + 1] if start + 1 < len(text) else ""
    if ch == _VS16:
        return bool(before) and (_pictograph(before) or (before in "0123456789#*" and after == _KEYCAP))
    if ch == _ZWJ:
        after_virama = bool(before) and unicodedata.combining(before) == 9
        return after_virama or (_pictograph(after) and (before == _VS16 or _pictograph(before)))
    return False


def _shown(match: re.Match[str]) -> str:
    ch = match[0]
    if _kept(match):
        return ch
    code = ord(ch)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}" if code <= 0xFFFF else f"\\U{code:08x}"


def cut_marker(length: int) -> str:
    return f"… [cut: {length:,} characters in all]"


def clip(text: str, limit: int) -> str:
    """`text` if it has at most `limit` characters; otherwise its start and a marker with the
    original length, `limit` characters in all (so clipping twice changes nothing)."""
    if len(text) <= limit:
        return text
    marker = cut_marker(len(text))
    return text[: max(0, limit - len(marker))] + marker


def json_strings(raw: str) -> Iterator[str]:
    """Every string in a JSON or JSON Lines text, unescaped (a value with a quote or a backslash is
    written escaped, so a search of the raw text alone could miss it); a line that is not JSON gives none."""
    for line in raw.splitlines() if "\n" in raw.strip() else [raw]:
        try:
            yield from _strings(json.loads(line))
        except ValueError:
            continue


def _strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for k, v in value.items():
            yield k
            yield from _strings(v)
    elif isinstance(value, list):
        for v in value:
            yield from _strings(v)
