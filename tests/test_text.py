"""workbench.text: bounded echoes, visible escapes, JSON that decodes to exactly what was written."""

import json

from hypothesis import given
from hypothesis import strategies as st

from workbench.memory.shown import quoted
from workbench.text import clip, dumps, hides, visible

ANY = st.text(st.characters(), max_size=30)  # surrogates included: JSON can carry them escaped
DATA = st.recursive(st.none() | st.integers() | ANY, lambda inner: st.lists(inner) | st.dictionaries(ANY, inner))


@given(DATA)
def test_dumps_decodes_to_the_same_data_and_hides_nothing(data):
    text = dumps(data)
    assert json.loads(text) == data
    assert not any(hides(ch) for ch in text.replace("\n", ""))


@given(ANY)
def test_visible_shows_every_hiding_character(text):
    assert not any(hides(ch) for ch in visible(text) if ch not in "\n\t\u200d\ufe0f")


@given(st.text(max_size=300), st.integers(min_value=40, max_value=200))
def test_clip_is_bounded_idempotent_and_says_the_length(text, limit):
    cut = clip(text, limit)
    assert len(cut) <= limit and clip(cut, limit) == cut
    assert cut == text or (cut.endswith(f"[cut: {len(text):,} characters in all]") and text.startswith(cut[:10]))


def test_a_bounded_quote_keeps_the_marker_outside_the_quotes():
    assert quoted("abc", 10) == '"abc"'
    assert quoted("x" * 20, 5) == '"xxxxx"… [cut: 20 characters in all]'


def test_a_quote_shows_text_as_typed_with_only_hiding_characters_escaped():
    assert quoted("café O'Brien \\ m\u043edule") == '"café O\'Brien \\ m\u043edule"'
    assert quoted("a\x1bb\u202ec") == '"a\\x1bb\\u202ec"'


def test_a_quote_stays_on_one_line():
    """`visible` keeps line breaks and tabs as layout; inside quotes they would break the line a one-line
    message promises, so they are shown as escapes too."""
    assert quoted("fu\nll\tx") == '"fu\\nll\\tx"'
    assert quoted("a\nb" * 10, 3) == '"a\\nb"… [cut: 30 characters in all]'


def test_a_joiner_and_a_presentation_selector_stay_raw_only_where_they_make_an_emoji():
    """Kept raw everywhere, they hid between letters: `pa\\u200dss` looked like `pass`, a value
    `Bil\\u200dling` like `Billing`. An emoji keeps them, and so does a conjunct after a virama."""
    emoji = "\U0001f469\u200d\U0001f4bb \u2764\ufe0f \U0001f3f3\ufe0f\u200d\U0001f308 1\ufe0f\u20e3 \U0001f469\U0001f3fd\u200d\U0001f4bb"
    assert visible(emoji) == emoji
    assert visible("\u0915\u094d\u200d\u0937") == "\u0915\u094d\u200d\u0937"
    assert (
        visible("pa\u200dss a\ufe0fb \u200d\U0001f4bb \U0001f469\u200d")
        == "pa\\u200dss a\\ufe0fb \\u200d\U0001f4bb \U0001f469\\u200d"
    )
