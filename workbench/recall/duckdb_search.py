"""agent-framework-duckdb's collection with a cosine search shaped for DuckDB, a one-pass scan, and a
delete that binds one parameter.

What the framework's search cost over 100,000 rows of DOUBLE[256], and what this one does instead:
- The query vector is a bound list parameter, and DuckDB 1.5's Python client looks pandas up twice for
  each float it binds (a failed import that walks `sys.path` when pandas is not installed): 256 numbers
  cost 50 to 300 ms. Here the vector is a SQL string literal of each float's `repr` (the shortest text
  that parses back to the same double: DuckDB's parser is correctly rounded, -0.0 and subnormals
  included), read as DOUBLE[n] (the type of a bound list of floats) and cast to the column's type as
  the framework casts its parameter, so every number DuckDB computes with has the same bits. The
  framework refuses NaN and infinities before either query is built.
- Its `CROSS JOIN LATERAL` computes each row's inner product with itself to drop zero-norm vectors,
  and its `isfinite` filter computes the distance a second time. Here the ranking computes the
  distance once per row (twice with a score threshold, which recall does not use) and reads only the
  key beside it; the records of the ranked rows are then read by key, with their zero-norm test.
- DuckDB hands a scan to its threads one row group at a time, and starts as many scan tasks as the
  table has rows for row groups of the size its database was attached with. The product's file is
  attached with row groups of `ROW_GROUP_ROWS` (`workbench.recall.duckdb_file.connect`), and the
  search runs with one thread per row group, at most one per core (`threads_for`).

The framework's result is the plain ranking without its zero-norm and non-finite rows. A non-finite
distance sorts after every finite one (NaN last, as DuckDB orders it), so when every ranked row is
finite and none has a zero norm, both searches return the same records, order, scores and ties;
otherwise the framework's own search answers. Anything but a cosine-distance vector search is the
framework's own search too.

The framework deletes with one statement too, `key IN (?, ?, ...)`, one parameter per key: binding a
thousand strings costs seconds for the same reason. Here the keys travel as one JSON array.

The integration exports no helper for any of this, so its private names are kept to what only it can
say (docs/private-names.md): its filter compiler, its column types and the store's one worker-owned
connection. The table and column names are quoted here from the collection's public name and
definition exactly as the framework quotes them (`quote`), and a query vector or key this module does
not take as it is goes to the framework's own search or delete, which refuses it with its own error."""

from __future__ import annotations

import json
import math
import os
from collections.abc import Mapping, Sequence
from typing import Any

import duckdb
from agent_framework import (
    Filter,
    FilterGroup,
    SearchResults,
    SupportsGetEmbeddings,
    VectorStoreCollectionDefinition,
    VectorStoreField,
)
from agent_framework_duckdb import DuckDBCollection, DuckDBStore

# The framework's own filter compiler and column types (private: the integration exports neither), so
# both searches filter alike and cast the query vector to the type the framework created the column with.
from agent_framework_duckdb._vector_store import _column_type, _FilterCompiler

from workbench.memory.forget import LOOKALIKES

_COSINE = (None, "DEFAULT", "cosine_distance")
# The product's row group (DuckDB's default is 122,880 rows): the unit DuckDB scans and writes on one
# thread. Small enough that 100,000 messages make seven of them, which two cores share evenly.
ROW_GROUP_ROWS = 16_384


def threads_for(rows: int) -> int:
    """DuckDB threads for scanning or writing a table of `rows` rows: one per row group, at most one
    per core. A thread with no row group to take costs without helping: with one row group, a search
    took 1.4 to 4 times as long with two threads as with one on this two-core machine, and used
    twice the CPU time."""
    return max(1, min(os.cpu_count() or 1, -(-rows // ROW_GROUP_ROWS)))


def quote(name: str) -> str:
    """A DuckDB identifier quoted as agent-framework-duckdb quotes it (its `_identifier`, which a
    collection has already applied to its own name and every field's when it was made)."""
    return '"' + name.replace('"', '""') + '"'


def query_floats(field: VectorStoreField, vector: Any) -> list[float] | None:
    """`vector` as floats when the framework's own check of a cosine query (`_prepare_vector`) takes it:
    a sequence of `field.dimensions` finite numbers (floats or ints, not bools), not all zero. None
    for anything else: the framework's own search then answers, with its own error."""
    if not isinstance(vector, Sequence) or isinstance(vector, (str, bytes, bytearray)):
        return None
    if len(vector) != field.dimensions or not all(type(v) in (float, int) for v in vector):
        return None
    try:
        values = [float(v) for v in vector]
    except OverflowError:
        return None  # an int too large for a double: the framework refuses it
    return values if all(map(math.isfinite, values)) and any(values) else None


def vector_literal(values: list[float], field: VectorStoreField) -> str:
    """`values` as a SQL constant of `field`'s type, equal bit for bit to the framework's
    `CAST(? AS <type>)` of the same list bound as a parameter. `values` are finite floats
    (`query_floats` made them so): their reprs hold digits, a point, a sign and an
    exponent, never a quote."""
    if not all(type(v) is float and math.isfinite(v) for v in values):
        raise ValueError("a query vector literal takes finite floats only")
    numbers = ",".join(map(repr, values))
    return f"CAST(CAST('[{numbers}]' AS DOUBLE[{len(values)}]) AS {_column_type(field)})"


def may_hold(needles: Sequence[str]) -> str:
    """An RE2 pattern matching every text that `ForgetPlan.needles` says may hold a forget: "=", a
    look-alike letter (outside `(?i:)`, whose Unicode folding would widen them to every `s` and `k`), or
    a needle, ASCII letters in any case. Every character but an ASCII letter or digit is written as its
    code point (`\\x{2d}`), so the pattern holds no quote and nothing RE2 reads as syntax."""
    if not needles:
        return "="
    alternatives = "|".join(
        "".join(c if c.isascii() and c.isalnum() else f"\\x{{{ord(c):x}}}" for c in n) for n in needles
    )
    return f"=|[{LOOKALIKES[0]}]|(?i:{alternatives})"


class RecallDuckDBCollection(DuckDBCollection[Any, Any]):
    """A DuckDB collection whose cosine search DuckDB runs at the speed of a plain scan."""

    @property
    def table(self) -> str:
        """The collection's table, quoted (the framework's `_table`)."""
        return quote(self.collection_name)

    def columns(self, include_vectors: bool) -> list[str]:
        """The table's columns in the definition's order (the framework's `_columns`)."""
        return [
            field.storage_name or field.name
            for field in self.definition.fields
            if include_vectors or field.field_type != "vector"
        ]

    async def scan(
        self, filter: Filter | FilterGroup | None, fields: Sequence[str] = (), needles: Sequence[str] | None = None
    ) -> list[dict[str, Any]]:
        """Every record matching `filter`, its `fields` or all but vectors, in one query (no order, no
        pages); with `needles`, only those that may hold them (`may_hold`)."""
        columns = list(fields) or self.columns(include_vectors=False)
        predicate, parameters = _FilterCompiler(self.definition).compile(filter)
        if needles is not None:
            # One RE2 pass per text, the pattern a literal (a bound one was slower): 0.3 s over 1,000,000.
            predicate = f"({predicate}) AND regexp_matches(t.{quote('text')}, '{may_hold(needles)}')"
        selected = ", ".join(f"t.{quote(name)}" for name in columns)
        statement = f"SELECT {selected} FROM {self.table} AS t WHERE {predicate}"  # nosec B608: quoted names

        def read(connection: duckdb.DuckDBPyConnection) -> list[dict[str, Any]]:
            rows = connection.execute(statement, parameters).fetchall()
            return [dict(zip(columns, row, strict=True)) for row in rows]

        return await self._client.run(read)  # the store's one worker-owned connection (framework private)

    async def _inner_delete(self, keys: Sequence[Any], *, operation_options: Mapping[str, Any] | None = None) -> None:
        """The framework's delete (one statement) with the keys bound as one JSON array instead of one
        parameter each. Only plain strings for a string key take this way, which the framework's key
        validation passes unchanged; any other key or option goes the framework's way, checked by it."""
        if operation_options or self.definition.key_field.type_ != "str" or not all(type(key) is str for key in keys):
            return await super()._inner_delete(keys, operation_options=operation_options)
        if not keys:
            return
        statement = (  # nosec B608: quoted names; the keys are the one parameter
            f"DELETE FROM {self.table} WHERE {quote(self.definition.key_field_storage_name)} "
            "IN (SELECT unnest(CAST(CAST(? AS JSON) AS VARCHAR[])))"
        )
        # ensure_ascii=False: a key that is no valid UTF-8 is refused when bound, as the framework's is.
        keys_json = json.dumps(list(keys), ensure_ascii=False)

        def delete(connection: duckdb.DuckDBPyConnection) -> None:
            connection.execute(statement, [keys_json])

        await self._client.run(delete)  # the store's one worker-owned connection (framework private)

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
            or (query := query_floats(field, kwargs["vector"])) is None
        ):
            return await super()._inner_search(**kwargs)  # its own checks and errors, or another metric
        top, skip = kwargs.get("top", 3), kwargs.get("skip", 0)
        columns = self.columns(bool(kwargs.get("include_vectors")))
        column = f"t.{quote(field.storage_name or field.name)}"
        key = f"t.{quote(self.definition.key_field_storage_name)}"
        distance = f"array_cosine_distance({column}, {vector_literal(query, field)})"
        predicate, parameters = _FilterCompiler(self.definition).compile(kwargs.get("filter"))
        cutoff = f" AND {distance} <= ?" if threshold is not None else ""
        ranking = (  # nosec B608: every name is quoted
            f"SELECT {key}, {distance} AS distance FROM {self.table} AS t "
            f"WHERE {column} IS NOT NULL AND ({predicate}){cutoff} "
            f"ORDER BY distance ASC NULLS LAST, {key} ASC LIMIT ?"
        )
        arguments = [*parameters, *([threshold] if threshold is not None else []), top + skip]
        selected = ", ".join(f"t.{quote(name)}" for name in columns)

        def search(connection: duckdb.DuckDBPyConnection) -> list[tuple[tuple[Any, ...], float]] | None:
            (count,) = connection.execute(f"SELECT count(*) FROM {self.table}").fetchone() or (0,)  # nosec B608
            connection.execute(f"SET threads = {threads_for(count)}")
            try:
                ranked = connection.execute(ranking, arguments).fetchall()
            except duckdb.ConversionException:
                return None  # the vector does not fit the column's type: see the framework's answer
            if not all(type(d) is float and math.isfinite(d) for _, d in ranked):
                return None
            if not ranked:
                return []
            # The same worker runs both statements back to back: nothing writes in between.
            reading = (  # nosec B608: quoted names, one placeholder per ranked key
                f"SELECT {key}, array_inner_product({column}, {column}) = 0, {selected} "
                f"FROM {self.table} AS t WHERE {key} IN ({', '.join('?' for _ in ranked)})"
            )
            records = {row[0]: row for row in connection.execute(reading, [k for k, _ in ranked]).fetchall()}
            if any(row[1] for row in records.values()):
                return None
            return [(records[k][2:], d) for k, d in ranked]

        found = await self._client.run(search)  # the store's one worker-owned connection (framework private)
        if found is None:
            return await super()._inner_search(**kwargs)  # a zero-norm vector, a non-finite distance, a bad cast
        return SearchResults(
            [{"record": dict(zip(columns, row, strict=True)), "score": score} for row, score in found[skip:]],
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
        embedding_generator: SupportsGetEmbeddings[Any, Any, Any] | None = None,
    ) -> RecallDuckDBCollection:
        return RecallDuckDBCollection(
            record_type,
            definition=definition,
            collection_name=collection_name,
            embedding_generator=embedding_generator if embedding_generator is not None else self.embedding_generator,
            _shared_client=self._client,  # the store's connection, as DuckDBStore.get_collection passes it
        )
