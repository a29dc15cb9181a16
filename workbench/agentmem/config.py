"""`--agent-memory`: which of Agent Framework's own memories both agents run, and where it keeps its files."""

from __future__ import annotations

from dataclasses import dataclass, replace
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING

from workbench.files import data_dir

if TYPE_CHECKING:
    from workbench.agentmem.mem0_config import Mem0Config
    from workbench.runtime.config import ModelConfig
    from workbench.runtime.memories import AgentMemory

DIRECTORY_NAME = "agent-memory"


class AgentMemoryKind(StrEnum):
    FILES = "files"  # FileMemoryProvider: the model writes memory files with file_memory_* tools
    EXTRACTED = "extracted"  # the framework's extracted memory: an extraction prompt after every turn
    MEM0 = "mem0"  # Mem0ContextProvider over mem0ai run locally: extracts after every turn, finds by embeddings


def default_directory() -> Path:
    return data_dir() / DIRECTORY_NAME


@dataclass(frozen=True)
class AgentMemoryConfig:
    kind: AgentMemoryKind | None = None
    directory: Path | None = None
    mem0: Mem0Config | None = None  # with mem0: its model and embedder, checked

    @classmethod
    def from_options(
        cls,
        kind: str | None,
        directory: str | None,
        *,
        chat: ModelConfig | None = None,
        embedding_model: str | None = None,
        embedding_base_url: str | None = None,
    ) -> AgentMemoryConfig:
        """The choice and its folder; for mem0 ConfigError says what is missing (a live `chat` model,
        `embedding_model`, the extra) before anything is loaded, and for extracted memory that the
        installed framework no longer has it."""
        chosen = AgentMemoryKind(kind) if kind else None
        if chosen is AgentMemoryKind.EXTRACTED:
            from workbench.agentmem.extracted import unavailable
            from workbench.runtime.config import ConfigError

            if (why := unavailable()) is not None:
                raise ConfigError(why)
        mem0 = None
        if chosen is AgentMemoryKind.MEM0:
            from workbench.agentmem.mem0_config import Mem0Config
            from workbench.runtime.config import ModelConfig

            mem0 = Mem0Config.from_options(
                chat or ModelConfig(), embedding_model=embedding_model, embedding_base_url=embedding_base_url
            )
        return cls(chosen, Path(directory).expanduser() if directory else None, mem0)

    @property
    def calls_functions(self) -> bool:
        """Memory files and extracted memory offer the model functions (file_memory_*;
        list/read/write_memory...): a live model needs the framework's function-invocation loop to use
        them. Mem0 offers none: it extracts and searches on its own."""
        return self.kind in (AgentMemoryKind.FILES, AgentMemoryKind.EXTRACTED)

    @property
    def root(self) -> Path:
        """The folder `--agent-memory-dir` names (the chosen memory keeps its files in a folder under it)."""
        return (self.directory or default_directory()).resolve()

    @property
    def folder(self) -> Path | None:
        """The folder the chosen memory keeps its files in, named after the choice (None without one)."""
        if self.kind is None:
            return None
        return self.root / self.kind.value

    def build(self) -> AgentMemory | None:
        """The memory, or None without `--agent-memory`. Nothing is written until an agent runs."""
        folder = self.folder
        if self.kind is AgentMemoryKind.FILES and folder is not None:
            from workbench.agentmem.files import FileMemory

            return FileMemory(folder)
        if self.kind is AgentMemoryKind.EXTRACTED and folder is not None:
            from workbench.agentmem.extracted import ExtractedMemory

            return ExtractedMemory(folder)
        if self.kind is AgentMemoryKind.MEM0 and self.mem0 is not None and folder is not None:
            from workbench.agentmem.mem0 import Mem0Memory

            return Mem0Memory(replace(self.mem0, directory=folder))
        return None
