"""The shared store: PostgreSQL with pgvector, through agent-framework-postgres. Several users and
machines can point at one server; the storage and search scopes keep them apart, as on DuckDB.

Each recall collection is two tables, both the framework's own `PostgresCollection`s on the store's
one pool: `recall_<embedder>_<size>` holds the messages (key, text, role, turn, time, scope ids) with
no vector index, and `recall_<embedder>_<size>_vectors` holds each message's embedding with its key
and scope ids, under the HNSW index. A search is one statement: the index walk within the scope,
joined to the texts by key, on a connection that started with the HNSW search settings (and, when
that walk found too few records of the scope, the same statement again in strict order). A forget
finds its records in the messages (one query), deletes their embeddings, then the messages, then
rewrites the messages table (`VACUUM FULL`: new files holding only live rows, the old ones truncated
when it commits), so no byte of a deleted text is left in the table's files, and the rewrite costs
what a table of short texts costs, not an HNSW index build (rebuilding that index made a forget take
72 s at 100,000 messages).

What a forget leaves: the embeddings table is not rewritten, nor vacuumed (a plain `VACUUM` of it took
80 s for 1,000 deleted of 100,000 embeddings: pgvector repairs the HNSW graph around each one). A
deleted message's embedding, key and scope ids stay in that table's pages and in its index's pages,
out of every search's reach (the index still holds the entry; the search skips the dead row), until
autovacuum frees the space once enough rows have changed and new rows overwrite it; only a `VACUUM
FULL` of the embeddings table (an index build: for an operator at a quiet hour) removes them at once.
An embedding is not the text, but it is derived from it: the built-in lexical embedder's is a bag of
hashed words and trigrams, so someone who reads the raw files and guesses a value can test the guess
against it, and a server model's embedding can be partly inverted. Nor can a forget reach the
server's write-ahead log until its segments are recycled, a WAL archive, replicas that have not
replayed the rewrite yet, or backups; and a transaction that was already open when the forget deleted
(another session's long query or an idle transaction) makes the rewrite keep the rows it may still
see (docs/recall.md says so).

The connection string may hold a password: it is kept as a `SecretString`, and what is shown
(`location`, every message of this module) is rebuilt from its parts without the password."""

from __future__ import annotations

import asyncio
import math
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any, cast

import psycopg
from agent_framework import (
    BaseVectorStore,
    Filter,
    FilterGroup,
    SearchResults,
    SearchType,
    SecretString,
    SupportsGetEmbeddings,
    VectorStoreCollectionDefinition,
)
from agent_framework.exceptions import IntegrationException
from agent_framework_postgres import PostgresCollection, PostgresStore
from pgvector import Vector as PgVector
from psycopg import sql
from psycopg.conninfo import conninfo_to_dict, make_conninfo
from psycopg.rows import dict_row
from psycopg_pool import AsyncConnectionPool, PoolTimeout

from workbench.memory.forget import LOOKALIKES
from workbench.recall.postgres_names import ENVIRONMENT
from workbench.recall.records import SCOPE_FIELDS
from workbench.recall.store import Collection
from workbench.runtime.config import ConfigError
from workbench.runtime.failures import causes

_SCHEMA = "public"
_VECTORS_SUFFIX = "_vectors"
# The HNSW build and search, from bench/hnsw.py's measurements at 100,000 messages of the lexical
# embedder: the framework's default build (m 16, ef_construction 64) found 0.53 of the exact top 5 with
# 100 candidates and 0.92 with 1,000; this one finds 0.93 with 100, 0.96 with 150 (500 queries) and
# 0.99 with 200. 150 candidates meet issue 19's two targets (recall@5 at least 0.95, a search within
# 20 ms); 200 cost a third more time for the last 0.03 (docs/recall.md has the figures). A connection
# string's own `-c hnsw.ef_search=N` wins (`search_settings`).
HNSW_BUILD = {"postgres.m": 32, "postgres.ef_construction": 128}
EF_SEARCH = 150
# Set once per connection of the store's pool. The framework searches with pgvector's iterative scan in
# strict order; a search here starts without it (its bookkeeping cost a fifth of every search: 12.6 ms
# against 15.6 at 100,000 messages, the same rows every time) and goes on in strict order only when the
# first candidates did not hold enough records of the scope (`_inner_search`).
SEARCH_SETTINGS = {"hnsw.ef_search": str(EF_SEARCH), "hnsw.iterative_scan": "off"}
_GO_ON = "SET LOCAL hnsw.iterative_scan = strict_order"
CONNECT_TIMEOUT = 5  # seconds a start waits for the server before it says it cannot reach it
# Mid-run, an operation waits POOL_WAIT seconds for one of the pool's connections (the framework's pool
# waited 30 s while it tried to reconnect to a server that was gone), then asks the server itself why
# with one connect of at most REASON_WAIT: a turn on a server gone away fails within 5 s, with the
# driver's reason. A server slower than that to accept a connection fails the turn too.
POOL_WAIT = 2
REASON_WAIT = 2


def vectors_table(collection: str) -> str:
    """The table of a collection's embeddings (its name never matches a collection's name pattern)."""
    return collection + _VECTORS_SUFFIX


def search_settings(conninfo: str) -> str:
    """`conninfo` whose connections start with SEARCH_SETTINGS (libpq's `options`), so a search needs
    no statement to set them: the server reads them at connection start. The options the string holds
    come after them, so the user's own setting of one wins (the server applies them in order)."""
    given = str(conninfo_to_dict(conninfo).get("options") or "")
    settings = " ".join(f"-c {name}={value}" for name, value in SEARCH_SETTINGS.items())
    return make_conninfo(conninfo, options=f"{settings} {given}".strip())


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


def check_reachable(conninfo: str, timeout: int = CONNECT_TIMEOUT) -> None:
    """Connect once and close, giving up after `timeout` seconds (a server that never answers, a port
    that accepts and stays silent). ConnectionError with the server as `display_location` shows it and
    the driver's own reason ("Connection refused", "connection timeout expired")."""
    try:
        psycopg.connect(conninfo, connect_timeout=timeout).close()
    except psycopg.Error as error:
        raise ConnectionError(said(conninfo, error)) from None


async def reach(conninfo: str, timeout: int = REASON_WAIT) -> None:
    """`check_reachable` without blocking the event loop, bounded by `timeout` whatever the host
    resolves to (libpq's connect_timeout counts once per address)."""
    try:
        async with asyncio.timeout(timeout + 0.5):
            await (await psycopg.AsyncConnection.connect(conninfo, connect_timeout=timeout)).close()
    except psycopg.Error as error:
        raise ConnectionError(said(conninfo, error)) from None
    except TimeoutError:
        raise ConnectionError(f"PostgreSQL at {display_location(conninfo)}: no answer within {timeout} s") from None


def said(conninfo: str, error: psycopg.Error) -> str:
    """The server as `display_location` shows it and the driver's own reason, its first line, with any
    password written as ***."""
    reason = next((line.strip() for line in str(error).splitlines() if line.strip()), type(error).__name__)
    password = str(conninfo_to_dict(conninfo).get("password") or "")
    if password:
        reason = reason.replace(password, "***")
    return f"PostgreSQL at {display_location(conninfo)}: {reason}"


def table(collection: PostgresCollection[Any, Any]) -> sql.Composed:
    """A framework collection's table, schema-qualified and quoted from its public schema and name, as
    the framework builds it (its `_table`: each name has passed its identifier check when the
    collection was made)."""
    return sql.SQL("{}.{}").format(sql.Identifier(collection.schema), sql.Identifier(collection.collection_name))


def columns(collection: PostgresCollection[Any, Any], include_vectors: bool) -> list[str]:
    """A framework collection's columns in its definition's order (its `_prepare_columns`)."""
    return [
        field.storage_name or field.name
        for field in collection.definition.fields
        if include_vectors or field.field_type != "vector"
    ]


class RecallPostgresCollection(Collection):
    """A recall collection as two framework collections: the messages, and their embeddings under
    the HNSW index. Upserts write the messages first, deletes remove the embeddings first: a failure
    between the two leaves a message without an embedding (found by a forget, never by a search),
    never an embedding whose message no forget can find."""

    def __init__(self, record_type: type[Any], *, store: RecallPostgresStore, collection_name: str | None) -> None:
        super().__init__(record_type, collection_name=collection_name)
        (vector,) = self.definition.vector_fields
        plain = [field for field in self.definition.fields if field.field_type != "vector"]
        indexed = replace(vector, provider_annotations={**vector.provider_annotations, **HNSW_BUILD})
        self._key = self.definition.key_field_storage_name
        # The framework's own collections, sharing the store's pool (PostgresStore.get_collection).
        self._messages = PostgresStore.get_collection(
            store, dict, definition=VectorStoreCollectionDefinition(plain), collection_name=self.collection_name
        )
        self._vectors = PostgresStore.get_collection(
            store,
            dict,
            definition=VectorStoreCollectionDefinition(
                [field for field in plain if field.field_type == "key" or field.name in SCOPE_FIELDS] + [indexed]
            ),
            collection_name=vectors_table(self.collection_name),
        )

    async def ensure_collection_exists(self, *, operation_options: Mapping[str, Any] | None = None) -> None:
        # The framework leaves the extension to the caller; the vector type must exist before the table.
        async with self._messages._client.connection() as connection:  # the store's pool (framework private)
            await connection.execute("CREATE EXTENSION IF NOT EXISTS vector")
        await self._messages.ensure_collection_exists(operation_options=operation_options)
        await self._vectors.ensure_collection_exists(operation_options=operation_options)

    async def collection_exists(self, *, operation_options: Mapping[str, Any] | None = None) -> bool:
        return await self._messages.collection_exists(operation_options=operation_options) and (
            await self._vectors.collection_exists(operation_options=operation_options)
        )

    async def ensure_collection_deleted(self, *, operation_options: Mapping[str, Any] | None = None) -> None:
        await self._vectors.ensure_collection_deleted(operation_options=operation_options)
        await self._messages.ensure_collection_deleted(operation_options=operation_options)

    async def _inner_upsert(
        self, records: Sequence[Any], *, operation_options: Mapping[str, Any] | None = None
    ) -> Sequence[str]:
        def values(collection: PostgresCollection[Any, Any], record: Mapping[str, Any]) -> dict[str, Any]:
            return {name: record[name] for name in columns(collection, include_vectors=True)}

        await self._messages.upsert([values(self._messages, r) for r in records], operation_options=operation_options)
        return await self._vectors.upsert(
            [values(self._vectors, r) for r in records], generate_vectors=False, operation_options=operation_options
        )

    async def _inner_get(
        self,
        *,
        keys: Sequence[str] | None = None,
        filter: Filter | FilterGroup | None = None,
        top: int = 10,
        skip: int = 0,
        order_by: Mapping[str, bool] | None = None,
        include_vectors: bool = False,
        operation_options: Mapping[str, Any] | None = None,
    ) -> Sequence[Any]:
        if include_vectors:
            raise NotImplementedError("recall reads embeddings back only through a search")
        return await self._messages.get(
            keys, filter=filter, top=top, skip=skip, order_by=order_by, operation_options=operation_options
        )

    async def _inner_delete(self, keys: Sequence[str], *, operation_options: Mapping[str, Any] | None = None) -> None:
        await self._vectors.delete(keys, operation_options=operation_options)
        await self._messages.delete(keys, operation_options=operation_options)

    async def _inner_search(
        self,
        *,
        search_type: SearchType,
        filter: Filter | FilterGroup | None = None,
        values: Any | None = None,
        vector: Sequence[float | int] | bytes | bytearray | None = None,
        top: int = 3,
        skip: int = 0,
        include_vectors: bool = False,
        vector_property_name: str | None = None,
        additional_property_name: str | None = None,
        score_threshold: float | None = None,
        operation_options: Mapping[str, Any] | None = None,
    ) -> SearchResults[Any]:
        """The framework's search statement on the embeddings (HNSW within the filter, or exact with
        `operation_options={"exact": True}`) joined to the messages by key: one statement, one round
        trip, on a connection that starts with the HNSW settings (`search_settings`). The framework's
        search then get took eleven round trips (a transaction, a savepoint and three settings around
        the search, a transaction around the get), each a wake-up of the server and of this process:
        on a loaded machine that was most of a retrieval's time (docs/recall.md has the figures).

        The index is walked first without pgvector's iterative scan: its first candidates, in order,
        are the ones a strict-order iterative scan starts with, so when they hold `top` records of the
        filter the rows are the framework's. When they hold fewer (a scope that is a small part of the
        table, a score threshold), the statement runs again in strict order, as the framework's does."""
        options = dict(operation_options or {})
        if set(options) - {"exact"} or vector is None or include_vectors or additional_property_name:
            raise NotImplementedError("recall searches the embeddings with the query's embedding, exact or not")
        exact = options.get("exact", False)
        if not isinstance(exact, bool):
            raise TypeError("exact must be a boolean.")
        (field,) = self._vectors.definition.vector_fields
        selected = columns(self._messages, include_vectors=False)
        statement, parameters = self._search_statement(
            selected, field.storage_name or field.name, vector, filter, top, skip, score_threshold, exact
        )
        rows = await self._fetch_search(statement, parameters, top, exact)
        return SearchResults(
            [{"record": {name: row[name] for name in selected}, "score": row["score"]} for row in rows],
            metadata={"distance_function": field.distance_function or "DEFAULT", "approximate": not exact},
        )

    def _search_statement(
        self,
        selected: Sequence[str],
        column: str,
        vector: Sequence[float | int] | bytes | bytearray,
        filter: Filter | FilterGroup | None,
        top: int,
        skip: int,
        score_threshold: float | None,
        exact: bool,
    ) -> tuple[sql.Composed, list[Any]]:
        """The one search statement, embeddings ranked by their distance to `vector` in `column` and
        joined to the messages' `selected` columns, with its parameters."""
        # The recall model's distance is the framework's default, cosine distance (pgvector's <=>);
        # the vector goes as text, so no adapter need be registered on the connection.
        distance = sql.SQL("{} <=> %s::vector").format(sql.Identifier(column))
        query = PgVector([float(x) for x in vector]).to_text()
        where, parameters = self._vectors._prepare_filter(filter)  # the framework's own filter compiler (private)
        conditions = sql.SQL("({}) AND ({}) < 'Infinity'::double precision").format(where, distance)
        parameters = [query, *parameters, query]
        if score_threshold is not None:
            if not math.isfinite(score_threshold):
                raise ValueError("score_threshold must be a finite number.")
            conditions = sql.SQL("{} AND ({}) <= %s").format(conditions, distance)
            parameters += [query, float(score_threshold)]
        # Adding zero keeps the index out of the ordering: exact search, as the framework does it.
        ranking = sql.SQL("({}) + 0").format(distance) if exact else distance
        key = sql.Identifier(self._key)
        # The framework's ranking and paging innermost; row_number() numbers its rows in that order (ties
        # as the index or the sort gave them), which the join need not keep. LIMIT and OFFSET are literals:
        # once psycopg prepares the statement (its fifth run), a generic plan with LIMIT $n would expect
        # a tenth of the table and scan it all.
        statement = sql.SQL(
            "SELECT {columns}, found.score FROM (SELECT *, row_number() OVER () AS position FROM"
            " (SELECT {key}, {distance} AS score FROM {vectors} WHERE {conditions}"
            " ORDER BY {ranking} LIMIT {top} OFFSET {skip}) AS ranked) AS found"
            " JOIN {messages} AS message ON message.{key} = found.{key} ORDER BY found.position"
        ).format(
            columns=sql.SQL(", ").join(sql.SQL("message.{}").format(sql.Identifier(c)) for c in selected),
            key=key,
            distance=distance,
            vectors=table(self._vectors),
            conditions=conditions,
            ranking=ranking,
            messages=table(self._messages),
            top=sql.Literal(top),
            skip=sql.Literal(skip),
        )
        return statement, [*parameters, query]

    async def _fetch_search(
        self, statement: sql.Composed, parameters: list[Any], top: int, exact: bool
    ) -> list[dict[str, Any]]:
        """The statement's rows, on a connection of the store's pool; the walk again in strict order when
        the index's first candidates held fewer than `top` records of the filter."""
        client = self._vectors._client  # the store's pool (framework private): its connection() opens a transaction
        client.ensure_open()
        pool = cast(AsyncConnectionPool, client.client)  # the store's own, made from its connection string
        await pool.open()  # on first use, as the framework's connection() does
        try:
            async with pool.connection() as connection, connection.cursor(row_factory=dict_row) as cursor:
                await cursor.execute(statement, parameters)
                rows = await cursor.fetchall()
                if len(rows) < top and not exact:
                    async with connection.transaction():  # the setting lasts this transaction only
                        await cursor.execute(_GO_ON)
                        await cursor.execute(statement, parameters)
                        rows = await cursor.fetchall()
                return rows
        except psycopg.Error as error:
            raise IntegrationException("PostgreSQL operation failed; inspect the chained driver exception.") from error

    def _get_record_from_result(self, result: Any) -> Any:
        return result["record"]

    def _get_score_from_result(self, result: Any) -> float | None:
        return float(result["score"])

    async def scan(
        self, filter: Filter | FilterGroup | None, fields: Sequence[str] = (), needles: Sequence[str] | None = None
    ) -> list[dict[str, Any]]:
        """Every message matching `filter`, its `fields` or all, in one query on the messages table (no
        order, no pages); with `needles`, only those that may hold them (`ForgetPlan.needles`): "=" or
        a look-alike letter, or a needle matched regardless of case in the "C" collation (ASCII letters
        only, whatever the database's locale: in a Turkish one `I` and `i` are not each other's case)."""
        messages = self._messages
        selected = list(fields) or columns(messages, include_vectors=False)
        where, parameters = messages._prepare_filter(filter)  # the framework's own filter compiler (private)
        if needles is not None:
            text = sql.Identifier("text")
            where = sql.SQL("({}) AND (strpos({}, '=') > 0").format(where, text)
            if needles:
                # A backslash before any character but a letter or digit makes it itself (PostgreSQL's AREs).
                alternatives = "|".join("".join(c if c.isalnum() else "\\" + c for c in n) for n in needles)
                where = sql.SQL('{} OR {} ~ %s OR ({} COLLATE "C") ~* %s').format(where, text, text)
                parameters = [*parameters, f"[{LOOKALIKES[0]}]", alternatives]
            where = sql.SQL("{})").format(where)
        statement = sql.SQL("SELECT {} FROM {} WHERE {}").format(
            sql.SQL(", ").join(map(sql.Identifier, selected)), table(messages), where
        )
        async with (
            messages._client.connection() as connection,  # the store's pool (framework private)
            connection.cursor(row_factory=dict_row) as cursor,
        ):
            await cursor.execute(statement, parameters)
            return list(await cursor.fetchall())


class RecallPostgresStore(PostgresStore):
    """`PostgresStore` handing out `RecallPostgresCollection`s on its one pool, which gives a connection
    within POOL_WAIT or raises PoolTimeout."""

    def __init__(self, *, connection_string: SecretString, schema: str) -> None:
        super().__init__(connection_string=connection_string, schema=schema)
        # The framework's own pool (its store's `_client`, private: docs/private-names.md); `timeout`
        # is the pool's public setting of how long a caller waits for a connection.
        cast(AsyncConnectionPool, self._client.client).timeout = POOL_WAIT

    def get_collection(  # type: ignore[override]  # a recall collection spans two PostgresCollections
        self,
        record_type: type[Any],
        *,
        definition: VectorStoreCollectionDefinition | None = None,
        collection_name: str | None = None,
        embedding_generator: SupportsGetEmbeddings[Any, Any, Any] | None = None,
    ) -> RecallPostgresCollection:
        if definition is not None or embedding_generator is not None:
            raise NotImplementedError("recall collections take the registered model and supplied vectors")
        return RecallPostgresCollection(record_type, store=self, collection_name=collection_name)


class PostgresBackend:
    """Every recall collection as two tables of one PostgreSQL database with pgvector."""

    kind = "PostgreSQL"
    vector_index = "hnsw"
    erases: str | None = "rewrote its messages table (VACUUM FULL)"

    def __init__(self, conninfo: str) -> None:
        self.location: str | None = display_location(conninfo)
        self._conninfo = SecretString(conninfo)

    def __repr__(self) -> str:
        return f"PostgresBackend({self.location!r})"

    def open(self) -> BaseVectorStore:
        """The store, once the server answered a connect within CONNECT_TIMEOUT: a server that cannot
        be reached (recall off, an earlier run's $WORKBENCH_RECALL_POSTGRES) is said at once with the
        driver's reason, not after the pool's 30 s as "inspect the chained driver exception"."""
        check_reachable(self._conninfo.get_secret_value())
        conninfo = SecretString(search_settings(self._connecting()))
        return RecallPostgresStore(connection_string=conninfo, schema=_SCHEMA)

    def _connecting(self) -> str:
        """The connection string, whose connects give up after CONNECT_TIMEOUT unless it says otherwise
        (libpq waits forever, psycopg 130 s)."""
        conninfo = self._conninfo.get_secret_value()
        if conninfo_to_dict(conninfo).get("connect_timeout") is not None:
            return conninfo
        return make_conninfo(conninfo, connect_timeout=CONNECT_TIMEOUT)

    async def failure(self, error: Exception) -> str | None:
        """A driver's error (a connection the server closed, a refused query) as the server and the
        driver's reason. A pool that gave no connection within POOL_WAIT knows no reason: the server
        is asked with one connect, whose refusal ("No such file or directory", "Connection refused")
        is the reason. `check_reachable`'s ConnectionError (the store opened mid-run) is one already."""
        if isinstance(error, ConnectionError):
            return str(error)
        driver = next((cause for cause in causes(error) if isinstance(cause, psycopg.Error)), None)
        if driver is None:
            return None
        conninfo = self._conninfo.get_secret_value()
        if isinstance(driver, PoolTimeout):
            try:
                await reach(conninfo)
            except ConnectionError as unreachable:
                return str(unreachable)
        return said(conninfo, driver)

    async def erase_deleted(self, store: BaseVectorStore, collections: list[str]) -> BaseVectorStore:
        """Rewrite each messages table a forget deleted from (`VACUUM FULL`: the new files hold only
        live rows; the old ones are truncated when it commits). Not the embeddings table: a plain
        `VACUUM` of it, which takes deleted embeddings out of the HNSW graph, took 80 s for 1,000 of
        100,000 (pgvector repairs the graph around each one): autovacuum does it in the background
        once enough rows changed. VACUUM cannot run inside a transaction: it gets a connection of its own."""
        async with await psycopg.AsyncConnection.connect(self._connecting(), autocommit=True) as conn:
            for name in collections:
                await conn.execute(sql.SQL("VACUUM FULL {}.{}").format(sql.Identifier(_SCHEMA), sql.Identifier(name)))
        return store

    def size_on_disk(self) -> int | None:
        return None  # on the server: bench/recall.py asks the server for its tables' sizes

    def exists(self) -> bool:
        return True  # a server may hold records from an earlier run or another machine
