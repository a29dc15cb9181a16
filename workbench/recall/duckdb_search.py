"""agent-framework-duckdb's collection with a cosine search shaped for DuckDB, and a one-pass scan.

The framework's search computes each row's score in a `CROSS JOIN LATERAL` whose `CASE` first takes
the row vector's inner product with itself (to drop zero-norm vectors); over 100,000 rows of 256
numbers that costs a second. Here the distance is computed once per row in a plain subquery, the top
`skip + top` rows are kept, and the zero-norm test runs on those few rows only. The framework's
result is the plain ranking without its zero-norm rows, so when none of the kept rows has a zero norm
both searches return the same records, order, scores and ties; when one has (a stored vector whose
squares underflow), the framework's own search answers. Anything but a cosine-distance vector search
is the framework's own search too."""

from __future__ import annotations

import math
from typing import Any

import duckdb
from agent_framework import SearchResults, VectorStoreCollectionDefinition
from agent_framework._vector_filters import FilterExpression
from agent_framework._vectors import EmbeddingClient
from agent_framework_duckdb import DuckDBCollection, DuckDBStore

# The framework's own SQL quoting, filter compiler and vector validation, so both searches accept,
# refuse and match alike.
from agent_framework_duckdb._vector_store import (
    _column_type,
    _FilterCompiler,
    _identifier,
    _prepare_vector,
)

_COSINE = (None, "DEFAULT", "cosine_distance")
_DISTANCE = "__recall_distance"
_VECTOR = "__recall_vector"


class RecallDuckDBCollection(DuckDBCollection[Any, Any]):
    """A DuckDB collection whose cosine search DuckDB runs at the speed of a plain scan."""

    async def scan(self, filter: FilterExpression | None) -> list[dict[str, Any]]:
        """Every record matching `filter`, without vectors, in one query (no ordering, no pages)."""
        columns = self._columns(include_vectors=False)
        predicate, parameters = _FilterCompiler(self.definition).compile(filter)
        selected = ", ".join(f"t.{_identifier(name)}" for name in columns)
        statement = f"SELECT {selected} FROM {self._table} AS t WHERE {predicate}"  # nosec B608: quoted names

        def read(connection: duckdb.DuckDBPyConnection) -> list[dict[str, Any]]:
            rows = connection.execute(statement, parameters).fetchall()
            return [dict(zip(columns, row, strict=True)) for row in rows]

        return await self._client.run(read)  # the store's one worker-owned connection (framework private)

    async def _inner_search(self, **kwargs: Any) -> SearchResults[Any]:
        field = self.definition.try_get_vector_field(kwargs.get("vector_property_name"))
        threshold = kwargs.get("score_threshold")
        if (
            kwargs.get("search_type") != "vector"
            or kwargs.get("additional_property_name") is not None
            or kwargs.get("operation_options")
            or kwargs.get("vector") is None
            or field is None
            or field.distance_function not in _COSINE
            or (threshold is not None and (type(threshold) not in (float, int) or not math.isfinite(threshold)))
        ):
            return await super()._inner_search(**kwargs)  # its own checks and errors, or another metric
        query = _prepare_vector(field, kwargs["vector"])
        top, skip = kwargs.get("top", 3), kwargs.get("skip", 0)
        columns = self._columns(bool(kwargs.get("include_vectors")))
        column = f"t.{_identifier(field.storage_name or field.name)}"
        predicate, parameters = _FilterCompiler(self.definition).compile(kwargs.get("filter"))
        inner = ", ".join(f"t.{_identifier(name)}" for name in columns)
        cutoff = f" AND {_DISTANCE} <= ?" if threshold is not None else ""
        statement = (  # nosec B608: every name is quoted by the framework's _identifier
            f"SELECT {', '.join(map(_identifier, columns))}, {_DISTANCE}, "
            f"array_inner_product({_VECTOR}, {_VECTOR}) = 0 FROM ("
            f"SELECT {inner}, {column} AS {_VECTOR}, "
            f"array_cosine_distance({column}, CAST(? AS {_column_type(field)})) AS {_DISTANCE} "
            f"FROM {self._table} AS t WHERE {column} IS NOT NULL AND ({predicate})"
            f") WHERE isfinite({_DISTANCE}){cutoff} "
            f"ORDER BY {_DISTANCE} ASC, {_identifier(self.definition.key_field_storage_name)} ASC LIMIT ?"
        )
        arguments = [query, *parameters, *([threshold] if threshold is not None else []), top + skip]

        def search(connection: duckdb.DuckDBPyConnection) -> list[tuple[Any, ...]]:
            return connection.execute(statement, arguments).fetchall()

        rows = await self._client.run(search)  # the store's one worker-owned connection (framework private)
        if any(row[-1] for row in rows):
            return await super()._inner_search(**kwargs)  # a zero-norm vector: the framework drops it
        return SearchResults(
            [
                {"record": dict(zip(columns, row[:-2], strict=True)), "score": float(row[-2])}
                for row in rows[skip:]
            ],
            metadata={"distance_function": field.distance_function or "DEFAULT", "approximate": False},
        )


class RecallDuckDBStore(DuckDBStore):
    """`DuckDBStore` handing out `RecallDuckDBCollection`s on its one connection."""

    def get_collection(
        self,
        record_type: type[Any],
        *,
        definition: VectorStoreCollectionDefinition | None = None,
        collection_name: str | None = None,
        embedding_generator: EmbeddingClient | None = None,
    ) -> RecallDuckDBCollection:
        return RecallDuckDBCollection(
            record_type,
            definition=definition,
            collection_name=collection_name,
            embedding_generator=embedding_generator if embedding_generator is not None else self.embedding_generator,
            _shared_client=self._client,  # the store's connection, as DuckDBStore.get_collection passes it
        )

