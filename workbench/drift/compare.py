"""The one rule the drift lab compares text by, for a request and an answer alike (docs/scoring.md).

Both sides are brought to one form before a value is looked for: Unicode NFKC with case folded
(NFKC_Casefold as Unicode defines caseless matching: full-width letters, ligatures and no-break spaces
read as their plain forms, `SQL SERVER 2022` as `sql server 2022`), and every run of whitespace (line
ends included) read as one space, none at either end. A value is then found only whole: all of it, as
one run, and not as part of a longer word or number (`no` is not in `not`, `12.4` is not in `112.45`)."""

from __future__ import annotations

import re
import unicodedata


def normalized(text: str) -> str:
    """`text` in the form both sides are compared in: NFKC_Casefold, whitespace runs as one space."""
    folded = unicodedata.normalize("NFKC", unicodedata.normalize("NFKC", text).casefold())
    return " ".join(folded.split())


class Haystack:
    """A text normalized once, to look for many values in (a request is searched for every value)."""

    def __init__(self, text: str) -> None:
        self.text = normalized(text)

    def holds(self, value: str) -> bool:
        """Whether the text holds `value` whole (see the module's rule). An empty value is never held."""
        needle = normalized(value)
        if not needle:
            return False
        start = r"(?<!\w)" if re.match(r"\w", needle) else ""
        end = r"(?!\w)" if re.search(r"\w\Z", needle) else ""
        return re.search(start + re.escape(needle) + end, self.text) is not None


def holds(text: str, value: str) -> bool:
    """Whether `text` holds `value` whole, by the lab's one rule."""
    return Haystack(text).holds(value)
