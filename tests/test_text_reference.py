"""`visible` and `escape_json` take a regex fast path over printable ASCII: they must give exactly what
the character-by-character definition gives, for any text (surrogates, controls, tags, wide, ASCII)."""

import json
import unicodedata

from hypothesis import given, settings
from hypothesis import strategies as st

from workbench.text import escape_json, hides, json_escape_char, visible


def visible_reference(text: str) -> str:
    """The definition, one character at a time (the implementation before the regex fast path)."""
    return "".join(
        ch
        if ch in "\n\t" or not hides(ch) or _joins_emoji(text[i - 1] if i else "", ch, text[i + 1 : i + 2])
        else f"\\x{ord(ch):02x}"
        if ord(ch) < 0x100
        else f"\\u{ord(ch):04x}"
        if ord(ch) <= 0xFFFF
        else f"\\U{ord(ch):08x}"
        for i, ch in enumerate(text)
    )


def _pictograph(ch: str) -> bool:
    return ch > "\x7f" and (unicodedata.category(ch) in ("So", "Sk", "Sm") or ch in "\u203c\u2049\u3030\u303d")


def _joins_emoji(before: str, ch: str, after: str) -> bool:
    """A presentation selector after a pictograph or a keycap's base; a joiner between pictographs, or after a virama."""
    if ch == "\ufe0f":
        return _pictograph(before) or (before != "" and before in "0123456789#*" and after == "\u20e3")
    if ch == "\u200d":
        return before != "" and (
            unicodedata.combining(before) == 9 or ((_pictograph(before) or before == "\ufe0f") and _pictograph(after))
        )
    return False


def escape_json_reference(encoded: str, also: str = "") -> str:
    return "".join(json_escape_char(ch) if ch in also or (hides(ch) and ch not in "\n\t") else ch for ch in encoded)


# Every code point, surrogates included, with printable ASCII and the edges of the fast path's range
# (\x1f, space, ~, \x7f) drawn often, since that is where a character class could be off by one.
EDGES = st.sampled_from(
    "\x00\x1f \x7e\x7f\x80\x85\xa0\xad\n\r\t\x0b\x0c\u2028\u2029\u200b\u200d\u202e\ufe0f\ufeff\U000e0041\u20e3\u094d\u2764\U0001f4bb\U0001f3fd1#"
)
CHARS = st.one_of(st.characters(), st.characters(min_codepoint=0, max_codepoint=0x7F), EDGES)
TEXT = st.text(CHARS, max_size=200)
# Regex metacharacters are what `also` could get wrong inside a character class.
ALSO = st.text(st.one_of(st.sampled_from("<>]^-\\[.*$|&~#"), st.characters()), max_size=6)


@settings(max_examples=500)
@given(TEXT)
def test_visible_is_the_character_by_character_definition(text):
    assert visible(text) == visible_reference(text)


@settings(max_examples=500)
@given(TEXT, ALSO)
def test_escape_json_is_the_character_by_character_definition(text, also):
    assert escape_json(text, also) == escape_json_reference(text, also)
    encoded = json.dumps(text, ensure_ascii=False)
    assert escape_json(encoded, also) == escape_json_reference(encoded, also)
    assert json.loads(escape_json(encoded, "<>")) == text  # `also` as the prompt uses it


def test_every_basic_plane_and_tag_character_between_ascii_letters():
    codes = [*range(0x10000), *range(0x1F300, 0x1F700), *range(0xE0000, 0xE1000), *range(0x10FFF0, 0x110000)]
    every = "a".join(chr(code) for code in codes)
    assert visible(every) == visible_reference(every)
    assert escape_json(every) == escape_json_reference(every)
    assert escape_json(every, "<>") == escape_json_reference(every, "<>")
