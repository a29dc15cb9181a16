"""The files under a persisted-sessions directory (`PersistedSessions`): when one was last written, each
as "What is remembered" lists it, and the scan after a forget for a file that still holds a forgotten value."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from pathlib import Path

from workbench.memory.forget import ForgetPlan
from workbench.persist.state import STATE_FILE
from workbench.runtime.remembered import HeldItem
from workbench.text import json_strings

LOCK_FILE = "lock"
_WHAT = {
    STATE_FILE: "the facts, the ledger, the sessions and their messages (SQLite): its rows",
    "-wal": "SQLite's write-ahead log: the latest changes to the rows above, until they are written into them",
    "-shm": "SQLite's index of its write-ahead log while the database is open",
    LOCK_FILE: "held locked while a workbench uses the directory; names its process",
}


def modified(path: Path) -> datetime | None:
    """When `path` was last written, in local time; None when it does not exist."""
    return datetime.fromtimestamp(path.stat().st_mtime).astimezone() if path.exists() else None


def files_held(directory: Path, rows: Callable[[], list[str]]) -> list[HeldItem]:
    """Every file under `directory` with its size and what it is; the state file's content is its `rows()`."""
    held = []
    for path in sorted(p for p in directory.rglob("*") if p.is_file()):
        name = path.relative_to(directory).as_posix()
        what = _WHAT.get(path.name.removeprefix(STATE_FILE) or STATE_FILE, "")
        content = "\n".join(rows()) if path.name == STATE_FILE else ""
        held.append(HeldItem("file", name, what, content, path.stat().st_size))
    return held


def files_holding(directory: Path, plan: ForgetPlan) -> list[Path]:
    """Every file under `directory` that holds a forgotten value, as raw text or JSON-escaped."""
    return [p for p in sorted(directory.rglob("*")) if p.is_file() and _holds(p, plan)]


def _holds(path: Path, plan: ForgetPlan) -> bool:
    raw = path.read_bytes().decode("utf-8", errors="replace")
    return plan.holds(raw) or any(plan.holds(s) for s in json_strings(raw))
