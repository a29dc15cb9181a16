"""What one call did to memory: a status and the events it recorded."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from workbench.memory.ledger import MemoryEvent


class Status(StrEnum):
    APPLIED = "applied"
    REJECTED = "rejected"
    STALE = "stale"
    NOTHING_DECLARED = "nothing_declared"
    ABANDONED = "abandoned"
    FORGOTTEN = "forgotten"
    NOTED = "noted"


@dataclass(frozen=True)
class Outcome:
    """What one call did to memory, and the events it recorded."""

    status: Status
    events: tuple[MemoryEvent, ...]

    @property
    def applied(self) -> bool:
        return self.status is Status.APPLIED
