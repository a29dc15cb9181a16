"""What the parsed command line asks for, as the typed configurations the rest of the workbench takes:
the model's, recall's, the agent memory's, the contract, and --persist's Redis URL. Each checks its
own values (ConfigError, ContractFileError: one line); `workbench.cli.dispatch` reads them all before
any command runs, so a bad one stops every command."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from workbench.agentmem.config import AgentMemoryConfig
from workbench.recall.config import RecallConfig
from workbench.runtime.config import ModelConfig

if TYPE_CHECKING:
    from workbench.memory.contract import Contract


def model_config(args: argparse.Namespace) -> ModelConfig:
    return ModelConfig.from_options(
        model=args.model,
        base_url=args.base_url,
        writer_model=args.writer_model,
        timeout=args.timeout,
        writer_format=args.writer_format,
        azure_endpoint=args.azure_endpoint,
        api_version=args.api_version,
        max_tokens=args.max_tokens,
    )


def recall_config(args: argparse.Namespace, chat: ModelConfig | None = None) -> RecallConfig:
    return RecallConfig.from_options(
        enabled=args.recall,
        store=args.recall_store,
        embedding_model=args.embedding_model,
        embedding_base_url=args.embedding_base_url,
        base_url=args.base_url,
        on_demand=args.recall_on_demand,
        chat=chat,
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


def contract_config(args: argparse.Namespace) -> Contract:
    """The run's contract from --config (or a workbench.toml beside PATH's agents, else in the current
    folder) and --keys; ContractFileError, one line naming the file or the option, when it declares none
    that can be used. `main` checks it before any command runs."""
    from pathlib import Path

    from workbench.contract_file import declared_contract

    path = getattr(args, "path", None)
    folders = [] if path is None else [Path(path) if Path(path).is_dir() else Path(path).parent]
    return declared_contract(getattr(args, "config", None), getattr(args, "keys", None), [*folders, Path.cwd()])


def redis_persist(args: argparse.Namespace) -> str | None:
    """The Redis URL `--persist redis://…` keeps the agents' histories on, if it gave one."""
    return args.persist if isinstance(args.persist, str) else None
