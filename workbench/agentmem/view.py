"""What a memory of files holds right now, for a live view: each file with its content, and the values
the user has since corrected that it still holds."""

from __future__ import annotations

from collections.abc import Collection, Iterable
from dataclasses import dataclass

from workbench.memory.forget import ForgetPlan
from workbench.memory.ledger import EventKind, MemoryEvent


@dataclass(frozen=True)
class HeldFile:
    """One file a memory keeps. `kind`: "memory file", "index", "topic" or "transcript"; `name` is its
    path under the memory's folder; `stale` the corrected values it still holds (highlight it)."""

    kind: str
    name: str
    description: str
    content: str
    size: int
    stale: tuple[str, ...] = ()


def corrected_values(events: Iterable[MemoryEvent], current: Iterable[str]) -> set[str]:
    """Every value a REPLACED event replaced that is no longer a current value: from the runtime's
    `snapshot()`, `corrected_values(snapshot.ledger, (f.value for f in snapshot.facts))`."""
    replaced = {e.previous for e in events if e.kind == EventKind.REPLACED and e.previous}
    return replaced - set(current)


def stale_in(text: str, corrected: Collection[str]) -> tuple[str, ...]:
    """The corrected values `text` holds whole (as a forget would find them), sorted."""
    return tuple(sorted(v for v in corrected if ForgetPlan(None, frozenset(), frozenset({v})).holds(text)))
