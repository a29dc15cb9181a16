"""The key=value contract: which keys exist, how big things may be, and how a message is read.

Only explicit declarations in the current user message can become facts. This module
reads a message deterministically; nothing here guesses what the user meant.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

from workbench.text import LONE_SURROGATE

ALLOWED_KEYS: frozenset[str] = frozenset(
    {
        "product",
        "module",
        "priority",
        "database",
        "constraint",
        "customer",
        "version",
        "environment",
        "symptom",
        "log",
    }
)
MAX_FACTS = 5
MAX_VALUE_CHARS = 256
MAX_EVIDENCE_CHARS = 512
MAX_MESSAGE_CHARS = 4096

_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
# Where one declaration ends. Captured, so a split keeps the separators and can be joined back.
SEGMENT_SEPARATOR = re.compile(r"(;|\r\n|\n)")
# Characters a person reads as part of a word even though they are not ASCII identifier
# characters: letters and digits of any script, joiners, combining marks, zero-width formats.
_WORDLIKE_CATEGORIES = frozenset({"Lu", "Ll", "Lt", "Lm", "Lo", "Nd", "Nl", "No", "Pc", "Mn", "Mc", "Cf"})


@dataclass(frozen=True)
class Segment:
    """One declaration as written: its key, its trimmed value and the trimmed text it came from."""

    key: str
    value: str
    text: str


@dataclass(frozen=True)
class ParsedMessage:
    """What one user message declares.

    `declarations` follows the contract (last declaration of a key wins). `lookalike_keys`
    holds keys that read like identifiers to a person but are not ASCII identifiers
    (`m\u043edule`, an o that is Cyrillic; `module` followed by a zero-width space): they declare
    nothing, and admission rejects them by name instead of ignoring them.
    """

    declarations: dict[str, str]
    segments: dict[str, Segment]
    lookalike_keys: tuple[str, ...]

    @property
    def declares_anything(self) -> bool:
        return bool(self.declarations or self.lookalike_keys)


def is_identifier(text: str) -> bool:
    return _IDENTIFIER.fullmatch(text) is not None


def _looks_like_identifier(text: str) -> bool:
    return bool(text) and all(unicodedata.category(ch) in _WORDLIKE_CATEGORIES for ch in text)


def parse_message(text: str) -> ParsedMessage:
    if "=" not in text:  # most messages of a long conversation: nothing to split
        return ParsedMessage(declarations={}, segments={}, lookalike_keys=())
    segments: dict[str, Segment] = {}
    lookalikes: list[str] = []
    for raw in SEGMENT_SEPARATOR.split(text):  # separators come back too: they hold no `=`
        key_part, sep, value_part = raw.partition("=")
        if not sep:
            continue
        key = key_part.strip()
        if is_identifier(key):
            segments.pop(key, None)  # re-insert so dict order follows the winning declaration
            segments[key] = Segment(key=key, value=value_part.strip(), text=raw.strip())
        elif _looks_like_identifier(key) and key not in lookalikes:
            lookalikes.append(key)
    return ParsedMessage(
        declarations={key: seg.value for key, seg in segments.items()},
        segments=segments,
        lookalike_keys=tuple(lookalikes),
    )


def declares_anything(text: str) -> bool:
    """Whether a message declares something, as admission reads it: a look-alike key (`café=1`)
    declares, and is rejected by name. The one rule for "is this a question?" everywhere."""
    return parse_message(text).declares_anything


def parse_declarations(text: str) -> dict[str, str]:
    """The explicit `key=value` assertions of one user message, unknown keys and empty values included."""
    return parse_message(text).declarations


def unencodable(text: str) -> str | None:
    """Why `text` cannot be stored or sent (it holds half of a surrogate pair, which is not a
    character and has no UTF-8 encoding), in words a person understands; None when it can."""
    found = LONE_SURROGATE.search(text)
    if found is None:
        return None
    return (
        f"the text holds U+{ord(found[0]):04X} at character {found.start() + 1:,}, half of a surrogate pair: "
        "it is not a character and cannot be encoded as UTF-8, so the text was not sent to any model; "
        "copy it again from its source"
    )


def explain_key(key: str) -> str:
    """Why `key` is not an allowed key, naming any invisible or look-alike characters in it
    (the first few: a key is an echo of what a user or model wrote, and echoes are bounded)."""
    foreign = list(dict.fromkeys(ch for ch in key if not (ch.isascii() and (ch.isalnum() or ch == "_"))))
    if foreign:
        names = ", ".join(f"U+{ord(ch):04X} {unicodedata.name(ch, 'unnamed character')}" for ch in foreign[:4])
        more = f" and {len(foreign) - 4:,} other characters" if len(foreign) > 4 else ""
        return f"not an allowed key: it contains {names}{more}; keys are matched character for character"
    return f"not an allowed key (allowed: {', '.join(sorted(ALLOWED_KEYS))})"
