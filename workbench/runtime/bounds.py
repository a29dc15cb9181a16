"""How long a model's reply may be. Without a bound a small model that loops generates until its
context is full (3,500 tokens and two minutes on two cores), which is what timed out; bounded, a
model that rambles is cut off in seconds and the failure says so.

Agent Framework's `max_tokens` option reaches OpenAI's chat completions as `max_completion_tokens`,
the current name. OpenAI-compatible servers read the older `max_tokens` (the llama-cpp-python
server ignores `max_completion_tokens`; llama.cpp's own server read only `max_tokens` until 2026),
so on them the same bound also travels as `max_tokens`, through the SDK's `extra_body`."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from workbench.memory import parse_message

# What a writer reply needs beyond the text it copies: the JSON around the facts, with room to spare.
_EXTRACTION_OVERHEAD_TOKENS = 256
_PER_FACT_TOKENS = 48


def writer_max_tokens(user_text: str, max_facts: int) -> int:
    """The most tokens an extraction of `user_text` can honestly need: each declaration's value and
    quotation copied (a token per character at worst, for at most one more than the contract's
    `max_facts`), the JSON around them, and a margin. An extraction of five short facts gets a few
    hundred tokens; a reply longer than that is not one."""
    segments = list(parse_message(user_text).segments.values())[: max_facts + 1]
    copied = sum(len(s.value) + len(s.text) for s in segments)
    return _EXTRACTION_OVERHEAD_TOKENS + copied + _PER_FACT_TOKENS * len(segments)


@dataclass(frozen=True)
class ReplyBound:
    """The request options that bound a reply to `limit` tokens on one kind of server."""

    compatible_server: bool = False  # an OpenAI-compatible server (--base-url), not OpenAI or Azure

    def options(self, limit: int) -> dict[str, Any]:
        options: dict[str, Any] = {"max_tokens": limit}
        if self.compatible_server:
            options["extra_body"] = {"max_tokens": limit}
        return options
