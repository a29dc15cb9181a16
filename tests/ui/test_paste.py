"""A bracketed paste that holds escape codes reaches the composer whole, however the terminal's
bytes are split into reads."""

import pytest
from textual import events

from workbench.memory.shown import visible_controls
from workbench.ui.paste import PASTE_END, PASTE_START, PASTED_ESC, PasteSafeParser

PASTED = "symptom=before \x1b[31mRED\x1b[0m after bell\x07\nversion=7.1"
BYTES = "ab" + PASTE_START + PASTED + PASTE_END + "c"


def parse(chunks):
    parser = PasteSafeParser()
    tokens = [t for chunk in chunks for t in parser.feed(chunk)]
    return tokens + list(parser.feed(""))


@pytest.mark.parametrize("size", [1, 2, 3, 5, 7, len(BYTES)])
def test_the_paste_arrives_whole_between_the_keys_around_it(size):
    tokens = parse([BYTES[i : i + size] for i in range(0, len(BYTES), size)])
    kinds = [(type(t).__name__, getattr(t, "key", None)) for t in tokens]
    assert kinds == [("Key", "a"), ("Key", "b"), ("Paste", None), ("Key", "c")]
    (paste,) = [t for t in tokens if isinstance(t, events.Paste)]
    assert paste.text == PASTED.replace("\x1b", PASTED_ESC)
    shown, hidden = visible_controls(paste.text, escape=PASTED_ESC)
    assert shown == "symptom=before \\x1b[31mRED\\x1b[0m after bell\\x07\nversion=7.1" and hidden == 3


def test_keys_outside_a_paste_are_parsed_as_before():
    tokens = parse(["\x1b[A", "x", "\x1b[1;5C"])
    assert [t.key for t in tokens] == ["up", "x", "ctrl+right"]


def test_invisible_characters_in_a_paste_are_shown_too():
    """A text-direction override reorders what follows it on screen, and tag characters carry a whole
    hidden text: both shown as escapes; an emoji's joiner and presentation selector are kept."""
    pasted = "customer=Contoso\u202eevil\U000e0041\u200bend \U0001f469\u200d\U0001f4bb\u2764\ufe0f"
    shown, hidden = visible_controls(pasted)
    assert shown == "customer=Contoso\\u202eevil\\U000e0041\\u200bend \U0001f469\u200d\U0001f4bb\u2764\ufe0f"
    assert hidden == 3
