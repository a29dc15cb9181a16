"""The DuckDB search shaped for speed answers exactly what agent-framework-duckdb's own search answers:
the same records, in the same order, with the same scores, through ties, filters, thresholds, paging,
vectors returned, replaced and deleted records, NULL vectors and vectors whose norm underflows to zero."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest
from agent_framework import Filter, FilterGroup
from agent_framework_duckdb import DuckDBCollection, DuckDBStore

from workbench.recall.duckdb_search import RecallDuckDBCollection, RecallDuckDBStore
from workbench.recall.records import StoredMessage, embedded, record_type

DIMENSIONS = 16


def vector(rng: random.Random) -> list[float]:
    # Sparse and repetitive on purpose: zeros, equal vectors (ties) and negative values; never all zero.
    values = [rng.choice([0.0, 0.0, 0.0, 1.0, -0.5, 0.25, 3.0]) for _ in range(DIMENSIONS)]
    return values if any(values) else [*values[:-1], 1.0]


def vector_of(record: StoredMessage) -> list[float]:
    """A stored record's embedding (the registered model adds the field; StoredMessage declares none)."""
    return list(vars(record)["vector"])


def message(number: int, agent: str) -> StoredMessage:
    return StoredMessage(f"k{number:03}", f"text {number}", "user", number, "t", "app", agent, "ana", "s")


def collection(store: DuckDBStore):
    return store.get_collection(record_type(DIMENSIONS), collection_name="c")


async def search_both(stores, query, **options):
    found = []
    for store in stores:
        results = await collection(store).search(vector=query, **options)
        found.append([(r["record"].key, r["score"], r["record"].vector) async for r in results.results])
    return found


@pytest.fixture
def fallbacks(monkeypatch: pytest.MonkeyPatch) -> list[dict]:
    """The searches the fast collection handed to the framework's own search."""
    handed: list[dict] = []
    framework_search = DuckDBCollection._inner_search

    async def counted(self, **kwargs):
        if isinstance(self, RecallDuckDBCollection):
            handed.append(kwargs)
        return await framework_search(self, **kwargs)

    monkeypatch.setattr(DuckDBCollection, "_inner_search", counted)
    return handed


@pytest.fixture
async def stores(tmp_path: Path):
    both = [DuckDBStore(connection_string=str(tmp_path / "plain.duckdb")), RecallDuckDBStore(connection_string=str(tmp_path / "fast.duckdb"))]
    yield both
    for store in both:
        await store.aclose()


async def test_the_fast_search_returns_what_the_framework_search_returns(stores, fallbacks) -> None:
    rng = random.Random(4)
    rows = [embedded(message(n, rng.choice(["support", "logs"])), vector(rng)) for n in range(120)]
    rows += [embedded(message(200 + i, "support"), vector_of(rows[i])) for i in range(10)]  # exact ties
    rows += [record_type(DIMENSIONS)(**{**vars(message(300 + i, "support")), "vector": None}) for i in range(2)]
    for store in stores:
        await collection(store).ensure_collection_exists()
        await collection(store).upsert(rows, generate_vectors=False)
    support = FilterGroup("and", [Filter("application_id", "eq", "app"), Filter("agent_id", "eq", "support")])
    options: list[dict[str, Any]] = [
        {"top": 5},
        {"top": 7, "skip": 3, "filter": support},
        {"top": 50, "score_threshold": 0.6},
        {"top": 5, "filter": Filter("user_id", "eq", "bob")},
        {"top": 4, "skip": 2, "include_vectors": True},
        {"top": 200, "filter": Filter("agent_id", "ne", "logs"), "score_threshold": 1},
    ]
    for round_ in range(36):
        query = vector(rng)
        plain, fast = await search_both(stores, query, **options[round_ % len(options)])
        assert fast == plain
        if round_ % 6 == 5:  # change the store between searches: replace some records, delete others
            changed = [embedded(message(n, "logs"), vector(rng)) for n in rng.sample(range(120), 5)]
            gone = [f"k{n:03}" for n in rng.sample(range(120), 3)]
            for store in stores:
                await collection(store).upsert(changed, generate_vectors=False)
                await collection(store).delete(gone)
    assert fallbacks == []  # every search above ran the fast query


async def test_a_vector_whose_norm_underflows_is_left_out_as_the_framework_leaves_it_out(stores, fallbacks) -> None:
    """DuckDB's cosine distance of such a vector is a finite number; the framework drops the row."""
    tiny = embedded(message(1, "support"), [1e-200] * DIMENSIONS)
    near = embedded(message(2, "support"), [1.0] * DIMENSIONS)
    far = embedded(message(3, "support"), [1.0] + [0.0] * (DIMENSIONS - 1))
    for store in stores:
        await collection(store).ensure_collection_exists()
        await collection(store).upsert([tiny, near, far], generate_vectors=False)
    for options in ({"top": 1}, {"top": 3}, {"top": 2, "skip": 1}, {"top": 3, "score_threshold": 2.0}):
        plain, fast = await search_both(stores, [1.0] * DIMENSIONS, **options)
        assert fast == plain
        assert "k001" not in [key for key, _, _ in fast]
    assert fallbacks  # the fast query saw the tiny vector among its rows and handed over


async def test_bad_searches_are_refused_as_the_framework_refuses_them(stores) -> None:
    for store in stores:
        await collection(store).ensure_collection_exists()
    for bad in ({"vector": [0.0] * DIMENSIONS}, {"vector": [1.0] * 3}, {"vector": [1.0] * DIMENSIONS, "score_threshold": float("nan")}):
        errors = []
        for store in stores:
            with pytest.raises(Exception) as caught:
                await collection(store).search(**bad)
            errors.append((type(caught.value), str(caught.value)))
        assert errors[0] == errors[1]


async def test_scan_finds_every_record_of_a_scope_in_one_query(stores) -> None:
    fast = collection(stores[1])
    await fast.ensure_collection_exists()
    rng = random.Random(1)
    await fast.upsert([embedded(message(n, ["support", "logs"][n % 2]), vector(rng)) for n in range(300)], generate_vectors=False)
    rows = await fast.scan(Filter("agent_id", "eq", "logs"))
    assert sorted(row["key"] for row in rows) == sorted(f"k{n:03}" for n in range(1, 300, 2))
    assert "vector" not in rows[0] and rows[0]["text"].startswith("text ")
