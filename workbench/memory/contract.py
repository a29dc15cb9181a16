"""The key=value contract: which keys exist, how big things may be, and how a message is read.

Only explicit declarations in the current user message can become facts. This module
reads a message deterministically; nothing here guesses what the user meant.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from functools import cached_property

from workbench.memory.shown import quoted
from workbench.text import LONE_SURROGATE

# The seed's contract (seed 001): the keys, facts and value length every surface uses unless a team
# declares its own (`Contract`, `workbench.toml` or `--keys`). `qualify`'s fixed suite runs on these.
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

# Bounds on a contract a team declares. A value, its key and `=` must fit one message, and a
# quotation holds its value and at most this much more (the seed's: 256 + 256 = 512).
MAX_KEYS = 32
MAX_KEY_CHARS = 32
MAX_FACTS_LIMIT = 20
MAX_VALUE_CHARS_LIMIT = 4000
# Not a key: a chronology (and an exported conversation) says `"forget": "all"` for a forget of everything.
RESERVED_KEY = "all"
_EVIDENCE_MARGIN = MAX_EVIDENCE_CHARS - MAX_VALUE_CHARS

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


class ContractError(ValueError):
    """A contract that cannot be used, in words (what a workbench.toml or --keys gave wrong)."""


@dataclass(frozen=True)
class Contract:
    """The one owner of the contract's limits: which keys may become facts, how many facts memory holds
    and how long a value may be. The seed's (`SEED`) unless a team declares its own; working memory holds
    the one a run uses, and every surface reads it from there. `keys` is kept sorted and unique."""

    keys: tuple[str, ...]
    max_facts: int = MAX_FACTS
    max_value_chars: int = MAX_VALUE_CHARS

    def __post_init__(self) -> None:
        if not all(isinstance(key, str) for key in self.keys):
            raise ContractError("a contract's keys are text")
        keys = tuple(sorted(set(self.keys)))
        object.__setattr__(self, "keys", keys)
        if problem := self._problem():
            raise ContractError(problem)

    def _problem(self) -> str | None:
        if not 1 <= len(self.keys) <= MAX_KEYS:
            return f"a contract declares 1 to {MAX_KEYS} keys, not {len(self.keys)}"
        for key in self.keys:
            if not (is_identifier(key) and len(key) <= MAX_KEY_CHARS):
                return (
                    f"the key {quoted(key, MAX_KEY_CHARS + 8)} is not an ASCII identifier of at most "
                    f"{MAX_KEY_CHARS} characters (letters, digits and _, not starting with a digit)"
                )
            if key == RESERVED_KEY:
                return f'the key "{RESERVED_KEY}" is reserved: a chronology\'s "forget": "all" forgets everything'

        for name, value, limit in (
            ("max_facts", self.max_facts, MAX_FACTS_LIMIT),
            ("max_value_chars", self.max_value_chars, MAX_VALUE_CHARS_LIMIT),
        ):
            if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= limit:
                return f"{name} is a whole number from 1 to {limit:,}, not {value!r}"
        return None

    @property
    def is_seed(self) -> bool:
        return self == SEED

    @property
    def max_evidence_chars(self) -> int:
        """How long a quotation may be: its value and as much again as the seed allows around one."""
        return self.max_value_chars + _EVIDENCE_MARGIN

    def allows(self, key: str | None) -> bool:
        return key in self.key_set

    @cached_property
    def key_set(self) -> frozenset[str]:
        """Every key, as a set (what a forget of everything removes)."""
        return frozenset(self.keys)

    def describe(self) -> str:
        """The contract in one line, as the header, the help and refusals name it."""
        return (
            f"keys {', '.join(self.keys)}; at most {self.max_facts} facts; "
            f"values of at most {self.max_value_chars:,} characters"
        )

    def admits_all_of(self, other: Contract) -> bool:
        """Whether everything `other` admitted passes this contract too (its keys, as many facts, values
        as long): memory saved under `other` can be opened under this one, nothing left out."""
        return (
            set(other.keys) <= set(self.keys)
            and other.max_facts <= self.max_facts
            and other.max_value_chars <= self.max_value_chars
        )

    def cannot_open(self, saved: Contract) -> str | None:
        """Why memory saved under `saved` cannot be opened under this contract, in words naming both;
        None when it can."""
        if self.admits_all_of(saved):
            return None
        return (
            f"it was saved under the contract ({saved.describe()}), and this start's ({self.describe()}) does "
            "not admit everything that one did; start with the contract it was saved under (workbench.toml or "
            "--keys), or move the folder away to start afresh"
        )

    def explain_key(self, key: str) -> str:
        """Why `key` is not an allowed key, naming any invisible or look-alike characters in it."""
        if foreign := self.foreign_characters(key):
            return f"not an allowed key: {foreign}"
        return f"not an allowed key (allowed: {', '.join(self.keys)})"

    @staticmethod
    def foreign_characters(key: str) -> str | None:
        """The invisible or look-alike characters in `key` named, as every surface says them (the
        message's check, the writer's batch, a forget from the app or a script), or None when it has
        none. The first few: a key is an echo of what a user or model wrote, and echoes are bounded."""
        foreign = list(dict.fromkeys(ch for ch in key if not (ch.isascii() and (ch.isalnum() or ch == "_"))))
        if not foreign:
            return None
        names = ", ".join(f"U+{ord(ch):04X} {unicodedata.name(ch, 'unnamed character')}" for ch in foreign[:4])
        more = f" and {len(foreign) - 4:,} other characters" if len(foreign) > 4 else ""
        return f"it contains {names}{more}; keys are matched character for character"


SEED = Contract(tuple(ALLOWED_KEYS))
