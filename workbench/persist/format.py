"""The one owner of the saved state's format: two JSON files beside the framework's history files.

`memory.json` holds `SavedMemory` (facts with their provenance, the ledger, the epoch and the ticket
and event counters); `sessions.json` holds each agent's `AgentSession.to_dict()`. Both carry a format
version. A file that is not valid in this format is refused with the reason, and never overwritten:
nothing is lost because a file was hand-edited or written by a newer version."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, ValidationError

from workbench.files import replace_private
from workbench.memory.saved import SavedMemory

MEMORY_FILE = "memory.json"
SESSIONS_FILE = "sessions.json"
_Model = TypeVar("_Model", bound=BaseModel)


class SavedFileError(ValueError):
    """A saved file that cannot be read as this format (the message names the file and why)."""


class MemoryFile(BaseModel):
    model_config = ConfigDict(extra="forbid")

    version: Literal[1] = 1
    memory: SavedMemory


class SessionFile(BaseModel):
    """One agent's session as `AgentSession.to_dict()` wrote it; `session_id` names its history file."""

    model_config = ConfigDict(extra="allow")

    session_id: str
    state: dict[str, Any] = {}


class SessionsFile(BaseModel):
    model_config = ConfigDict(extra="forbid")

    version: Literal[1] = 1
    shape: str  # what shaped the histories (the runtime's mode and recall): resumed only under the same
    sessions: dict[str, SessionFile]


def _read(path: Path, model: type[_Model]) -> _Model | None:
    if not path.exists():
        return None
    try:
        return model.model_validate_json(path.read_bytes())
    except ValidationError as exc:
        problems = "; ".join(f"{'.'.join(map(str, e['loc'])) or 'file'}: {e['msg']}" for e in exc.errors()[:3])
        raise SavedFileError(f"{path} is not a saved workbench file this version can read ({problems})") from None


def read_memory(path: Path) -> SavedMemory | None:
    saved = _read(path, MemoryFile)
    return saved.memory if saved is not None else None


def write_memory(path: Path, memory: SavedMemory) -> None:
    replace_private(path, MemoryFile(memory=memory).model_dump_json() + "\n")


def read_sessions(path: Path) -> tuple[str, dict[str, dict[str, Any]]]:
    """The shape the sessions were saved under, and each agent's session dict."""
    saved = _read(path, SessionsFile)
    return ("", {}) if saved is None else (saved.shape, {name: s.model_dump() for name, s in saved.sessions.items()})


def write_sessions(path: Path, shape: str, sessions: dict[str, dict[str, Any]]) -> None:
    model = SessionsFile(shape=shape, sessions={name: SessionFile.model_validate(s) for name, s in sessions.items()})
    replace_private(path, model.model_dump_json() + "\n")
