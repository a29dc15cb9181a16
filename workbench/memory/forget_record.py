"""What a forget keeps beside its plan: the record that makes it one durable step (`Journal`, written by
`workbench.persist.journal.ForgetJournal`; a forget a crash cut short is read back as a `PendingForget`),
and the garbage it frees once every holder applied it (`release_garbage`)."""

from __future__ import annotations

import asyncio
import gc
from dataclasses import dataclass
from datetime import datetime
from typing import Protocol

# How long a forget waits for the event loop to close the generators a failed call left (`release_garbage`).
_CLOSE_SECONDS = 10.0


@dataclass(frozen=True)
class PendingForget:
    """A forget a crash cut short, as its journal recorded it: the keys (never a value), when it was
    asked, and the stores it was to reach (the options that open them)."""

    keys: tuple[str, ...] | None  # None: everything
    asked_at: datetime
    stores: tuple[str, ...]

    @property
    def what(self) -> str:
        return "everything" if self.keys is None else ", ".join(repr(key) for key in self.keys)

    def missing(self, stores: tuple[str, ...]) -> tuple[str, ...]:
        """The stores it was to reach that `stores` (this start's) do not open."""
        return tuple(s for s in self.stores if s not in stores)


class Journal(Protocol):
    """Where a forget is recorded while it runs, so a crash cannot leave it half done
    (`workbench.persist.journal.ForgetJournal`): `begin` returns once the record is durable."""

    def pending(self) -> PendingForget | None: ...

    def begin(self, keys: tuple[str, ...] | None) -> None: ...

    def end(self) -> None: ...


async def release_garbage() -> int:
    """Free what no holder keeps but the process still holds: objects in reference cycles the collector
    has not reached yet, among them what a call that failed mid-stream left (its request's bytes, the
    response body read so far, in the frames of the HTTP client's generators, kept by the exception's
    traceback). Collected, an abandoned async generator is handed to the event loop to be closed (its
    `aclose`, made a task), reachable from everything that holds the loop until then: it is awaited here,
    bounded, so the forget ends with them gone. Returns how many it closed."""
    gc.collect()
    await asyncio.sleep(0)  # the loop turns the closes the collection scheduled into tasks
    closing = [t for t in asyncio.all_tasks() if type(t.get_coro()).__name__ == "async_generator_athrow"]
    if closing:
        await asyncio.wait(closing, timeout=_CLOSE_SECONDS)
    return len(closing)
