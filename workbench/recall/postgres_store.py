"""The shared store: PostgreSQL with pgvector, through agent-framework-postgres, searched through an
HNSW index. Several users and machines can point at one server; the storage and search scopes keep
them apart, as on DuckDB.

A forget deletes the records, then rewrites each table it deleted from (`VACUUM FULL`, which also
rebuilds its indexes), so no page of the table or of an index holds the deleted text or vectors. What
it cannot reach: the server's write-ahead log until its segments are recycled, a WAL archive,
replicas that have not replayed the rewrite yet, and backups (the README says so).

The connection string may hold a password: it is kept as a `SecretString`, and what is shown
(`location`, every message of this module) is rebuilt from its parts without the password."""

from __future__ import annotations

from typing import Any

import psycopg
from agent_framework import BaseVectorStore, SearchResults, SecretString, VectorStoreCollectionDefinition
from agent_framework._vectors import EmbeddingClient
from agent_framework_postgres import PostgresCollection, PostgresStore
from psycopg import sql
from psycopg.conninfo import conninfo_to_dict
from psycopg.rows import dict_row

from workbench.runtime.config import ConfigError

URL_PREFIXES = ("postgresql://", "postgres://")
ENVIRONMENT = "WORKBENCH_RECALL_POSTGRES"
_SCHEMA = "public"
# A VACUUM FULL rebuilds the HNSW index; with room in memory the build does not spill to disk.
_VACUUM_MEMORY = "512MB"
EF_SEARCH = 100


def is_connection_url(store: str) -> bool:
    return store.startswith(URL_PREFIXES)


def display_location(conninfo: str) -> str:
    """The server and database a connection string names, as a URL without its password. Raises
    ConfigError (naming no part of the string: a malformed one may cut a password anywhere)."""
    try:
        parts = conninfo_to_dict(conninfo)
    except psycopg.Error:
        raise ConfigError(
            f"the PostgreSQL connection string (--recall-store or {ENVIRONMENT}) is not valid: "
            "use postgresql://user:password@host:port/database or key=value pairs"
        ) from None
    user = str(parts.get("user") or "")
    secret = ":***" if parts.get("password") else ""
    host, port = str(parts.get("host") or ""), f":{parts['port']}" if parts.get("port") else ""
    socket = f"?host={host}" if host.startswith("/") else ""  # a Unix socket's directory
    server = "" if socket else f"{host}{port}"
    return f"postgresql://{user}{secret}{'@' if user or secret else ''}{server}/{parts.get('dbname') or ''}{socket}"


class RecallPostgresCollection(PostgresCollection[Any, Any]):
    """A PostgreSQL collection that creates the pgvector extension it needs and scans a scope."""

    async def ensure_collection_exists(self, *, operation_options: Any = None) -> None:
        # The framework leaves the extension to the caller; the vector type must exist before the table.
        async with self._client.connection() as connection:  # the store's pool (framework private)
            await connection.execute("CREATE EXTENSION IF NOT EXISTS vector")
        await super().ensure_collection_exists(operation_options=operation_options)

    async def _inner_search(self, **kwargs: Any) -> SearchResults[Any]:
        # pgvector's default candidate list (40) missed a quarter of the exact top 5 of the lexical
        # embedder's sparse vectors at 2,000 messages; bench/recall.py measures recall@5 at this one.
        options = dict(kwargs.get("operation_options") or {})
        if not options.get("exact"):
            options.setdefault("hnsw_ef_search", EF_SEARCH)
        return await super()._inner_search(**{**kwargs, "operation_options": options})

    async def scan(self, filter: Any) -> list[dict[str, Any]]:
        """Every record matching `filter`, without vectors, in one query (no ordering, no pages)."""
        columns = self._prepare_columns(include_vectors=False)  # the framework's own column list
        where, parameters = self._prepare_filter(filter)  # the framework's own filter compiler
        statement = sql.SQL("SELECT {} FROM {} WHERE {}").format(
            sql.SQL(", ").join(map(sql.Identifier, columns)), self._table, where
        )
        async with (
            self._client.connection() as connection,  # the store's pool (framework private)
            connection.cursor(row_factory=dict_row) as cursor,
        ):
            await cursor.execute(statement, parameters)
            return list(await cursor.fetchall())


class RecallPostgresStore(PostgresStore):
    """`PostgresStore` handing out `RecallPostgresCollection`s on its one pool."""

    def get_collection(
        self,
        record_type: type[Any],
        *,
        definition: VectorStoreCollectionDefinition | None = None,
        collection_name: str | None = None,
        embedding_generator: EmbeddingClient | None = None,
    ) -> RecallPostgresCollection:
        collection = RecallPostgresCollection(
            record_type,
            client=self._client.client,
            schema=self.schema,
            definition=definition,
            collection_name=collection_name,
            embedding_generator=embedding_generator if embedding_generator is not None else self.embedding_generator,
        )
        collection._client = self._client  # the store's pool and lifecycle, as PostgresStore.get_collection does
        collection._shared_client = True  # the store closes the pool, not the collection (as the framework's)
        return collection


class PostgresBackend:
    """Every recall collection as a table of one PostgreSQL database with pgvector."""

    kind = "PostgreSQL"
    vector_index = "hnsw"
    erases: str | None = "vacuumed its table (VACUUM FULL)"

    def __init__(self, conninfo: str) -> None:
        self.location: str | None = display_location(conninfo)
        self._conninfo = SecretString(conninfo)

    def __repr__(self) -> str:
        return f"PostgresBackend({self.location!r})"

    def open(self) -> BaseVectorStore:
        return RecallPostgresStore(connection_string=self._conninfo, schema=_SCHEMA)

    async def erase_deleted(self, store: BaseVectorStore, collections: list[str]) -> BaseVectorStore:
        """Rewrite each table a forget deleted from: the new files hold only live rows, and the old
        ones are truncated when the command commits. VACUUM cannot run inside a transaction, so it gets
        a connection of its own."""
        async with await psycopg.AsyncConnection.connect(self._conninfo.get_secret_value(), autocommit=True) as conn:
            await conn.execute(sql.SQL("SET maintenance_work_mem = {}").format(sql.Literal(_VACUUM_MEMORY)))
            for name in collections:
                await conn.execute(sql.SQL("VACUUM FULL {}.{}").format(sql.Identifier(_SCHEMA), sql.Identifier(name)))
        return store

    def size_on_disk(self) -> int | None:
        return None  # on the server: bench/recall.py asks the server for its tables' sizes

    def exists(self) -> bool:
        return True  # a server may hold records from an earlier run or another machine
