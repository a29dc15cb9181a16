"""What `--agent-memory mem0` needs, checked before anything heavy is loaded: a live model, an embedding
model on an OpenAI-compatible server, and the optional extra installed. Light to import."""

from __future__ import annotations

import importlib.util
import os
from dataclasses import dataclass, field
from pathlib import Path

from workbench.runtime.config import ConfigError, ModelConfig

MEM0_EXTRA = 'pip install "agent-memory-workbench[mem0]"'


def mem0_installed() -> bool:
    """Whether the extra's packages are installed (without importing them: mem0 writes on import)."""
    try:
        return all(importlib.util.find_spec(name) is not None for name in ("mem0", "agent_framework_mem0"))
    except (ImportError, ValueError):
        return False


@dataclass(frozen=True)
class Mem0Config:
    """Mem0's language model and embedder are the app's: `model` on `base_url` (None: OpenAI), and
    `embedding_model` on `embedding_base_url`. `directory` holds its vector store and history database.
    The key is never shown in repr."""

    model: str
    embedding_model: str
    directory: Path | None = None  # None until given one: mem0/ in --agent-memory's folder, or the lab's own
    base_url: str | None = None
    embedding_base_url: str | None = None
    api_key: str | None = field(default=None, repr=False)
    timeout: float = 120.0

    @classmethod
    def from_options(
        cls,
        chat: ModelConfig,
        *,
        embedding_model: str | None,
        embedding_base_url: str | None = None,
        directory: Path | None = None,
    ) -> Mem0Config:
        if not chat.is_live or chat.model is None:
            raise ConfigError(
                "--agent-memory mem0 needs --model: Mem0 asks a language model to extract memories from each "
                "turn, which the built-in scripted model cannot do"
            )
        if chat.azure is not None:
            raise ConfigError(
                "--agent-memory mem0 runs Mem0 on an OpenAI-compatible server (--base-url or OpenAI); "
                "it is not wired to Azure OpenAI"
            )
        if not embedding_model:
            raise ConfigError(
                "--agent-memory mem0 needs --embedding-model: Mem0 finds memories by embeddings from an "
                "OpenAI-compatible /v1/embeddings server (--embedding-base-url, default: --base-url's)"
            )
        if os.environ.get("OPENROUTER_API_KEY"):
            raise ConfigError(
                "OPENROUTER_API_KEY is set: Mem0 would send its extraction calls to OpenRouter instead of "
                "--model's server; unset it to use Mem0 here"
            )
        if not mem0_installed():
            raise ConfigError(f"--agent-memory mem0 needs the optional Mem0 packages: {MEM0_EXTRA}")
        return cls(
            model=chat.model,
            embedding_model=embedding_model,
            directory=directory,
            base_url=chat.base_url,
            embedding_base_url=embedding_base_url or chat.base_url,
            api_key=chat.api_key,
            timeout=chat.timeout,
        )

    @property
    def path(self) -> Path:
        """The directory Mem0's files live in."""
        if self.directory is None:
            raise ValueError("Mem0 was given no directory (AgentMemoryConfig.build and the lab give it one)")
        return self.directory.expanduser().resolve()
