"""What a run holds that its state file does not, after a save failed: the one line the header and
the quit show (`PersistedSessions.unsaved`)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from workbench.memory import WorkingMemory
from workbench.persist.format import SavedFileError
from workbench.persist.state import StateFile


def unsaved_line(
    state: StateFile,
    memory: WorkingMemory,
    memory_unsaved: bool,
    messages_unsaved: Mapping[str, Sequence[Any]],
    failure: str,
) -> str:
    """The facts not on disk (keys only, never a value), the messages counted, and the save's failure."""
    parts = []
    if memory_unsaved:
        try:
            on_disk = state.memory()
        except SavedFileError:
            on_disk = None
        saved = {f.key: f.value for f in on_disk.facts} if on_disk is not None else {}
        now = {f.key: f.value for f in memory.facts()}
        changed = [k for k, v in now.items() if saved.get(k) != v]
        removed = [k for k in saved if k not in now]
        if changed:
            parts.append(f"the fact(s) {', '.join(changed)}")
        if removed:
            parts.append(f"the removal of {', '.join(removed)}")
        if not (changed or removed):
            parts.append("the ledger's latest event(s)")
    if messages := sum(len(m) for m in messages_unsaved.values()):
        parts.append(f"{messages:,} message(s) of the agents' histories")
    what = "; ".join(parts) or "the agents' sessions"
    return f"{what} (the save failed: {failure})"
