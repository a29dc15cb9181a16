"""The one owner of the saved state's JSON: memory (`SavedMemory`: facts with their provenance, the
ledger, the epoch and the ticket and event counters) and each agent's `AgentSession.to_dict()`, as the
state database keeps them in its rows (`state.py`), and as the files of a folder saved before it
(`memory.json`, `sessions.json`, read once to move them into the database: `legacy.py`).

Both carry a format version. What is not valid in this format is refused with the reason, and never
overwritten: nothing is lost because a file was hand-edited or written by a newer version. Memory read
back must also satisfy the contract that admitted it (`workbench.memory.rules.stored_problem`): the seed's,
or the one a team declared, which memory records beside its facts (`SavedMemory.contract`; a file saved
before contracts could be declared has none, and was saved under the seed's)."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, ValidationError, model_validator

from workbench.memory.rules import stored_problem
from workbench.memory.saved import SavedMemory

MEMORY_FILE = "memory.json"
SESSIONS_FILE = "sessions.json"
_Model = TypeVar("_Model", bound=BaseModel)


class SavedFileError(ValueError):
    """A saved file that cannot be read as this format (the message names the file and why)."""


class MemoryFile(BaseModel):
    """Version 2 keeps each fact's own declaration in the fact. Version 1 kept them beside the facts, as
    `[key, text]` pairs under `declarations`: such a file is read as version 2 (and written as 2)."""

    model_config = ConfigDict(extra="forbid")

    version: Literal[2] = 2
    memory: SavedMemory

    @model_validator(mode="before")
    @classmethod
    def _from_version_1(cls, data: Any) -> Any:
        if not (isinstance(data, dict) and data.get("version") == 1 and isinstance(data.get("memory"), dict)):
            return data
        memory = dict(data["memory"])
        pairs, facts = memory.pop("declarations", []), memory.get("facts", [])
        shaped = isinstance(facts, list) and all(isinstance(f, dict) and isinstance(f.get("key"), str) for f in facts)
        if not (shaped and isinstance(pairs, list) and all(isinstance(p, list) and len(p) == 2 for p in pairs)):
            return data  # not what version 1 wrote: validation names what is wrong
        own = {str(key): text for key, text in pairs}
        memory["facts"] = [{"declaration": own.get(f["key"], f.get("evidence")), **f} for f in facts]
        return {**data, "version": 2, "memory": memory}


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
    if saved is not None and (problem := stored_problem(saved.memory.facts, saved.memory.contract)):
        raise SavedFileError(f"{path} breaks the contract: {problem}")
    return saved.memory if saved is not None else None


def read_sessions(path: Path) -> tuple[str, dict[str, dict[str, Any]]]:
    """The shape the sessions were saved under, and each agent's session dict."""
    saved = _read(path, SessionsFile)
    return ("", {}) if saved is None else (saved.shape, {name: s.model_dump() for name, s in saved.sessions.items()})
