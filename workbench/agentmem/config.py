"""`--agent-memory`: which of Agent Framework's own memories both agents run, and where it keeps its files."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING

from workbench.files import data_dir

if TYPE_CHECKING:
    from workbench.runtime.memories import AgentMemory

DIRECTORY_NAME = "agent-memory"


class AgentMemoryKind(StrEnum):
    FILES = "files"  # FileMemoryProvider: the model writes memory files with file_memory_* tools
    EXTRACTED = "extracted"  # MemoryContextProvider: an extraction prompt after every turn


def default_directory() -> Path:
    return data_dir() / DIRECTORY_NAME


@dataclass(frozen=True)
class AgentMemoryConfig:
    kind: AgentMemoryKind | None = None
    directory: Path | None = None

    @classmethod
    def from_options(cls, kind: str | None, directory: str | None) -> AgentMemoryConfig:
        return cls(AgentMemoryKind(kind) if kind else None, Path(directory).expanduser() if directory else None)

    @property
    def calls_functions(self) -> bool:
        """Both memories offer the model functions (file_memory_*; list/read/write_memory...): a live
        model needs the framework's function-invocation loop to use them."""
        return self.kind is not None

    def build(self) -> AgentMemory | None:
        """The memory, or None without `--agent-memory`. Nothing is written until an agent runs."""
        root = (self.directory or default_directory()).resolve()
        if self.kind is AgentMemoryKind.FILES:
            from workbench.agentmem.files import FileMemory

            return FileMemory(root / "files")
        if self.kind is AgentMemoryKind.EXTRACTED:
            from workbench.agentmem.extracted import ExtractedMemory

            return ExtractedMemory(root / "extracted")
        return None
