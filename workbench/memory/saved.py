"""What memory keeps across a restart: the facts with their provenance, the ledger and the counters.

Plain data, taken and restored by `WorkingMemory.saved()` / `WorkingMemory.restored(...)`. Where it
is kept, and in what format, is up to the caller: memory knows nothing of files."""

from __future__ import annotations

from dataclasses import dataclass

from workbench.memory.contract import SEED, Contract
from workbench.memory.ledger import MemoryEvent
from workbench.memory.records import Fact


@dataclass(frozen=True)
class SavedMemory:
    """Memory at one moment. `turn` is the latest ticket issued, so numbering continues; `ledger_seq`
    the latest event's number. Open tickets are not kept: a restart abandons them. `contract` is the
    one memory was saved under (a file saved before contracts could be declared: the seed's)."""

    facts: tuple[Fact, ...] = ()
    ledger: tuple[MemoryEvent, ...] = ()
    ledger_seq: int = 0
    epoch: int = 0
    turn: int = 0
    last_applied: int = 0
    contract: Contract = SEED
