"""A folder saved before the state database (`memory.json`, `sessions.json`, `history/<id>.jsonl`, the
framework's `FileHistoryProvider` files) is moved into it once, at start: everything read and checked
first, written in one transaction marked as the move, and only then are the old files erased. A crash
before the mark leaves the old files as they were, and the next start moves them again; after it, the
next start only erases them."""

from __future__ import annotations

import json
from pathlib import Path

from workbench.files import erase_file
from workbench.persist.format import SavedFileError, read_memory, read_sessions
from workbench.persist.state import Saved, StateFile

MEMORY_FILE = "memory.json"
SESSIONS_FILE = "sessions.json"
HISTORY = "history"


def move_into(state: StateFile, directory: Path) -> None:
    """Move an earlier version's files under `directory` into `state`, if there are any."""
    old = [p for p in (directory / MEMORY_FILE, directory / SESSIONS_FILE) if p.exists()]
    histories = sorted((directory / HISTORY).glob("*.jsonl")) if (directory / HISTORY).is_dir() else []
    if not (old or (directory / HISTORY).is_dir()):
        return
    if not state.moved():
        memory = read_memory(directory / MEMORY_FILE)
        shape, sessions = read_sessions(directory / SESSIONS_FILE)
        current = {s["session_id"] for s in sessions.values()}
        messages = {p.stem: _messages(p) for p in histories if p.stem in current}
        state.save(Saved(memory=memory, shape=shape, sessions=sessions, messages=messages, moved=True))
    for path in [*old, *histories]:
        erase_file(path)
    if (directory / HISTORY).is_dir():
        (directory / HISTORY).rmdir()


def _messages(path: Path) -> list[dict[str, object]]:
    """The framework's JSON Lines file, one `Message.to_dict()` a line; a last line cut off by a crash
    (no newline, not JSON) was never a whole message and is left out."""
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    messages = []
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            messages.append(json.loads(line))
        except ValueError:
            if number == len(lines) and not line.endswith("\n"):
                break
            raise SavedFileError(f"{path}: line {number} is not a saved message; move the file away to go on") from None
    return messages
