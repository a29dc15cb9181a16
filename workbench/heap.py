"""How often Python's cyclic garbage collector runs, for the two long-running loops: the drift lab
and the TUI. Both make many short-lived objects that die in reference cycles (the framework's
per-turn copies of the history; Textual's strips and their caches). At Python's default pace (a
young collection every 700 new objects) objects still in use are promoted, and full collections
then walk them all: a third of a 1,000-turn lab, 60-80 ms stalls every few seconds of a streamed
reply. Collecting young objects less often lets them be freed young.

The `workbench` command also holds the collector off while it starts (`hold_collections`): start-up
builds its long-lived objects (modules, styles, widgets) and the collector would walk the growing
heap again and again before the first frame, about 100 ms of a start of 600 (`bench/tui.py`)."""

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


def hold_collections() -> None:
    """No cyclic collection from here until `settle` or `release_collections`."""
    gc.disable()


def release_collections() -> None:
    """Collections again, at Python's pace (a command that opens no window)."""
    gc.enable()


def settle() -> None:
    """Once the TUI has loaded everything: collect start-up's garbage, freeze the objects it keeps
    (frozen objects are still freed by reference counting; the collector just stops re-scanning
    them), and collect again at the paced rate."""
    gc.collect()
    gc.freeze()
    pace_young_collections()
    gc.enable()


@contextmanager
def paced_garbage_collection() -> Iterator[None]:
    """Paced young collections for the length of the block (the lab), then Python's pace again."""
    previous = pace_young_collections()
    try:
        yield
    finally:
        gc.set_threshold(*previous)
