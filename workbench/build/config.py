"""The start configuration: what a start asks for, read once from the parsed command line, the environment
(OPENAI_*, AZURE_OPENAI_*, WORKBENCH_RECALL_POSTGRES, read by the model's and recall's configurations with
their precedence: an option first) and `workbench.toml` (read once: its contract, and its `[start]` table's
options where neither the command line nor the environment gives them: `workbench.build.start_file`),
checked in one place (`read`), one line for what is wrong (ContractFileError, ConfigError: `workbench` exits
2 before any command runs).

A frozen dataclass, not a pydantic model: `workbench` checks it before its window opens, and pydantic costs
0.15-0.25 s to import on this machine (the window opens without it: tests/test_layers.py), while every value
here is already typed by its own configuration's checks. No key or password is in its repr: the model's
and recall's keep theirs out, and the Redis URL (which may hold one) is left out here."""

from __future__ import annotations

import argparse
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from workbench.agentmem.config import AgentMemoryConfig
from workbench.recall.config import RecallConfig
from workbench.runtime.config import ConfigError, Mode, ModelConfig, WriterKind

if TYPE_CHECKING:
    from workbench.contract_file import WorkbenchFile
    from workbench.memory.contract import Contract
    from workbench.persist.journal import ForgetJournal


@dataclass(frozen=True)
class StartConfig:
    """What one start asks for, each part checked: the model, recall, the agent memory, the contract;
    `persist` (with `redis`, the server `--persist redis://…` names), --mode and --writer as given (None:
    chosen by what loaded: `mode_for`, `writer_for`), and PATH and --agents, whose memories a forget
    reaches."""

    model: ModelConfig
    recall: RecallConfig
    agent_memory: AgentMemoryConfig
    contract: Contract
    persist: bool = False
    redis: str | None = field(default=None, repr=False)  # may hold a password
    mode: Mode | None = None
    writer: WriterKind | None = None
    path: Path | None = None
    agents: tuple[str, ...] = ()
    # Where the model was named when not on the command line: the file's `[start]` (said in the window).
    model_from: str | None = None

    @classmethod
    def read(
        cls, args: argparse.Namespace, *, model: ModelConfig | None = None, environ: Mapping[str, str] | None = None
    ) -> StartConfig:
        """The options checked in today's order: the contract (ContractFileError), the model, recall and
        the agent memory (ConfigError), each one line; the model's and recall's variables read from one
        copy of `environ` (default the process's), and workbench.toml read once: its contract, and its
        `[start]` options where the command line leaves one out and no variable stands for it (then a
        ConfigError names them and the file). `model`: one already read (the tests' own)."""
        from workbench.build.start_file import applied

        env = dict(os.environ if environ is None else environ)
        file = workbench_file(args)
        contract = contract_config(args, file)
        given, where = applied(args, file, env)
        args = argparse.Namespace(**{**vars(args), **given})
        try:
            chat = model if model is not None else model_config(args, env)
            recall = recall_config(args, chat, env)
            agent_memory = agent_memory_config(args, chat)
        except ConfigError as exc:
            if not given:
                raise
            raise ConfigError(f"{exc} (with {', '.join(given)} from {where})") from None
        persist = getattr(args, "persist", None)
        path = getattr(args, "path", None)
        return cls(
            chat,
            recall,
            agent_memory,
            contract,
            persist=bool(persist),
            redis=persist if isinstance(persist, str) else None,
            mode=Mode(chosen) if (chosen := getattr(args, "mode", None)) else None,
            writer=WriterKind(chosen) if (chosen := getattr(args, "writer", None)) else None,
            path=Path(path) if path is not None else None,
            agents=tuple(getattr(args, "agents", None) or ()),
            model_from=where if "model" in given and model is None else None,
        )

    @classmethod
    def of(cls, args: argparse.Namespace, config: ModelConfig | StartConfig) -> StartConfig:
        """`config` when it is the start configuration already read; else the options read with the model's
        `config` (callers that read only the model's: tests, benches)."""
        return config if isinstance(config, StartConfig) else cls.read(args, model=config)

    def mode_for(self, loaded: Sequence[object]) -> Mode:
        """--mode, else a context provider for the user's agents and manual injection for the built-in ones."""
        return self.mode or (Mode.PROVIDER if loaded else Mode.MANUAL)

    def writer_for(self, loaded: Sequence[object]) -> WriterKind:
        """--writer, else the writer model; for the user's agents, the host's parse unless --writer-model
        names a model (their model is theirs: the workbench does not send it its writer's prompts)."""
        if self.writer is not None:
            return self.writer
        return WriterKind.HOST if loaded and not self.model.writer_model else WriterKind.MODEL

    def stores_on_disk(self) -> tuple[str, ...]:
        """The stores a forget of this start reaches beyond the process, as the options that open them:
        what its journal records (`workbench.persist.journal`). Names no password."""
        stores = [self._persist_store()] if self.persist else []
        if (conninfo := self.recall.postgres) is not None:
            from workbench.recall.postgres_store import display_location

            stores.append(f"--recall-store {display_location(conninfo)}")
        elif (path := self.recall.store_path) is not None and (self.recall.enabled or path.exists()):
            stores.append(f"--recall-store {path.resolve()}")
        if self.agent_memory.kind is not None:
            stores.append(f"--agent-memory {self.agent_memory.kind} --agent-memory-dir {self.agent_memory.root}")
        # Your agents' memories may be on disk, where only loading them again reaches.
        if self.path is not None:
            stores.append(str(self.path.resolve()))
        stores += [f"--agents {reference}" for reference in self.agents]
        return tuple(stores)

    def _persist_store(self) -> str:
        if self.redis is None:
            return "--persist"
        from workbench.agentmem.redis_server import display_url

        return f"--persist {display_url(self.redis)}"

    def journal(self) -> ForgetJournal | None:
        """The journal of this start's forgets, when a forget reaches anything on disk."""
        from workbench.files import data_dir
        from workbench.persist.journal import FILE_NAME, ForgetJournal

        stores = self.stores_on_disk()
        return ForgetJournal(data_dir() / FILE_NAME, stores) if stores else None


def model_config(args: argparse.Namespace, environ: Mapping[str, str] = os.environ) -> ModelConfig:
    """The model's options; --timeout and --max-tokens left out (None: the parser gives no default, so
    that workbench.toml can) are the model's defaults."""
    bounds = {name: value for name in ("timeout", "max_tokens") if (value := getattr(args, name, None)) is not None}
    return ModelConfig.from_options(
        model=args.model,
        base_url=args.base_url,
        writer_model=args.writer_model,
        writer_format=args.writer_format,
        azure_endpoint=args.azure_endpoint,
        api_version=args.api_version,
        environ=environ,
        **bounds,
    )


def recall_config(
    args: argparse.Namespace, chat: ModelConfig | None = None, environ: Mapping[str, str] = os.environ
) -> RecallConfig:
    return RecallConfig.from_options(
        enabled=bool(args.recall),  # None: not given
        store=args.recall_store,
        embedding_model=args.embedding_model,
        embedding_base_url=args.embedding_base_url,
        base_url=args.base_url,
        on_demand=args.recall_on_demand,
        chat=chat,
        environ=environ,
    )


def agent_memory_config(args: argparse.Namespace, chat: ModelConfig) -> AgentMemoryConfig:
    """--agent-memory's choice and folder, checked (mem0: a live model and --embedding-model)."""
    return AgentMemoryConfig.from_options(
        args.agent_memory,
        args.agent_memory_dir,
        chat=chat,
        embedding_model=args.embedding_model,
        embedding_base_url=args.embedding_base_url,
    )


def workbench_file(args: argparse.Namespace) -> WorkbenchFile:
    """The run's workbench.toml, parsed: --config's, else the one beside PATH's agents, else the current
    folder's (ContractFileError, one line naming it, when it cannot be read or is not TOML)."""
    from workbench.contract_file import workbench_file as parsed

    path = getattr(args, "path", None)
    folders = [] if path is None else [Path(path) if Path(path).is_dir() else Path(path).parent]
    return parsed(getattr(args, "config", None), [*folders, Path.cwd()])


def contract_config(args: argparse.Namespace, file: WorkbenchFile | None = None) -> Contract:
    """The run's contract from workbench.toml (`file`, default `workbench_file(args)`) and --keys;
    ContractFileError, one line naming the file or the option, when it declares none that can be used."""
    from workbench.contract_file import declared_contract

    file = workbench_file(args) if file is None else file
    return declared_contract(getattr(args, "config", None), getattr(args, "keys", None), file=file)
