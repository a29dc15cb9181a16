"""Token usage as the provider reported it. No report is "unknown", never zero."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

UNKNOWN = "unknown"


@dataclass(frozen=True)
class Usage:
    input_tokens: int | None
    output_tokens: int | None

    def __add__(self, other: Usage) -> Usage:
        return Usage(_add(self.input_tokens, other.input_tokens), _add(self.output_tokens, other.output_tokens))

    def describe(self) -> str:
        return f"{_show(self.input_tokens)} in / {_show(self.output_tokens)} out"


def _add(a: int | None, b: int | None) -> int | None:
    return None if a is None or b is None else a + b


def _show(count: int | None) -> str:
    return UNKNOWN if count is None else f"{count:,}"


# No single call is billed a billion tokens: a larger count is a broken report, not usage.
MAX_REPORTED_TOKENS = 10**9


def _count(value: Any) -> int | None:
    """A reported token count, or None (unknown) when it is not a plausible count."""
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= MAX_REPORTED_TOKENS:
        return None
    return value


def usage_from_details(details: Mapping[str, Any] | None) -> Usage | None:
    """The framework's `usage_details` as Usage; `None` and `{}` both mean the provider reported nothing.
    A count that is not a number, negative or absurdly large is unknown: it never fails a call."""
    if not details or not isinstance(details, Mapping):
        return None
    prompt, completion = _count(details.get("input_token_count")), _count(details.get("output_token_count"))
    if prompt is None and completion is None:
        return None
    return Usage(prompt, completion)


def total_usage(usages: Iterable[Usage | None]) -> Usage | None:
    """The sum over calls, or None (unknown) when any call reported nothing. No calls at all sum to zero."""
    total = Usage(0, 0)
    for usage in usages:
        if usage is None:
            return None
        total = total + usage
    return total


def describe_usage(usage: Usage | None) -> str:
    return UNKNOWN if usage is None else usage.describe()


def estimate_tokens(chars: int) -> int:
    """A characters/4 estimate. It is not a bill: label it as an estimate wherever it is shown."""
    return chars // 4
