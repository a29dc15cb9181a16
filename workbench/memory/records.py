"""The shapes that cross the memory boundary: the writer's output, stored facts and turn tickets."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from pydantic import BaseModel, ConfigDict, Field

from workbench.memory.contract import parse_message


class FactCandidate(BaseModel):
    """One fact the writer proposes. Limits are checked by the host, not by the schema,
    so that a violation becomes a named rejection rather than a parse failure."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    key: str = Field(description="One of the allowed keys, exactly as the user wrote it.")
    value: str = Field(description="The declared value, exactly as the user wrote it.")
    evidence: str = Field(description="An exact quotation of the user's message that contains the value.")


class Extraction(BaseModel):
    """The writer's structured output: every declaration of the current message, nothing else."""

    model_config = ConfigDict(extra="forbid")

    facts: list[FactCandidate]


@dataclass(frozen=True)
class Fact:
    """A stored, unverified user assertion with its provenance: `evidence` is the quotation the writer
    gave, `declaration` the fact's own `key=value` segment of the message (what the quotation narrows
    to when a forget removes something else it quoted, see `ForgetPlan.kept`)."""

    key: str
    value: str
    evidence: str
    declaration: str
    turn: int
    recorded_at: datetime


@dataclass(frozen=True)
class MemoryTurn:
    """The ticket for one user message: an extraction applies only with a ticket still current.

    `origin` names where the message came from (an agent pane, a lab run); memory only records it.
    """

    epoch: int
    number: int
    user_text: str
    origin: str = ""


def declared_candidates(text: str) -> list[FactCandidate]:
    """The candidates the host itself reads from a message: each declaration quoting its own segment.

    Look-alike keys yield no candidate; admission still rejects the message because of them.
    """
    return [
        FactCandidate(key=seg.key, value=seg.value, evidence=seg.text) for seg in parse_message(text).segments.values()
    ]
