"""The key=value contract: which keys exist, how big things may be, and how a message is read.

Only explicit declarations in the current user message can become facts. This module
reads a message deterministically; nothing here guesses what the user meant.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

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
_SEGMENT_SEPARATOR = re.compile(r";|\r\n|\n")
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
    segments: dict[str, Segment] = {}
    lookalikes: list[str] = []
    for raw in _SEGMENT_SEPARATOR.split(text):
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


def parse_declarations(text: str) -> dict[str, str]:
    """The explicit `key=value` assertions of one user message, unknown keys and empty values included."""
    return parse_message(text).declarations


def explain_key(key: str) -> str:
    """Why `key` is not an allowed key, naming any invisible or look-alike characters in it."""
    foreign = [ch for ch in key if not (ch.isascii() and (ch.isalnum() or ch == "_"))]
    if foreign:
        names = ", ".join(
            f"U+{ord(ch):04X} {unicodedata.name(ch, 'unnamed character')}" for ch in dict.fromkeys(foreign)
        )
        return f"not an allowed key: it contains {names}; keys are matched character for character"
    return f"not an allowed key (allowed: {', '.join(sorted(ALLOWED_KEYS))})"
