"""What the vector store holds: one record per chat message, tagged with its scope and turn.

No `from __future__ import annotations` here: `record_type` declares its vector field with a
size known only at call time, and the framework reads the annotations when it registers the model."""

import functools
from dataclasses import dataclass, fields
from typing import Annotated, Any

from agent_framework import Filter, FilterGroup, IndexKind, VectorStoreField, vectorstoremodel

SCOPE_FIELDS = ("application_id", "agent_id", "user_id", "session_id")


@dataclass(frozen=True)
class RecallScope:
    """Application, agent, user and session ids (the seed's ChatHistoryMemoryProviderScope).

    As a storage scope every id is written on each record; as a search scope the ids that are set
    filter the search, so a scope with only `user_id` searches all of that user's sessions and agents.
    """

    application_id: str | None = None
    agent_id: str | None = None
    user_id: str | None = None
    session_id: str | None = None

    def ids(self) -> dict[str, str]:
        return {name: value for name in SCOPE_FIELDS if (value := getattr(self, name)) is not None}

    def filter(self) -> Filter | FilterGroup | None:
        """Equality on every id that is set; None (everything) for an empty scope."""
        clauses: list[Filter | FilterGroup] = [Filter(name, "eq", value) for name, value in self.ids().items()]
        if not clauses:
            return None
        return clauses[0] if len(clauses) == 1 else FilterGroup("and", clauses)

    def describe(self) -> str:
        return ", ".join(f"{name.removesuffix('_id')}={value}" for name, value in self.ids().items()) or "everything"


@dataclass
class StoredMessage:
    """One request or response message. Scope ids are empty strings when the storage scope leaves
    them unset (a filter can then not match them by accident)."""

    key: Annotated[str, VectorStoreField("key")]
    text: Annotated[str, VectorStoreField("data")]
    role: Annotated[str, VectorStoreField("data")]
    turn: Annotated[int, VectorStoreField("data")]
    stored_at: Annotated[str, VectorStoreField("data")]
    application_id: Annotated[str, VectorStoreField("data")]
    agent_id: Annotated[str, VectorStoreField("data")]
    user_id: Annotated[str, VectorStoreField("data")]
    session_id: Annotated[str, VectorStoreField("data")]

    def scope(self) -> RecallScope:
        return RecallScope(**{name: getattr(self, name) or None for name in SCOPE_FIELDS})


def vector_field(dimensions: int, index_kind: IndexKind = "default") -> VectorStoreField:
    """The embedding's field: 4-byte floats (`FLOAT[n]` on DuckDB, pgvector's `vector` on PostgreSQL;
    the in-memory store computes in Python floats whatever the type says). Embedding models
    compute in 4-byte floats or coarser ones, and an exact search decodes and compares every
    stored vector: half the bytes of the framework's default (`float`, `DOUBLE[n]` on DuckDB). DuckDB
    files made with doubles are converted when the store opens (`workbench.recall.duckdb_file`)."""
    return VectorStoreField("vector", dimensions=dimensions, index_kind=index_kind, type_="float32")


def record_type(dimensions: int, index_kind: IndexKind = "default") -> type[StoredMessage]:
    """The vector store model for embeddings of `dimensions` numbers, indexed as `index_kind` says
    ("default": exact search; "hnsw" on PostgreSQL). A model's dimensions and index are fixed when it
    is declared, and each embedder has its own size, so there is one registered model per pair."""
    return _record_type(dimensions, index_kind)


@functools.cache
def _record_type(dimensions: int, index_kind: IndexKind) -> type[StoredMessage]:

    @vectorstoremodel
    @dataclass
    class EmbeddedMessage(StoredMessage):
        vector: Annotated[list[float] | None, vector_field(dimensions, index_kind)] = None

    EmbeddedMessage.__qualname__ = f"EmbeddedMessage{dimensions}" + ("" if index_kind == "default" else index_kind)
    return EmbeddedMessage


def embedded(record: StoredMessage, vector: list[float], index_kind: IndexKind = "default") -> StoredMessage:
    """`record` with its embedding, as the model registered for the vector's size and index."""
    values: dict[str, Any] = {**vars(record), "vector": vector}
    return record_type(len(vector), index_kind)(**values)


def without_vector(record: StoredMessage) -> StoredMessage:
    """A stored record as the plain base type (the vector is not needed after the search)."""
    return StoredMessage(**{f.name: getattr(record, f.name) for f in fields(StoredMessage)})
