"""The prepared in-memory search answers exactly what Agent Framework's own InMemoryStore answers:
the same records, in the same order, with the same scores and the same count, through filters,
thresholds, paging, added, replaced and deleted records."""

from __future__ import annotations

import random
from typing import Any

from agent_framework import Filter, FilterGroup, InMemoryStore

from workbench.recall.memory_store import PreparedInMemoryStore
from workbench.recall.records import StoredMessage, embedded, record_type

DIMENSIONS = 16


def vector(rng: random.Random) -> list[float]:
    # Sparse and repetitive on purpose: zeros, equal vectors (ties) and negative values.
    return [rng.choice([0.0, 0.0, 0.0, 1.0, -0.5, 0.25, 3.0]) for _ in range(DIMENSIONS)] or [1.0]


def vector_of(record: StoredMessage) -> list[float]:
    """A stored record's embedding (the registered model adds the field; StoredMessage declares none)."""
    return list(vars(record)["vector"])


def message(number: int, agent: str) -> StoredMessage:
    return StoredMessage(f"k{number}", f"text {number}", "user", number, "t", "app", agent, "ana", "s")


async def search_both(stores, query, **options):
    found = []
    for store in stores:
        collection = store.get_collection(record_type(DIMENSIONS), collection_name="c")
        results = await collection.search(vector=query, **options)
        hits = [(r["record"].key, r["score"], r["record"].vector) async for r in results.results]
        found.append((hits, results.metadata))
    return found


async def test_the_prepared_search_returns_what_the_framework_search_returns():
    rng = random.Random(4)
    stores = [InMemoryStore(), PreparedInMemoryStore()]
    rows = []
    for number in range(120):
        values = vector(rng)
        if not any(values):
            values[0] = 1.0
        rows.append(embedded(message(number, rng.choice(["support", "logs"])), values))
    rows += [embedded(message(200 + i, "support"), vector_of(rows[i])) for i in range(10)]  # exact ties
    for store in stores:
        collection = store.get_collection(record_type(DIMENSIONS), collection_name="c")
        await collection.ensure_collection_exists()
        await collection.upsert(rows, generate_vectors=False)
    support = FilterGroup("and", [Filter("application_id", "eq", "app"), Filter("agent_id", "eq", "support")])
    for round_ in range(60):
        query = vector(rng)
        if not any(query):
            query[-1] = -1.0
        choices: list[dict[str, Any]] = [
            {"top": 5},
            {"top": 7, "skip": 3, "filter": support},
            {"top": 50, "score_threshold": 0.6},
            {"top": 5, "filter": Filter("user_id", "eq", "bob")},
        ]
        options = choices[round_ % 4]
        plain, prepared = await search_both(stores, query, **options)
        assert prepared == plain
        if round_ % 5 == 2:  # records added between searches (the matrix is extended)
            added = [embedded(message(300 + 10 * round_ + i, "support"), vector(rng) or [1.0]) for i in range(4)]
            for store in stores:
                collection = store.get_collection(record_type(DIMENSIONS), collection_name="c")
                await collection.upsert([r for r in added if any(vector_of(r))], generate_vectors=False)
        if round_ % 5 == 4:  # change the store between searches: replace some records, delete others
            changed = [embedded(message(n, "logs"), vector(rng) or [1.0]) for n in rng.sample(range(120), 5)]
            changed = [r for r in changed if any(vector_of(r))]
            gone = [f"k{n}" for n in rng.sample(range(120), 3)]
            for store in stores:
                collection = store.get_collection(record_type(DIMENSIONS), collection_name="c")
                await collection.upsert(changed, generate_vectors=False)
                await collection.delete(gone)


async def test_distances_a_float_sum_rounds_differently_keep_the_exact_order():
    """Large coordinates that cancel: the matrix's sums differ from the exact ones in the last bits, and
    near-equal distances still come back in the exact order, with the exact scores."""
    rng = random.Random(7)
    stores = [InMemoryStore(), PreparedInMemoryStore()]
    base = [rng.choice([1e12, -1e12, 1.0, 1e-3, 0.0]) for _ in range(DIMENSIONS)]
    rows = []
    for number in range(200):
        values = [v + rng.choice([0.0, 0.0, 1e-3, -1e-3, 1.0]) for v in base]
        rows.append(embedded(message(number, "support"), values))
    for store in stores:
        collection = store.get_collection(record_type(DIMENSIONS), collection_name="c")
        await collection.ensure_collection_exists()
        await collection.upsert(rows, generate_vectors=False)
    for _ in range(20):
        query = [v + rng.choice([0.0, 1.0, -1.0, 1e-3]) for v in base]
        plain, prepared = await search_both(stores, query, top=10)
        assert prepared == plain
