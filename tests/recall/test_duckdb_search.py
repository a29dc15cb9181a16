"""The DuckDB search shaped for speed answers exactly what agent-framework-duckdb's own search answers:
the same records, in the same order, with the same scores, through ties, filters, thresholds, paging,
vectors returned, replaced and deleted records, NULL vectors, vectors whose norm underflows to zero or
whose products overflow, on FLOAT (the product's) and DOUBLE vector columns. Its query vector is a SQL
literal: it holds the same bits as the framework's bound parameter."""

from __future__ import annotations

import math
import os
import random
import struct
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any

import duckdb
import pytest
from agent_framework import Filter, FilterGroup, VectorStoreField, vectorstoremodel
from agent_framework_duckdb import DuckDBCollection, DuckDBStore

from workbench.recall.duckdb_search import (
    ROW_GROUP_ROWS,
    RecallDuckDBCollection,
    RecallDuckDBStore,
    threads_for,
    vector_literal,
)
from workbench.recall.records import StoredMessage, embedded, record_type

DIMENSIONS = 16
# Numbers whose text or conversion could go wrong: signed zero, subnormals, the ends of the double and
# float ranges (3.4028235677973366e38 rounds past the largest float: both paths must refuse it alike),
# exponents written with a sign, and reprs of 17 digits.
AWKWARD = [
    0.0,
    -0.0,
    5e-324,
    -5e-324,
    2.225073858507201e-308,
    2.2250738585072014e-308,
    1e-310,
    1.7976931348623157e308,
    -1.7976931348623157e308,
    1e16,
    1e-05,
    0.1,
    1 / 3,
    3.4028234663852886e38,
    3.4028235677973366e38,
    1.401298464324817e-45,
    7e-46,
    1.1754942106924411e-38,
    123456789.12345679,
    -2.5e-320,
]


@vectorstoremodel
@dataclass
class Float64Message(StoredMessage):
    """The same record with a DOUBLE[16] vector column (the framework's default; the product's is FLOAT)."""

    vector: Annotated[list[float] | None, VectorStoreField("vector", dimensions=DIMENSIONS)] = None


def vector(rng: random.Random) -> list[float]:
    # Sparse and repetitive on purpose: zeros, equal vectors (ties) and negative values; never all zero.
    values = [rng.choice([0.0, 0.0, 0.0, 1.0, -0.5, 0.25, 3.0]) for _ in range(DIMENSIONS)]
    return values if any(values) else [*values[:-1], 1.0]


def query_vector(rng: random.Random) -> list[float]:
    """A query whose numbers have long reprs, some awkward ones and some signed zeros."""
    values = [
        rng.choice([rng.uniform(-1, 1), rng.choice([0.0, -0.0, 1e-300, -7e-310]), 0.0]) for _ in range(DIMENSIONS)
    ]
    return values if any(values) else [*values[:-1], rng.random() + 0.5]


def vector_of(record: StoredMessage) -> list[float]:
    """A stored record's embedding (the registered model adds the field; StoredMessage declares none)."""
    return list(vars(record)["vector"])


def message(number: int, agent: str) -> StoredMessage:
    return StoredMessage(f"k{number:03}", f"text {number}", "user", number, "t", "app", agent, "ana", "s")


MODELS = {"FLOAT": record_type(DIMENSIONS), "DOUBLE": Float64Message}


@pytest.fixture(params=list(MODELS))
def model(request: pytest.FixtureRequest) -> type[StoredMessage]:
    return MODELS[request.param]


def row(model: type[StoredMessage], record: StoredMessage, values: list[float] | None) -> StoredMessage:
    return model(**{**vars(record), "vector": values})


def collection(store: DuckDBStore, model: type[StoredMessage] = MODELS["FLOAT"]):
    return store.get_collection(model, collection_name="c")


async def search_both(stores, model, query, **options):
    found = []
    for store in stores:
        results = await collection(store, model).search(vector=query, **options)
        found.append([(r["record"].key, r["score"], r["record"].vector) async for r in results.results])
    return found


async def fill(stores, model, rows) -> None:
    for store in stores:
        await collection(store, model).ensure_collection_exists()
        await collection(store, model).upsert(rows, generate_vectors=False)


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
    both = [
        DuckDBStore(connection_string=str(tmp_path / "plain.duckdb")),
        RecallDuckDBStore(connection_string=str(tmp_path / "fast.duckdb")),
    ]
    yield both
    for store in both:
        await store.aclose()


async def test_the_fast_search_returns_what_the_framework_search_returns(stores, model, fallbacks) -> None:
    rng = random.Random(4)
    rows = [row(model, message(n, rng.choice(["support", "logs"])), vector(rng)) for n in range(80)]
    rows += [row(model, message(200 + i, "support"), vector_of(rows[i])) for i in range(10)]  # exact ties
    rows += [row(model, message(300 + i, "support"), None) for i in range(2)]
    big = 1e300 if model is MODELS["DOUBLE"] else 1e30  # products and norms overflow to infinity
    rows += [
        row(model, message(400 + i, "logs"), [big * rng.choice([0.0, 1.0, -1.0, 1.0]) for _ in range(DIMENSIONS)])
        for i in range(4)
    ]
    await fill(stores, model, rows)
    support = FilterGroup("and", [Filter("application_id", "eq", "app"), Filter("agent_id", "eq", "support")])
    options: list[dict[str, Any]] = [
        {"top": 5},
        {"top": 7, "skip": 3, "filter": support},
        {"top": 50, "score_threshold": 0.6},
        {"top": 5, "filter": Filter("user_id", "eq", "bob")},
        {"top": 4, "skip": 2, "include_vectors": True},
        {"top": 200, "filter": Filter("agent_id", "ne", "logs"), "score_threshold": 1},
        {"top": 100, "skip": 1},
    ]
    for round_ in range(35):
        query = vector(rng) if round_ % 2 else query_vector(rng)
        plain, fast = await search_both(stores, model, query, **options[round_ % len(options)])
        assert fast == plain
        if round_ % 7 == 6:  # change the store between searches: replace some records, delete others
            changed = [row(model, message(n, "logs"), vector(rng)) for n in rng.sample(range(80), 5)]
            gone = [f"k{n:03}" for n in rng.sample(range(80), 3)]
            for store in stores:
                await collection(store, model).upsert(changed, generate_vectors=False)
                await collection(store, model).delete(gone)
    assert fallbacks == []  # every search above ran the fast query


async def test_a_vector_whose_norm_underflows_is_left_out_as_the_framework_leaves_it_out(
    stores, model, fallbacks
) -> None:
    """DuckDB's cosine distance of such a vector is a finite number; the framework drops the row."""
    small = 1e-200 if model is MODELS["DOUBLE"] else 1e-25  # its square underflows to zero
    tiny = row(model, message(1, "support"), [small] * DIMENSIONS)
    near = row(model, message(2, "support"), [1.0] * DIMENSIONS)
    far = row(model, message(3, "support"), [1.0] + [0.0] * (DIMENSIONS - 1))
    await fill(stores, model, [tiny, near, far])
    for options in ({"top": 1}, {"top": 3}, {"top": 2, "skip": 1}, {"top": 3, "score_threshold": 2.0}):
        plain, fast = await search_both(stores, model, [1.0] * DIMENSIONS, **options)
        assert fast == plain
        assert "k001" not in [key for key, _, _ in fast]
    assert fallbacks  # the fast query saw the tiny vector among its rows and handed over


async def outcome(store: DuckDBStore, model: type[StoredMessage], options: dict[str, Any]) -> Any:
    """What a search answers: its keys and scores, or its error."""
    try:
        results = await collection(store, model).search(**options)
        return [(r["record"].key, r["score"]) async for r in results.results]
    except Exception as error:
        return type(error), str(error)


async def test_bad_searches_are_refused_as_the_framework_refuses_them(stores, model) -> None:
    """Refused alike before any row is read; a query beyond a FLOAT column's range is refused alike once
    a row is compared with it (and, like the framework's, not while no row is)."""
    nan, inf = float("nan"), float("inf")
    bad_searches: list[dict[str, Any]] = [
        {"vector": [0.0] * DIMENSIONS},
        {"vector": [-0.0] * DIMENSIONS},
        {"vector": [1.0] * 3},
        {"vector": [1.0] * (DIMENSIONS - 1) + [nan]},
        {"vector": [1.0] * (DIMENSIONS - 1) + [-inf]},
        {"vector": [1.0] * (DIMENSIONS - 1) + ["1"]},
        {"vector": [1.0] * DIMENSIONS, "score_threshold": nan},
        {"vector": [1.0] * (DIMENSIONS - 1) + [1e39]},  # beyond the float range
    ]
    await fill(stores, model, [])
    for filled in (False, True):
        if filled:
            await fill(stores, model, [row(model, message(1, "support"), [1.0] * DIMENSIONS)])
        for bad in bad_searches:
            plain, fast = [await outcome(store, model, bad) for store in stores]
            assert fast == plain
            refused = isinstance(plain, tuple)
            assert refused == (bad["vector"][-1] != 1e39 or (filled and model is MODELS["FLOAT"]))


def _bits(values: Any, kind: str) -> list[bytes]:
    return [struct.pack("<d" if kind == "DOUBLE" else "<f", v) for v in values]


@pytest.mark.parametrize("kind", ["DOUBLE", "FLOAT"])
def test_the_query_literal_holds_the_bits_the_bound_parameter_holds(kind: str) -> None:
    """The framework binds the query as a list parameter and casts it to the column's type; the literal
    must give DuckDB the very same numbers (or the very same refusal), for any finite double."""
    rng = random.Random(9)
    field = VectorStoreField("vector", name="v", dimensions=4, type_="float" if kind == "DOUBLE" else "float32")
    vectors = [AWKWARD[i : i + 4] for i in range(0, len(AWKWARD), 4)]
    vectors += [
        [struct.unpack("<d", rng.getrandbits(64).to_bytes(8, "little"))[0] for _ in range(4)] for _ in range(40)
    ]
    vectors += [[rng.uniform(-1, 1) * 10.0 ** rng.randint(-330, 308) for _ in range(4)] for _ in range(40)]
    vectors += [
        [rng.uniform(-1, 1) * 10.0 ** rng.randint(-50, 38) for _ in range(4)] for _ in range(80)
    ]  # floats' range
    connection = duckdb.connect()
    compared = refused = 0
    for values in vectors:
        values = [v if math.isfinite(v) else 1.0 for v in values]
        answers: list[list[bytes] | str] = []
        for statement, parameters in (
            (f"SELECT CAST(? AS {kind}[4])", [values]),
            (f"SELECT {vector_literal(values, field)}", []),
        ):
            try:
                (found,) = connection.execute(statement, parameters).fetchall()
                answers.append(_bits(found[0], kind))
            except duckdb.ConversionException as error:
                answers.append(str(error).splitlines()[0])  # the value refused (the SQL quoted after it differs)
        assert answers[0] == answers[1], values
        compared += 1
        refused += isinstance(answers[0], str)
    assert compared - refused > 80 and bool(refused) == (kind == "FLOAT")  # FLOAT refuses what it cannot hold


async def test_scan_finds_every_record_of_a_scope_in_one_query(stores) -> None:
    fast = collection(stores[1])
    await fast.ensure_collection_exists()
    rng = random.Random(1)
    await fast.upsert(
        [embedded(message(n, ["support", "logs"][n % 2]), vector(rng)) for n in range(40)], generate_vectors=False
    )
    rows = await fast.scan(Filter("agent_id", "eq", "logs"))
    assert sorted(row["key"] for row in rows) == sorted(f"k{n:03}" for n in range(1, 40, 2))
    assert "vector" not in rows[0] and rows[0]["text"].startswith("text ")
    assert await fast.scan(Filter("agent_id", "eq", "logs"), ("key", "turn")) == [
        {"key": r["key"], "turn": r["turn"]} for r in rows
    ]


async def test_a_delete_removes_what_the_framework_delete_removes(stores) -> None:
    """One JSON array parameter instead of one parameter per key: the same rows go, whatever the keys."""
    awkward = [
        "it's",
        '"quoted"',
        "back\\slash",
        "[1, 2]",
        "null",
        "",
        "caf\u00e9",
        "\u4e2d\u6587",
        "tab\tnew\nline",
        "\U0001f600",
    ]
    rows = [
        row(MODELS["FLOAT"], StoredMessage(key, "t", "user", 1, "t", "app", "support", "ana", "s"), [1.0] * DIMENSIONS)
        for key in awkward
    ]
    await fill(stores, MODELS["FLOAT"], rows)

    async def left(store: DuckDBStore) -> list[str]:
        return sorted(r.key for r in await collection(store).get(awkward))

    for gone, count in ((awkward[::2], 5), (["missing", awkward[1], awkward[1]], 4), ([], 4), (awkward, 0)):
        for store in stores:
            await collection(store).delete(gone)
        assert await left(stores[1]) == await left(stores[0])
        assert len(await left(stores[1])) == count
    refused = []
    for store in stores:  # a key the key field refuses is refused alike
        with pytest.raises(Exception) as caught:
            await collection(store).delete([1])
        refused.append((type(caught.value), str(caught.value)))
    assert refused[0] == refused[1]


async def test_a_search_runs_on_one_thread_per_row_group_at_most_one_per_core(stores) -> None:
    cores = os.cpu_count() or 1
    assert [threads_for(n) for n in (0, 1, ROW_GROUP_ROWS, ROW_GROUP_ROWS + 1)] == [1, 1, 1, min(2, cores)]
    assert threads_for(1_000_000) == min(9, cores)
    fast = stores[1]
    await fill([fast], MODELS["FLOAT"], [row(MODELS["FLOAT"], message(1, "support"), [1.0] * DIMENSIONS)])
    await fast._client.run(lambda connection: connection.execute(f"SET threads = {cores + 1}"))
    await collection(fast).search(vector=[1.0] * DIMENSIONS, top=1)
    threads = await fast._client.run(
        lambda connection: connection.execute("SELECT current_setting('threads')").fetchall()
    )
    assert threads == [(1,)]
