"""The conversation so far, as the drift lab can replay it: each user message with its agent, and
each forget. A forget also scrubs the forgotten values from the messages recorded before it, so the
record holds no forgotten value (forgotten means gone) while the story keeps its shape.

Knows nothing of Textual; loads the drift lab's format only when a chronology is asked for."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from workbench.memory.contract import declares_anything

if TYPE_CHECKING:
    from workbench.drift import Chronology

FORGOTTEN = "(forgotten)"
FORGET_ALL = "all"


@dataclass(frozen=True)
class Entry:
    agent: str
    say: str | None = None
    forget: str | None = None


@dataclass
class Transcript:
    entries: list[Entry] = field(default_factory=list)

    def said(self, agent: str, text: str) -> None:
        self.entries.append(Entry(agent, say=text))

    def forgot(self, key: str | None, values: list[str]) -> None:
        """Record a forget (None: everything) and scrub `values` from every earlier message."""

        def scrub(text: str | None) -> str | None:
            for value in values:
                if text is not None and value:
                    text = text.replace(value, FORGOTTEN)
            return text

        self.entries = [Entry(e.agent, scrub(e.say), e.forget) for e in self.entries]
        self.entries.append(Entry("support", forget=key or FORGET_ALL))

    def questions(self) -> list[tuple[int, str, str]]:
        """(index, agent, text) of each message that declares nothing: the probes by default."""
        return [
            (i, e.agent, e.say)
            for i, e in enumerate(self.entries)
            if e.say is not None and not declares_anything(e.say)
        ]

    def to_file(self, probes: list[int], *, name: str = "conversation") -> dict[str, Any]:
        chosen = set(probes)
        steps = []
        for i, e in enumerate(self.entries):
            step: dict[str, Any] = {}
            if e.forget:
                step["forget"] = e.forget
            if e.say is not None:
                step["say"] = e.say
                if e.agent != "support":
                    step["agent"] = e.agent
                if i in chosen:
                    step["probe"] = f"q{i + 1}"
            steps.append(step)
        return {
            "name": name,
            "description": "Exported from the workbench: both panes' messages in order, and every forget.",
            "prohibition_key": "constraint",
            "steps": steps,
        }

    def chronology(self, probes: list[int]) -> Chronology:
        """The conversation through the same validation as any chronology file."""
        from workbench.drift import parse_chronology

        return parse_chronology(self.to_file(probes), "this conversation")
