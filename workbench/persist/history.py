"""The framework's `FileHistoryProvider`, with files private to the user and a current-sessions gate.

The framework appends each session's messages to `<storage>/<session id>.jsonl` (JSON Lines, one
`Message.to_dict()` per line; unsafe ids are encoded by its own rule) and creates the file with the
process umask. Here each file is created user-only before the framework's first append, and only the
agents' current sessions are written: a turn still running on a session a forget replaced stores
nothing, as the in-memory history would keep nothing anyone reads."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from agent_framework import FileHistoryProvider, Message

from workbench.files import private_file


class PrivateFileHistory(FileHistoryProvider):
    def __init__(self, storage: Path, *, current: Callable[[str | None], bool]) -> None:
        super().__init__(storage)
        self._current = current

    def file(self, session_id: str | None) -> Path:
        # Private name: the framework's own mapping of a session id to its file (it encodes unsafe ids).
        return self._session_file_path(session_id)

    def read(self, path: Path) -> list[Message]:
        """The messages of one history file, read now (the framework's `get_messages` is async only)."""
        # Private name: the framework's own reader of the format it wrote, so there is one owner of it.
        return self._read_json_messages(path) if path.exists() else []

    def count(self, path: Path) -> int:
        """How many messages a history file holds, one a non-empty line as the framework reads them,
        without parsing them (start-up counts both histories for the header)."""
        if not path.exists():
            return 0
        with path.open("rb") as lines:
            return sum(1 for line in lines if line.strip())

    async def save_messages(
        self, session_id: str | None, messages: Sequence[Message], *, state: dict[str, Any] | None = None, **kwargs: Any
    ) -> None:
        if not messages or not self._current(session_id):
            return
        private_file(self.file(session_id))
        await super().save_messages(session_id, messages, state=state, **kwargs)
