"""What the user chose for recall: on or off, the store, the embedder. Light to import."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from workbench.recall import NAME, UNIT
from workbench.recall.paths import default_path
from workbench.recall.postgres_names import ENVIRONMENT, is_connection_url
from workbench.runtime.config import ConfigError, ModelConfig, check_deployment, server_url

if TYPE_CHECKING:
    from agent_framework import ContextProvider

    from workbench.memory.forget import ForgetPlan
    from workbench.recall.setup import RecallSetup
    from workbench.recall.store import RecallStore
    from workbench.runtime.calls import CallLog
    from workbench.runtime.remembered import HeldItem
    from workbench.runtime.view import RecalledMessage

MEMORY_STORE = "memory"


@dataclass(frozen=True)
class RecallConfig:
    """`embedding_model` None means the built-in lexical embedder. `store` None means the PostgreSQL
    database named by $WORKBENCH_RECALL_POSTGRES when it is set, else the DuckDB file in the user's data
    directory; "memory" means Agent Framework's InMemoryStore (gone on exit); a postgresql:// URL a
    PostgreSQL database with pgvector. The store may hold a password: it is never in the repr."""

    enabled: bool = False
    store: str | None = field(default=None, repr=False)
    embedding_model: str | None = None
    embedding_base_url: str | None = None
    api_key: str | None = field(default=None, repr=False)
    timeout: float = 60.0
    on_demand: bool = False  # the model calls a search function instead of recall before every run
    # The Azure OpenAI chat configuration whose resource and sign-in the embedding deployment shares.
    azure: ModelConfig | None = field(default=None, repr=False)

    def __post_init__(self) -> None:
        if (conninfo := self.postgres) is not None:
            from workbench.recall.postgres_store import display_location

            display_location(conninfo)  # a malformed connection string is refused before anything starts

    @classmethod
    def from_options(
        cls,
        *,
        enabled: bool = False,
        store: str | None = None,
        embedding_model: str | None = None,
        embedding_base_url: str | None = None,
        base_url: str | None = None,
        timeout: float = 60.0,
        on_demand: bool = False,
        chat: ModelConfig | None = None,
        environ: Mapping[str, str] = os.environ,
    ) -> RecallConfig:
        """The embeddings server is --embedding-base-url, else the chat model's (--base-url or
        OPENAI_BASE_URL), else OpenAI; the key is OPENAI_API_KEY, as for the chat model. When the chat
        model is on Azure OpenAI, the embedding deployment (--embedding-model, else
        AZURE_OPENAI_EMBEDDING_DEPLOYMENT_NAME) is on the same resource, signed in the same way. `environ`:
        the environment these are read from (default the process's)."""
        if store is not None and store != MEMORY_STORE and not is_connection_url(store):
            folder = Path(store).expanduser().parent
            if not folder.is_dir():  # a mistyped path made a tree of folders, in silence
                from workbench.memory.shown import quoted

                raise ConfigError(
                    f"--recall-store: the folder {quoted(str(folder), 200)} does not exist; create it first, or name "
                    "a file in a folder that does (workbench creates only its own data directory)"
                )
        if embedding_base_url and not embedding_model:
            raise ConfigError("--embedding-base-url needs --embedding-model: name the model that server serves")
        if chat is not None and chat.azure is not None and not embedding_base_url:
            deployment = embedding_model or environ.get("AZURE_OPENAI_EMBEDDING_DEPLOYMENT_NAME") or None
            if deployment is None:
                return cls(enabled=enabled, store=store, timeout=timeout, on_demand=on_demand)
            check_deployment("--embedding-model", deployment)
            return cls(enabled, store, deployment, timeout=chat.timeout, on_demand=on_demand, azure=chat)
        if not embedding_model:
            return cls(enabled=enabled, store=store, timeout=timeout, on_demand=on_demand)
        url = (
            server_url(embedding_base_url, "--embedding-base-url")
            or server_url(base_url, "--base-url")
            or server_url(environ.get("OPENAI_BASE_URL"), "OPENAI_BASE_URL")
        )
        api_key = environ.get("OPENAI_API_KEY") or None
        if api_key is None and url is None:
            raise ConfigError(
                "OpenAI embeddings need a key: set OPENAI_API_KEY, or point --embedding-base-url at a local "
                "OpenAI-compatible server"
            )
        return cls(enabled, store, embedding_model, url, api_key, timeout, on_demand)

    @property
    def store_path(self) -> Path | None:
        """The DuckDB file, or None for the in-memory or a PostgreSQL store."""
        if self.store == MEMORY_STORE or self.postgres is not None:
            return None
        return Path(self.store).expanduser() if self.store else default_path()

    @property
    def postgres(self) -> str | None:
        """The PostgreSQL connection string: a postgresql:// --recall-store, else (no --recall-store)
        $WORKBENCH_RECALL_POSTGRES. Never shown: see `workbench.recall.postgres_store`."""
        if self.store is not None:
            return self.store if is_connection_url(self.store) else None
        return os.environ.get(ENVIRONMENT) or None

    def build(self, calls: CallLog | None = None, *, store: RecallStore | None = None) -> RecallSetup:
        """The store (`store` when start-up opened it, else this config's, opened at first use) and the
        embedder, its calls recorded in `calls` (the runtime's log). Loads Agent Framework; DuckDB only
        for a file, psycopg only for PostgreSQL."""
        from workbench.recall.embedders import build_azure_embedder, build_embedder, logged_embedder
        from workbench.recall.setup import RecallSetup

        if store is None:
            store = self.make_store()
        if self.azure is not None and self.embedding_model is not None:
            embedder = build_azure_embedder(self.embedding_model, self.azure)
        else:
            embedder = build_embedder(
                self.embedding_model, base_url=self.embedding_base_url, api_key=self.api_key, timeout=self.timeout
            )
        if calls is not None:
            logged_embedder(embedder, calls)
        return RecallSetup(store, embedder, on_demand=self.on_demand)

    def memory(self, calls: CallLog | None = None, *, store: RecallStore | None = None) -> RecallSetup | DeferredRecall:
        """Recall for the runtime: built now when it is on, else at its first use (`DeferredRecall`)."""
        return self.build(calls, store=store) if self.enabled or store is not None else DeferredRecall(self, calls)

    def make_store(self) -> RecallStore:
        """The store this config names, not opened yet. A malformed connection string is a
        ConfigError naming none of it."""
        from workbench.recall.store import RecallStore

        path, conninfo = self.store_path, self.postgres
        if conninfo is not None:
            from workbench.recall.postgres_store import PostgresBackend

            return RecallStore(PostgresBackend(conninfo))
        if path is None:
            return RecallStore()
        from workbench.recall.duckdb_file import DuckDBBackend

        return RecallStore(DuckDBBackend(path))


class DeferredRecall:
    """Recall while it is off, built (its modules loaded, its store opened) at its first use: turned on,
    listed, or reached by a forget (an earlier run may have left a store). A start with recall off
    thus loads none of it: about 15 ms of the time to the agents' being ready (`bench/startup.py`)."""

    name = NAME
    unit = UNIT

    def __init__(self, config: RecallConfig, calls: CallLog | None) -> None:
        self._config, self._calls = config, calls
        self._built: RecallSetup | None = None

    @property
    def built(self) -> RecallSetup:
        if self._built is None:
            self._built = self._config.build(self._calls)
        return self._built

    @property
    def location(self) -> str | None:
        return self.built.location

    def describe(self) -> str:
        return self.built.describe()

    def providers(self, agent: str) -> list[ContextProvider]:
        return self.built.providers(agent)

    def turn_started(self, agent: str) -> None:
        if self._built is not None:
            self._built.turn_started(agent)

    def recalled(self, agent: str) -> list[RecalledMessage]:
        return self._built.recalled(agent) if self._built is not None else []

    async def held(self) -> list[HeldItem]:
        return await self.built.held()

    async def declared(self, keys: frozenset[str]) -> set[str]:
        return await self.built.declared(keys)

    async def erase(self, plan: ForgetPlan) -> int:
        return await self.built.erase(plan)

    async def close(self) -> None:
        """The session ends: the store closed, if it was built (nothing is built to close it)."""
        if self._built is not None:
            await self._built.close()

    def close_now(self) -> None:
        if self._built is not None:
            self._built.close_now()
