"""The conversation so far, as the drift lab can replay it: each user message with its agent, and
each forget. It is a holder of text registered with the one forget: a forget scrubs the messages
recorded before it with the forget's plan (whole declarations and whole values, never a piece of
another word), so the record holds no forgotten value while the story keeps its shape.

Knows nothing of Textual; loads the chronology format (`workbench.chronology`) only when one is asked for."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from workbench.memory.contract import declares_anything
from workbench.memory.forget import ForgetPlan, declared_in

if TYPE_CHECKING:
    from workbench.chronology import Chronology
    from workbench.memory.contract import Contract

FORGET_ALL = "all"
NAME = "conversation"
DESCRIPTION = "Exported from the workbench: both panes' messages in order, and every forget."
PROHIBITION_KEY = "constraint"


@dataclass(frozen=True)
class Entry:
    agent: str
    say: str | None = None
    forget: str | None = None


@dataclass
class Transcript:
    """A holder of text (`workbench.memory.forget.Holder`)."""

    entries: list[Entry] = field(default_factory=list)
    name: str = "transcript"
    unit: str = "message(s) scrubbed"

    def said(self, agent: str, text: str) -> None:
        self.entries.append(Entry(agent, say=text))

    def texts(self) -> Iterator[str]:
        return (e.say for e in list(self.entries) if e.say is not None)

    async def declared(self, keys: frozenset[str]) -> set[str]:
        return declared_in(self.texts(), keys)

    async def erase(self, plan: ForgetPlan) -> int:
        """Scrub every earlier message with `plan` and record the forget as a step of the story (a forget of
        several keys as one step per key, as a chronology writes a forget)."""
        scrubbed = [Entry(e.agent, plan.scrub(e.say) if e.say is not None else None, e.forget) for e in self.entries]
        changed = sum(1 for before, after in zip(self.entries, scrubbed, strict=True) if before != after)
        forgets = [Entry("support", forget=key) for key in plan.asked or (FORGET_ALL,)]
        self.entries = [*scrubbed, *forgets]
        return changed

    def questions(self) -> list[tuple[int, str, str]]:
        """(index, agent, text) of each message that declares nothing: the probes by default."""
        return [
            (i, e.agent, e.say)
            for i, e in enumerate(self.entries)
            if e.say is not None and not declares_anything(e.say)
        ]

    def chronology(self, probes: list[int], contract: Contract) -> Chronology:
        """The conversation as a chronology read under `contract` (the one it was held under), through
        the same validation as any chronology file (ChronologyError names what keeps it from being one).
        Its prohibition is the seed's `constraint`, when the contract has that key."""
        from workbench.chronology import parse_chronology

        return parse_chronology(self.draft(probes, contract).to_file(), "this conversation", contract)

    def draft(self, probes: list[int], contract: Contract) -> Chronology:
        """The conversation in the chronology's shape, unchecked: every message and forget, also when
        the lab could not run it yet (no question to score, say)."""
        from workbench.chronology import Chronology, Step

        chosen = set(probes)
        steps = tuple(
            Step(e.say, e.forget, f"q{i + 1}" if i in chosen and e.say is not None else None, e.agent)
            for i, e in enumerate(self.entries)
        )
        prohibition = PROHIBITION_KEY if contract.allows(PROHIBITION_KEY) else None
        return Chronology(NAME, DESCRIPTION, prohibition, steps)
