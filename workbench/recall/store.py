"""The vector store behind recall: one collection per embedder, scoped search, and forget.

A `Backend` opens an Agent Framework `BaseVectorStore` whose collections also `scan` (every record
of a scope in one query, what a forget looks through) and, after a forget deleted records, makes
sure the deleted text is gone from wherever the store keeps it (for DuckDB that means rewriting the
file, see `workbench.recall.duckdb_file`; for PostgreSQL a `VACUUM FULL`, see
`workbench.recall.postgres_store`)."""

from __future__ import annotations

import asyncio
import re
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any, Protocol, cast, runtime_checkable

from agent_framework import BaseVectorCollection, BaseVectorSearch, BaseVectorStore, Filter, FilterGroup

from workbench.memory.forget import ForgetPlan, declared_in
from workbench.recall.memory_store import PreparedInMemoryStore
from workbench.recall.records import RecallScope, StoredMessage, embedded, record_type, without_vector
from workbench.runtime.failures import MemoryUnavailable

COLLECTION_PREFIX = "recall_"
_COLLECTION_NAME = re.compile(rf"^{COLLECTION_PREFIX}(?P<embedder>[a-z0-9_]+)_(?P<dimensions>\d+)$")


@runtime_checkable
class _ClosesNow(Protocol):
    """A store closed without an event loop (`workbench.recall.duckdb_private.PrivateDuckDBStore`)."""

    def close_now(self) -> None: ...


class Backend(Protocol):
    """Where the vector store lives: opens it, and erases what a forget deleted."""

    kind: str
    location: str | None  # shown to the user: never a password
    vector_index: str  # the vector field's index kind ("default": exact search)
    erases: str | None  # what `erase_deleted` does, for the ledger ("rewrote its file")

    def open(self) -> BaseVectorStore: ...

    async def erase_deleted(self, store: BaseVectorStore, collections: list[str]) -> BaseVectorStore:
        """Make records deleted from `collections` unrecoverable; returns the store to use from now on."""
        ...

    def size_on_disk(self) -> int | None: ...

    def exists(self) -> bool:
        """Whether the store holds anything from an earlier run (a file on disk)."""
        ...

    async def failure(self, error: Exception) -> str | None:
        """`error`, raised while using the store, in one line naming the store and the driver's reason
        when it is the store's server failing (gone away, refusing); None for any other error."""
        ...


class InMemoryBackend:
    """Agent Framework's `InMemoryStore` (its cosine search on vectors prepared once): a dict in this
    process, gone when it exits."""

    kind = "in memory"
    location: str | None = None
    vector_index = "default"
    erases: str | None = None

    def open(self) -> BaseVectorStore:
        return PreparedInMemoryStore()

    async def erase_deleted(self, store: BaseVectorStore, collections: list[str]) -> BaseVectorStore:
        return store  # deleted records leave the dict; nothing else holds them

    def size_on_disk(self) -> int | None:
        return None

    def exists(self) -> bool:
        return False

    async def failure(self, error: Exception) -> str | None:
        return None  # no server: an error here is a fault of this process, raised as it is


@dataclass(frozen=True)
class Hit:
    record: StoredMessage
    score: float


@dataclass(frozen=True)
class Purge:
    """What a forget removed: a count, never the text."""

    records: int
    collections: int


def collection_name(embedder: str, dimensions: int) -> str:
    slug = re.sub(r"[^a-z0-9]+", "_", embedder.lower()).strip("_") or "embedder"
    return f"{COLLECTION_PREFIX}{slug}_{dimensions}"


class Collection(BaseVectorCollection[str, StoredMessage], BaseVectorSearch[str, StoredMessage]):
    """What a store's collection is: CRUD, search and scan (for typing only)."""

    async def scan(
        self, filter: Filter | FilterGroup | None, fields: Sequence[str] = (), needles: Sequence[str] | None = None
    ) -> list[dict[str, Any]]:
        """Every record matching `filter`, in one pass: its `fields`, or every field but the vector.
        `needles` (None: every record): at least the records whose text holds "=" or whose `folded`
        text holds one of them (`ForgetPlan.needles`), found by the store's own query where it has one."""
        raise NotImplementedError


@dataclass(frozen=True)
class _Scanned:
    """One scan of a scope for a forget: each record's collection, key and text (those that declare
    something, or all), and the values they declare for the keys asked (read once: the one forget asks
    `declared`, then applies the plan)."""

    scope: RecallScope
    records: list[tuple[Collection, Any, str]]
    declared: dict[frozenset[str], set[str]] = field(default_factory=dict)

    def declared_for(self, keys: frozenset[str]) -> set[str]:
        if keys not in self.declared:
            self.declared[keys] = declared_in((text for _, _, text in self.records), keys)
        return self.declared[keys]


class RecallStore:
    """Records of chat messages in a vector store, searched within a scope, purged by forget.

    Every operation holds one lock, so a forget's purge and file rewrite never interleave with a
    store or a search. `generation` advances at every forget: a run that began before it must not
    store its messages afterwards (they may hold what was just forgotten)."""

    def __init__(self, backend: Backend | None = None) -> None:
        self.backend: Backend = backend or InMemoryBackend()
        self._store: BaseVectorStore | None = None
        # The open store's collections by name: building one (the framework's definition and SQL
        # pieces) cost about half a millisecond of every search.
        self._collections: dict[str, Collection] = {}
        self._ready: set[str] = set()
        self._lock = asyncio.Lock()
        self._scanned: _Scanned | None = None  # what `declared` read, for the forget that follows
        self.generation = 0

    @property
    def kind(self) -> str:
        return self.backend.kind

    @property
    def location(self) -> str | None:
        return self.backend.location

    def describe(self) -> str:
        return f"{self.kind}: {self.location}" if self.location else self.kind

    def exists(self) -> bool:
        return self._store is not None or self.backend.exists()

    def open(self) -> None:
        """Open the store now rather than at first use, so that a start finds out whether it can (a
        DuckDB file that is corrupt, truncated, unreadable or held by another process raises here)."""
        self._vector_store()

    @asynccontextmanager
    async def _using(self) -> AsyncIterator[None]:
        """The store, for one operation at a time (the lock). Its server failing is raised as
        MemoryUnavailable, one line with the driver's reason, which a failed turn shows as it is
        (the framework's PostgreSQL store says only "inspect the chained driver exception")."""
        async with self._lock:
            try:
                yield
            except Exception as error:
                if (line := await self.backend.failure(error)) is None:
                    raise
                raise MemoryUnavailable(f"the recall store failed: {line}") from error

    def _vector_store(self) -> BaseVectorStore:
        if self._store is None:
            store = self.backend.open()
            self._use(store)
            return store
        return self._store

    def _use(self, store: BaseVectorStore | None) -> None:
        """`store` is the open store from now on (None: closed); collections of another are dropped."""
        if store is not self._store:
            self._collections.clear()
        self._store = store

    def _collection(self, name: str, dimensions: int) -> Collection:
        if (collection := self._collections.get(name)) is None:
            # Every backend's store returns a collection that also searches and scans.
            collection = cast(
                Collection,
                self._vector_store().get_collection(
                    record_type(dimensions, self.backend.vector_index), collection_name=name
                ),
            )
            self._collections[name] = collection
        return collection

    async def _existing(self) -> list[Collection]:
        names = await self._vector_store().list_collection_names()
        return [
            self._collection(name, int(match["dimensions"]))
            for name in names
            if (match := _COLLECTION_NAME.match(name))
        ]

    async def add(
        self,
        embedder: str,
        records: Iterable[StoredMessage],
        vectors: list[list[float]],
        *,
        generation: int | None = None,
    ) -> int:
        """Store `records`, and return how many; none when a forget ran since `generation` (None: no
        such check). Checked once the store is this call's: a forget's purge may have been waiting for it
        ahead of this call, after any check made before waiting."""
        index = self.backend.vector_index
        rows = [embedded(record, vector, index) for record, vector in zip(records, vectors, strict=True)]
        if not rows:
            return 0
        name = collection_name(embedder, len(vectors[0]))
        async with self._using():
            if generation is not None and generation != self.generation:
                return 0
            self._scanned = None  # the store changes: a forget must read it again
            collection = self._collection(name, len(vectors[0]))
            if name not in self._ready:
                await collection.ensure_collection_exists()
                self._ready.add(name)
            await collection.upsert(rows, generate_vectors=False)
        return len(rows)

    async def search(self, embedder: str, vector: list[float], scope: RecallScope, top: int) -> list[Hit]:
        """The `top` closest records within `scope` (cosine distance: lower is closer)."""
        name = collection_name(embedder, len(vector))
        async with self._using():
            collection = self._collection(name, len(vector))
            if name not in self._ready:
                if not await collection.collection_exists():
                    return []
                self._ready.add(name)
            results = await collection.search(vector=vector, filter=scope.filter(), top=top)
            return [Hit(without_vector(r["record"]), float(r["score"] or 0.0)) async for r in results.results]

    async def records(self, scope: RecallScope) -> list[StoredMessage]:
        """Every record within `scope`, in every collection, by key."""
        async with self._using():
            found: list[StoredMessage] = []
            for collection in await self._existing():
                rows = sorted(await collection.scan(scope.filter()), key=lambda row: str(row["key"]))
                found += [StoredMessage(**row) for row in rows]
            return found

    async def _scan(self, scope: RecallScope, needles: Sequence[str] | None = None) -> _Scanned:
        """Records within `scope`, by collection, key and text: every one, or (`needles`, see
        `Collection.scan`) those that may hold a forget's values, which the store's own query finds
        (at 1,000,000 messages, fetching every text into Python took seconds). One query per collection,
        reading those two fields only (the other seven cost as much again to fetch)."""
        found = [
            (c, row["key"], row["text"])
            for c in await self._existing()
            for row in await c.scan(scope.filter(), ("key", "text"), needles)
        ]
        return _Scanned(scope, found)

    async def declared(self, scope: RecallScope, keys: frozenset[str]) -> set[str]:
        """Every value a record within `scope` declares for `keys`, admitted or not. What this scan read
        is kept for the forget that follows (the one forget asks every holder before it applies the
        plan) until the store changes, so that forget reads the store once. On a server other clients
        write to, that forget looks through the records there were when it began."""
        async with self._using():
            self._scanned = await self._scan(scope, ())  # the texts that declare something
            return set(self._scanned.declared_for(keys))

    async def erase(self, plan: ForgetPlan, scope: RecallScope) -> Purge:
        """Apply a forget's plan to `scope`: every record holding a forgotten value whole (the plan
        widened by every value the scope's own messages declared for its keys, admitted or not), or
        every record for a forget of everything. The texts that declare something are read once (the
        scan `declared` kept), then those the store's query finds holding the widened plan's values."""
        if plan.everything:
            return await self.forget_scope(scope, erase=plan.completing)

        async def doomed(scope: RecallScope) -> tuple[_Scanned, Callable[[str], bool]]:
            declaring, self._scanned = self._scanned, None
            if declaring is None or declaring.scope != scope:
                declaring = await self._scan(scope, ())
            widened = plan.widened(declaring.declared_for(plan.keys))
            # With values to look for, the store's query finds the declaring texts again with the others.
            needles = widened.needles
            scanned = declaring if needles == () else await self._scan(scope, needles)
            return scanned, widened.holds

        return await self._purge(scope, doomed, erase=plan.completing)

    async def forget_scope(self, scope: RecallScope, *, erase: bool = False) -> Purge:
        """Delete every record in `scope`."""

        async def everything(scope: RecallScope) -> tuple[_Scanned, Callable[[str], bool]]:
            self._scanned = None
            return await self._scan(scope), lambda text: True

        return await self._purge(scope, everything, erase=erase)

    async def _purge(
        self,
        scope: RecallScope,
        choose: Callable[[RecallScope], Awaitable[tuple[_Scanned, Callable[[str], bool]]]],
        *,
        erase: bool = False,
    ) -> Purge:
        """`choose` reads `scope` and says which of the records it read to delete. Each collection
        deletes its doomed records in one statement, then the store erases what was deleted; `erase`:
        also when nothing was (a forget cut short by a crash after its delete, before the erase)."""
        self.generation += 1  # before waiting: a search or a store already waiting for the store is a run's from before
        async with self._using():
            scanned, doomed = await choose(scope)
            by_collection: dict[str, tuple[Collection, list[Any]]] = {}
            for collection, key, text in scanned.records:
                if doomed(text):
                    by_collection.setdefault(collection.collection_name, (collection, []))[1].append(key)
            for collection, keys in by_collection.values():
                await collection.delete(keys)
            count = sum(len(keys) for _, keys in by_collection.values())
            if count or (erase and self.backend.exists()):
                names = list(by_collection) if count else [c.collection_name for c in await self._existing()]
                self._use(await self.backend.erase_deleted(self._vector_store(), names))
                self._ready.clear()
            return Purge(count, len(by_collection))

    def close_now(self) -> None:
        """Closed without an event loop, when no operation runs on it (`workbench.build.opening.Opened.close`):
        a DuckDB file let go now; a server's pool only by `close`, awaited in the loop that used it."""
        store = self._store
        if isinstance(store, _ClosesNow):
            self._scanned = None
            self._use(None)
            store.close_now()

    async def close(self) -> None:
        async with self._lock:
            self._scanned = None
            store = self._store
            self._use(None)
            if store is not None:
                await store.__aexit__(None, None, None)
