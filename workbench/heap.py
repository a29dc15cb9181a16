"""How often Python's cyclic garbage collector runs, for the two long-running loops: the drift lab
and the TUI. Both make many short-lived objects that die in reference cycles (the framework's
per-turn copies of the history; Textual's strips and their caches). At Python's default pace (a
young collection every 700 new objects) objects still in use are promoted, and full collections
then walk them all: a third of a 1,000-turn lab, 60-80 ms stalls every few seconds of a streamed
reply. Collecting young objects less often lets them be freed young."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager

# Young collections run after this many new objects instead of Python's 700.
YOUNG_COLLECTION_THRESHOLD = 20_000


def pace_young_collections() -> tuple[int, ...]:
    """Collect young objects every YOUNG_COLLECTION_THRESHOLD new ones; returns the previous thresholds."""
    previous = gc.get_threshold()
    gc.set_threshold(YOUNG_COLLECTION_THRESHOLD, *previous[1:])
    return previous


@contextmanager
def paced_garbage_collection() -> Iterator[None]:
    """Paced young collections for the length of the block (the lab), then Python's pace again."""
    previous = pace_young_collections()
    try:
        yield
    finally:
        gc.set_threshold(*previous)
