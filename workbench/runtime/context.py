"""How one request to an agent splits into instructions, the facts block, history and the current
message: what F2 draws as a bar, so growth of history beside a flat facts block shows at a glance."""

from __future__ import annotations

from dataclasses import dataclass

from workbench.memory.prompt import BLOCK_END, BLOCK_START
from workbench.runtime.calls import CallRecord
from workbench.runtime.usage import Usage, estimate_tokens

PARTS = ("instructions", "facts block", "history", "current message")


@dataclass(frozen=True)
class ContextSplit:
    """Characters per part of one agent call, and the input tokens the provider reported (or None)."""

    turn: int | None
    instructions: int
    facts: int
    history: int
    current: int
    usage: Usage | None

    @property
    def parts(self) -> tuple[int, int, int, int]:
        return (self.instructions, self.facts, self.history, self.current)

    @property
    def chars(self) -> int:
        return sum(self.parts)

    @property
    def estimate(self) -> int:
        return estimate_tokens(self.chars)

    @property
    def reported_input(self) -> int | None:
        return self.usage.input_tokens if self.usage else None


def _last_block(text: str) -> tuple[int, int] | None:
    start = text.rfind(BLOCK_START)
    end = text.find(BLOCK_END, start) if start >= 0 else -1
    return (start, end + len(BLOCK_END)) if start >= 0 and end >= 0 else None


def split_request(call: CallRecord) -> ContextSplit:
    """The current message is the last user message without a block; the facts block is the last
    block sent (inside that message in manual mode, a message of its own in provider mode);
    history is every other message, earlier blocks kept in it included."""
    messages = [m.text for m in call.messages]
    last_user = max((i for i, m in enumerate(call.messages) if m.role == "user"), default=None)
    facts, block_at = 0, None
    for i in range(len(messages) - 1, -1, -1):
        if (span := _last_block(messages[i])) is not None:
            facts, block_at = span[1] - span[0], i
            break
    current = 0 if last_user is None else len(messages[last_user]) - (facts if block_at == last_user else 0)
    history = sum(len(t) for i, t in enumerate(messages) if i != last_user)
    if block_at is not None and block_at != last_user:
        history -= facts
    return ContextSplit(call.turn, len(call.instructions), facts, history, current, call.usage)
