"""`--agent-memory`: which of Agent Framework's own memories both agents run, and where it keeps its files."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

from workbench.files import data_dir

if TYPE_CHECKING:
    from workbench.agentmem.mem0_config import Mem0Config
    from workbench.runtime.config import ModelConfig
    from workbench.runtime.memories import AgentMemory

DIRECTORY_NAME = "agent-memory"


@dataclass(frozen=True)
class LabRow:
    """An agent memory's row in the drift lab (`workbench drift`): its policy's name, title and what it keeps, as
    the report shows them, and what a run needs to run it honestly (a live model that extracts its memories and
    --embedding-model to find them, as Mem0; the framework's extracted memory, which a framework that retired
    it lacks). The lab makes the memory with its choice's `make`, over a temporary folder of its own
    (`workbench.drift.agentmem_policy`), one row per choice that has one, in the table's order."""

    name: str
    title: str
    keeps: str
    needs_embedding_model: bool = False
    needs_extracted_memory: bool = False


@dataclass(frozen=True)
class AgentMemoryChoice:
    """One of `--agent-memory`'s choices: its name (the option's value, and its folder's under
    --agent-memory-dir), its words in --help, whether it offers the model functions (a live model then
    needs the framework's function-invocation loop), and how it is made over its folder (`make`, its
    modules loaded only then) and checked before anything runs (`check`: ConfigError, one line); `lab`: its row
    in the drift lab, if it has one (a model that calls functions is then needed as `calls_functions` says)."""

    name: str
    help: str
    make: Callable[[AgentMemoryConfig, Path], AgentMemory | None]
    calls_functions: bool = False
    check: Callable[[ModelConfig | None, str | None, str | None], Mem0Config | None] | None = None
    lab: LabRow | None = None


def over_folder(module: str, name: str) -> Callable[[AgentMemoryConfig, Path], AgentMemory]:
    """A memory made over its folder by `module`'s class `name`, loaded only when it is made (a plain
    start loads none of the memories' code)."""

    def make(_: AgentMemoryConfig, folder: Path) -> AgentMemory:
        from importlib import import_module

        made: AgentMemory = getattr(import_module(module), name)(folder)
        return made

    return make


def _extracted_available(*_: object) -> None:
    from workbench.agentmem.extracted import unavailable
    from workbench.runtime.config import ConfigError

    if (why := unavailable()) is not None:
        raise ConfigError(why)


def _mem0(config: AgentMemoryConfig, folder: Path) -> AgentMemory | None:
    if config.mem0 is None:
        return None
    from workbench.agentmem.mem0 import Mem0Memory

    return Mem0Memory(replace(config.mem0, directory=folder))


def _mem0_checked(chat: ModelConfig | None, embedding_model: str | None, embedding_base_url: str | None) -> Mem0Config:
    from workbench.agentmem.mem0_config import Mem0Config
    from workbench.runtime.config import ModelConfig

    return Mem0Config.from_options(
        chat or ModelConfig(), embedding_model=embedding_model, embedding_base_url=embedding_base_url
    )


# The agent memories, listed once: --agent-memory's choices and help, the app's build (`AgentMemoryConfig`),
# the stores a script reaches (`workbench.cli.stores`) and the drift lab's rows (a choice's `lab`) read them.
# Adding one: its module, and a line here.
AGENT_MEMORIES = {
    choice.name: choice
    for choice in (
        AgentMemoryChoice(
            "files",
            "the model writes memory files with file_memory_* functions (FileMemoryProvider; needs a model that "
            "calls functions)",
            over_folder("workbench.agentmem.files", "FileMemory"),
            calls_functions=True,
            lab=LabRow(
                "memory_files",
                "model-written memory files",
                "the files the model writes with file_memory_* functions (FileMemoryProvider), their index in each "
                "request; the product's forget rewrites or deletes every file holding a forgotten value",
            ),
        ),
        AgentMemoryChoice(
            "extracted",
            "a model call after each turn extracts topic memories into MEMORY.md and topic files (the framework's "
            "extracted memory, which it retires after 2026-12-31)",
            over_folder("workbench.agentmem.extracted", "ExtractedMemory"),
            check=_extracted_available,
            lab=LabRow(
                "extracted",
                "extracted memory",
                "topic memories an extraction prompt writes after each turn (the framework's extracted memory): "
                "MEMORY.md and up to three matching topic files in each request; the product's forget rewrites its "
                "files. Its extraction calls are memory calls",
                needs_extracted_memory=True,
            ),
        ),
        AgentMemoryChoice(
            "mem0",
            "Mem0 run locally extracts memories after each turn and finds them by embeddings (needs --model, "
            '--embedding-model and pip install "agent-memory-workbench[mem0]")',
            _mem0,
            check=_mem0_checked,
            lab=LabRow(
                "mem0",
                "Mem0",
                "the memories the model extracts each turn into Mem0 (mem0ai, local), the relevant ones in each "
                "request; the product's forget deletes them through Mem0. Mem0's own model calls are memory calls, "
                "its embeddings requests embeddings calls",
                needs_embedding_model=True,
            ),
        ),
    )
}
MEM0 = "mem0"  # the one that needs a live model and --embedding-model (`workbench.cli.stores` says so)


def default_directory() -> Path:
    return data_dir() / DIRECTORY_NAME


@dataclass(frozen=True)
class AgentMemoryConfig:
    kind: str | None = None  # a name in AGENT_MEMORIES
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
        """The choice and its folder, checked by the choice's own `check` before anything is loaded
        (ConfigError: mem0 says what is missing, a live `chat` model, `embedding_model`, the extra; extracted
        memory that the installed framework no longer has it)."""
        chosen = AGENT_MEMORIES[kind] if kind else None
        mem0 = None
        if chosen is not None and chosen.check is not None:
            mem0 = chosen.check(chat, embedding_model, embedding_base_url)
        return cls(chosen.name if chosen else None, Path(directory).expanduser() if directory else None, mem0)

    @property
    def calls_functions(self) -> bool:
        """Whether the chosen memory offers the model functions (memory files' file_memory_*, extracted
        memory's list/read/write_memory...): a live model needs the framework's function-invocation loop to
        use them. Mem0 offers none: it extracts and searches on its own."""
        return self.kind is not None and AGENT_MEMORIES[self.kind].calls_functions

    @property
    def root(self) -> Path:
        """The folder `--agent-memory-dir` names (the chosen memory keeps its files in a folder under it)."""
        return (self.directory or default_directory()).resolve()

    @property
    def folder(self) -> Path | None:
        """The folder the chosen memory keeps its files in, named after the choice (None without one)."""
        if self.kind is None:
            return None
        return self.root / self.kind

    def build(self) -> AgentMemory | None:
        """The memory, or None without `--agent-memory`. Nothing is written until an agent runs."""
        folder = self.folder
        if self.kind is None or folder is None:
            return None
        return AGENT_MEMORIES[self.kind].make(self, folder)
