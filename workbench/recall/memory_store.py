"""Agent Framework's `InMemoryStore` with a search that does not redo each stored vector's arithmetic.

The framework's in-memory collection validates, converts and rescales every stored vector on every
search (about a millisecond per record for 256 numbers), so a lab that searches after each of 1,000
turns spends most of its time there. This collection prepares each stored vector once, when it is
stored, and keeps only its nonzero coordinates. The cosine distance is then computed exactly as the
framework computes it (the same rescaling, `math.fsum` products and norms, clamping): `fsum` is
correctly rounded, so leaving out products that are zero changes no bit, and every search returns the
same records, in the same order, with the same scores. Other distance functions use the framework's
own search unchanged.

Even so, the exact distance of every record to every query, in Python, was most of a lab's retrieved
history (12 s of a 1,000-turn lab, each policy). So the collection also keeps every prepared vector as
a row of one matrix (`Dense`, extended as records are added), scores all rows at once with numpy, and
computes the exact distance only for the records that can be among the results: numpy's sum of 256
products differs from the exact one by far less than `_MARGIN` (at most 256 roundings of products
whose total is at most the product of the norms), so a record whose numpy distance exceeds the
k-th smallest by more than twice that is farther than the k-th record whatever the exact values, and
can be neither returned nor ordered differently. Anything the matrix cannot stand for (vectors of
another length, a vector that cannot be prepared, a distance that is not finite) searches record by
record as before, so it raises where and as it did."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from copy import deepcopy
from dataclasses import dataclass, field
from typing import Any

from agent_framework import (
    InMemoryCollection,
    InMemoryStore,
    SearchResults,
    SupportsGetEmbeddings,
    VectorStoreCollectionDefinition,
)

# The framework's own validation and filter evaluation (private: it exports none of them), so both
# searches refuse and match alike: the in-memory search's own filter checks and evaluation, which
# restore each stored value to its field's type before comparing it (agent-framework-core 1.26).
from agent_framework._in_memory import (
    _evaluate_in_memory_filter,
    _numeric_vector,
    _reject_incompatible_filter_operands,
    _validate_in_memory_filter,
)
from agent_framework._vectors import _validate_vector_dimensions
from agent_framework.exceptions import IntegrationException

_COSINE = ("cosine_distance", "DEFAULT")
# How far numpy's cosine distance may be from the exact one: 256 products summed in float64 stay within
# 256 * 2**-53 (3e-14) of the exact dot product, relative to the norms' product; divisions and the
# clamp add a few roundings more. Thirty times that.
_MARGIN = 1e-12


@dataclass(frozen=True)
class Prepared:
    """A vector scaled by its largest magnitude (as the framework scales it), its nonzero
    coordinates and its norm."""

    length: int
    coordinates: dict[int, float]
    norm: float


def prepare(vector: Sequence[float]) -> Prepared:
    values = tuple(float(v) for v in _numeric_vector(vector, field_name="stored"))
    scale = max(abs(v) for v in values)
    if scale == 0:
        raise ValueError("Cosine distance is undefined for zero-magnitude vectors.")
    scaled = [v / scale for v in values]
    norm = math.sqrt(math.fsum(v * v for v in scaled))
    return Prepared(len(values), {i: v for i, v in enumerate(scaled) if v}, norm)


def cosine_distance(query: Prepared, stored: Prepared) -> float:
    if query.length != stored.length:
        raise ValueError(f"Query and stored vectors must have the same length; got {query.length} and {stored.length}.")
    left, right = query.coordinates, stored.coordinates
    if len(left) > len(right):
        left, right = right, left
    dot = math.fsum([value * right[i] for i, value in left.items() if i in right])
    similarity = dot / (query.norm * stored.norm)
    if not math.isfinite(similarity):
        raise ValueError("Cosine similarity must be finite.")
    return 1 - max(-1.0, min(1.0, similarity))


@dataclass
class Dense:
    """The prepared vectors of a collection's records, in the store's order, as rows of one matrix
    (scaled as prepared: the exact distance's own numbers), and each filter's verdicts in that order.
    `records` are the ids of the stored records the rows were made from: records added after them
    extend the rows; any other change makes the rows anew."""

    records: list[int] = field(default_factory=list)
    keys: list[Any] = field(default_factory=list)
    prepared: list[Prepared | None] = field(default_factory=list)  # None: the record has no vector
    width: int | None = None  # every vector's length
    rows: Any = None  # numpy arrays: the first len(records) rows in use, room for as many more
    norms: Any = None
    filters: dict[str, list[bool]] = field(default_factory=dict)


@dataclass
class CollectionCache:
    """What a collection prepared, shared by every client of that collection: each record's vector,
    and each filter's verdict on it, with the id of the stored record they were computed from (an
    upsert stores a new record, so a stale entry is never read), and the matrix of those vectors by
    vector field (`Dense`). Numbers and booleans only: no text."""

    vectors: dict[Any, tuple[int, Prepared]] = field(default_factory=dict)
    filters: dict[str, dict[Any, tuple[int, bool]]] = field(default_factory=dict)
    dense: dict[str, Dense] = field(default_factory=dict)

    def drop(self, keys: Sequence[Any]) -> None:
        for key in keys:
            self.vectors.pop(key, None)
            for matches in self.filters.values():
                matches.pop(key, None)
        self.dense.clear()

    def clear(self) -> None:
        self.vectors.clear()
        self.filters.clear()
        self.dense.clear()


class PreparedInMemoryCollection(InMemoryCollection[Any, Any]):
    """An `InMemoryCollection` whose cosine search reads vectors prepared when they were stored."""

    def __init__(self, *args: Any, prepared: CollectionCache, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._prepared = prepared

    def _prepared_vector(self, key: Any, record: Mapping[str, Any], vector: Any) -> Prepared:
        cached = self._prepared.vectors.get(key)
        if cached is None or cached[0] != id(record):
            cached = (id(record), prepare(vector))
            self._prepared.vectors[key] = cached
        return cached[1]

    def _matches(self, expression: Any, wording: str, key: Any, record: Mapping[str, Any]) -> bool:
        """The framework's own filter evaluation, remembered per record until the record changes."""
        matches = self._prepared.filters.setdefault(wording, {})
        cached = matches.get(key)
        if cached is None or cached[0] != id(record):
            cached = (id(record), _evaluate_in_memory_filter(expression, record, self.definition))
            matches[key] = cached
        return cached[1]

    async def scan(
        self, filter: Any, fields: Sequence[str] = (), needles: Sequence[str] | None = None
    ) -> list[dict[str, Any]]:
        """Every record matching `filter` (the framework's evaluation), its `fields` or all but vectors,
        in one pass. `needles` narrow nothing: the texts are in this process already, and the caller
        checks each one."""
        await self._require_exists()
        if filter is not None:
            self._check_filter(filter)
        names = fields or [f.storage_name or f.name for f in self.definition.fields if f.field_type != "vector"]
        key_name = self.definition.key_field_storage_name
        wording = repr(filter)
        return [
            {name: record[name] for name in names}
            for record in self._state.records.values()
            if filter is None or self._matches(filter, wording, record[key_name], record)
        ]

    async def _require_exists(self) -> None:
        """The framework's refusal of an operation on a collection that does not exist, through its
        public `collection_exists` (its own `_require_collection` says the same)."""
        if not await self.collection_exists():
            raise IntegrationException(f"Collection '{self.collection_name}' does not exist.")

    def _check_filter(self, expression: Any) -> None:
        """The in-memory search's own checks of a filter: its operators and values, then each operand
        against its field's type."""
        _validate_in_memory_filter(expression, self.definition)
        _reject_incompatible_filter_operands(expression, self.definition)

    async def _inner_delete(self, keys: Sequence[Any], *, operation_options: Mapping[str, Any] | None = None) -> None:
        await super()._inner_delete(keys, operation_options=operation_options)
        self._prepared.drop(keys)

    async def ensure_collection_deleted(self, *, operation_options: Mapping[str, Any] | None = None) -> None:
        await super().ensure_collection_deleted(operation_options=operation_options)
        self._prepared.clear()

    async def _inner_search(self, **kwargs: Any) -> SearchResults[Any]:
        vector_field = self.definition.try_get_vector_field(kwargs.get("vector_property_name"))
        distance = (vector_field.distance_function if vector_field else None) or "DEFAULT"
        vector = kwargs.get("vector")
        if kwargs.get("search_type") != "vector" or vector is None or vector_field is None or distance not in _COSINE:
            return await super()._inner_search(**kwargs)
        await self._require_exists()
        query_values = _numeric_vector(vector, field_name="query")
        _validate_vector_dimensions(query_values, vector_field)
        query = prepare(query_values)
        expression = kwargs.get("filter")
        if expression is not None:
            self._check_filter(expression)
        wording = repr(expression)
        threshold = kwargs.get("score_threshold")
        storage_name = vector_field.storage_name or vector_field.name
        skip, top = kwargs.get("skip", 0), kwargs.get("top", 3)
        closest = self._closest(query, expression, wording, storage_name, threshold, skip + top)
        if closest is None:
            results = self._exact(query, expression, wording, storage_name, threshold)
            closest = results[: skip + top], len(results)
        results, total = closest
        found = [
            {"record": _copy(result["record"], storage_name), "score": result["score"]}
            for result in results[skip : skip + top]
        ]
        return SearchResults(found, metadata={"in_memory_total_count": total})

    def _exact(
        self, query: Prepared, expression: Any, wording: str, storage_name: str, threshold: float | None
    ) -> list[dict[str, Any]]:
        """Every record within the filter and threshold, with its exact distance, closest first."""
        key_name = self.definition.key_field_storage_name
        results: list[dict[str, Any]] = []
        for record in self._state.records.values():
            key = record[key_name]
            if expression is not None and not self._matches(expression, wording, key, record):
                continue
            stored = record.get(storage_name)
            if stored is None:
                continue
            score = cosine_distance(query, self._prepared_vector(key, record, stored))
            if threshold is not None and score > threshold:
                continue
            results.append({"record": record, "score": score})
        results.sort(key=lambda result: result["score"])
        return results

    def _closest(
        self,
        query: Prepared,
        expression: Any,
        wording: str,
        storage_name: str,
        threshold: float | None,
        wanted: int,
    ) -> tuple[list[dict[str, Any]], int] | None:
        """The first `wanted` results of `_exact` and how many it has, scored with the matrix (module
        docstring); None when the matrix cannot stand for these records."""
        import numpy as np  # loads in about 0.1 s: when a search first needs it, not at start

        records = list(self._state.records.values())
        dense = self._dense(records, storage_name)
        if dense is None or dense.width not in (None, query.length):
            return None
        eligible = np.array([p is not None for p in dense.prepared], np.bool_)
        if expression is not None:
            eligible &= np.array(self._verdicts(dense, records, expression, wording), np.bool_)
        positions = np.flatnonzero(eligible)
        if not len(positions):
            return [], 0
        dot = np.zeros(query.length)
        dot[list(query.coordinates)] = list(query.coordinates.values())
        if len(positions) == len(records):  # every record: the rows as they are, not a copy
            rows, norms = dense.rows[: len(records)], dense.norms[: len(records)]
        else:
            rows, norms = dense.rows[positions], dense.norms[positions]
        # einsum, not `@`: BLAS's threads, on two busy cores, made one product 1 to 14 ms instead of 0.2
        similarity = np.einsum("ij,j->i", rows, dot) / (norms * query.norm)
        if not np.all(np.isfinite(similarity)):
            return None
        approximate = 1 - np.clip(similarity, -1.0, 1.0)
        exact: dict[int, float] = {}

        def score(position: int) -> float:
            if position not in exact:
                prepared = dense.prepared[position]
                assert prepared is not None
                exact[position] = cosine_distance(query, prepared)
            return exact[position]

        if threshold is not None:  # surely within it, or within it exactly
            near = np.abs(approximate - threshold) <= _MARGIN
            kept = (approximate < threshold) & ~near
            for i in np.flatnonzero(near):
                kept[i] = score(int(positions[i])) <= threshold
            positions, approximate = positions[kept], approximate[kept]
        candidates = positions
        if len(positions) > wanted:
            bound = np.partition(approximate, wanted - 1)[wanted - 1] + 2 * _MARGIN if wanted else -np.inf
            candidates = positions[approximate <= bound]
        scored = sorted((score(int(p)), int(p)) for p in candidates)  # then in the store's order, as `_exact`
        return [{"record": records[p], "score": s} for s, p in scored[:wanted]], len(positions)

    def _dense(self, records: Sequence[Mapping[str, Any]], storage_name: str) -> Dense | None:
        """The matrix for `records`: extended by the records added since, or made anew. None when a
        vector cannot be prepared or differs in length from the others."""
        import numpy as np

        ids = list(map(id, records))
        dense = self._prepared.dense.get(storage_name)
        if dense is None or ids[: len(dense.records)] != dense.records:
            dense = self._prepared.dense[storage_name] = Dense()
        start = len(dense.records)
        key_name = self.definition.key_field_storage_name
        added: list[Prepared | None] = []
        for record in records[start:]:
            stored = record.get(storage_name)
            try:
                added.append(None if stored is None else self._prepared_vector(record[key_name], record, stored))
            except ValueError:  # raised where the record-by-record search reaches it, if it does
                del self._prepared.dense[storage_name]
                return None
        lengths = {p.length for p in added if p is not None} | ({dense.width} if dense.width else set())
        if len(lengths) > 1:
            del self._prepared.dense[storage_name]
            return None
        if lengths and dense.width is None:
            dense.width = lengths.pop()
        if dense.width is not None and (dense.rows is None or len(ids) > len(dense.rows)):
            rows, norms = np.zeros((2 * len(ids), dense.width)), np.ones(2 * len(ids))
            if dense.rows is not None:
                rows[:start], norms[:start] = dense.rows[:start], dense.norms[:start]
            dense.rows, dense.norms = rows, norms
        for offset, prepared in enumerate(added, start):
            if prepared is not None:
                dense.rows[offset, list(prepared.coordinates)] = list(prepared.coordinates.values())
                dense.norms[offset] = prepared.norm
        dense.records += ids[start:]
        dense.keys += [record[key_name] for record in records[start:]]
        dense.prepared += added
        return dense

    def _verdicts(
        self, dense: Dense, records: Sequence[Mapping[str, Any]], expression: Any, wording: str
    ) -> list[bool]:
        """The filter's verdict on each record, in the store's order (computed once per record)."""
        verdicts = dense.filters.setdefault(wording, [])
        for position in range(len(verdicts), len(records)):
            verdicts.append(self._matches(expression, wording, dense.keys[position], records[position]))
        return verdicts


def _copy(record: Mapping[str, Any], vector_name: str) -> dict[str, Any]:
    """A deep copy of a stored record, its vector (numbers only) copied as a flat list."""
    return {
        name: list(value) if name == vector_name and value is not None else deepcopy(value)
        for name, value in record.items()
    }


class PreparedInMemoryStore(InMemoryStore):
    """`InMemoryStore` handing out `PreparedInMemoryCollection`s that share state per name, as its own do."""

    def __init__(self) -> None:
        super().__init__()
        self._prepared: dict[str, CollectionCache] = {}

    def get_collection(
        self,
        record_type: type[Any],
        *,
        definition: VectorStoreCollectionDefinition | None = None,
        collection_name: str | None = None,
        embedding_generator: SupportsGetEmbeddings[Any, Any, Any] | None = None,
    ) -> PreparedInMemoryCollection:
        plain = super().get_collection(
            record_type, definition=definition, collection_name=collection_name, embedding_generator=embedding_generator
        )
        collection = PreparedInMemoryCollection(
            record_type,
            definition=definition,
            collection_name=plain.collection_name,
            embedding_generator=plain.embedding_generator,
            prepared=self._prepared.setdefault(plain.collection_name, CollectionCache()),
        )
        collection._state = plain._state  # the state the store keeps for this name
        return collection

    async def _inner_ensure_collection_deleted(
        self, collection_name: str, *, operation_options: Mapping[str, Any] | None = None
    ) -> None:
        await super()._inner_ensure_collection_deleted(collection_name, operation_options=operation_options)
        self._prepared.pop(collection_name, None)
