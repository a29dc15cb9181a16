"""The recall collection on PostgreSQL spans two tables (messages, and embeddings under HNSW) and
searches both in one statement: what it returns must be what the framework's own one-table
collection returns for the same records."""

from __future__ import annotations

from typing import Any

import psycopg
import pytest
from agent_framework import Filter
from agent_framework_postgres import PostgresStore
from psycopg.conninfo import make_conninfo

from workbench.recall.embedders import LexicalEmbeddingClient
from workbench.recall.postgres_store import EF_SEARCH, PostgresBackend, search_settings
from workbench.recall.records import StoredMessage, embedded, record_type

WORDS = ["database", "export", "billing", "restart", "logs", "midnight", "Contoso", "version"]


def messages() -> list[tuple[StoredMessage, list[float]]]:
    embedder = LexicalEmbeddingClient()
    rows = []
    for i in range(40):
        text = " ".join(WORDS[(i * k) % len(WORDS)] for k in (1, 3, 5)) + f" #{i % 6}"
        record = StoredMessage(
            f"k{i:02}", text, "user", i, "2026-11-30T12:00:00+00:00", "app", "support", ("ana", "bob")[i % 2], "s1"
        )
        rows.append((record, embedder.embed(text)))
    return rows


async def results(
    collection: Any, vector: list[float], exact: bool = True, **options: Any
) -> list[tuple[str, float, dict[str, Any]]]:
    found = await collection.search(vector=vector, operation_options={"exact": exact}, **options)
    return [
        (r["record"].key, round(float(r["score"]), 6), {k: v for k, v in vars(r["record"]).items() if k != "vector"})
        async for r in found.results
    ]


@pytest.mark.parametrize(
    "options",
    [
        {"top": 5},
        {"top": 4, "skip": 3, "filter": Filter("user_id", "eq", "ana")},
        {"top": 10, "score_threshold": 0.6},
    ],
)
async def test_the_two_table_search_returns_what_the_frameworks_one_table_search_returns(
    postgres_database: str, options: dict[str, Any]
) -> None:
    rows = messages()
    ours = PostgresBackend(postgres_database).open()
    theirs = PostgresStore(connection_string=postgres_database)
    try:
        collection = ours.get_collection(record_type(256, "hnsw"), collection_name="recall_lexical_256")
        await collection.ensure_collection_exists()
        await collection.upsert([embedded(r, v, "hnsw") for r, v in rows], generate_vectors=False)
        reference = theirs.get_collection(record_type(256), collection_name="reference")
        await reference.ensure_collection_exists()
        await reference.upsert([embedded(r, v) for r, v in rows], generate_vectors=False)

        vector = LexicalEmbeddingClient().embed("database export at midnight")
        expected = await results(reference, vector, **options)
        assert expected and await results(collection, vector, **options) == expected
        assert [r.key for r in await collection.get([r.key for r, _ in rows[:3]])] == ["k00", "k01", "k02"]
    finally:
        await ours.__aexit__(None, None, None)
        await theirs.__aexit__(None, None, None)


async def test_a_scope_the_first_candidates_miss_is_searched_on_in_strict_order(postgres_database: str) -> None:
    """The first walk of the index (no iterative scan) finds only other users' messages, which are all
    closer to the query: the search goes on in strict order and finds the user's own, as the framework's
    (without going on it found none)."""
    embedder = LexicalEmbeddingClient()
    near = [f"database export at midnight #{i}" for i in range(EF_SEARCH + 50)]
    far = [f"restart billing for Contoso version {i}" for i in range(4)]
    rows = [
        (StoredMessage(f"k{i:03}", text, "user", i, "2026-11-30T12:00:00+00:00", "app", "support", user, "s1"), vector)
        for i, (text, user) in enumerate([(t, "ana") for t in near] + [(t, "bob") for t in far])
        for vector in [embedder.embed(text)]
    ]
    # A table this small is read whole, not through its index, unless the planner is told otherwise.
    ours = PostgresBackend(make_conninfo(postgres_database, options="-c enable_seqscan=off")).open()
    try:
        collection = ours.get_collection(record_type(256, "hnsw"), collection_name="recall_lexical_256")
        await collection.ensure_collection_exists()
        await collection.upsert([embedded(r, v, "hnsw") for r, v in rows], generate_vectors=False)
        vector = embedder.embed("database export at midnight")
        options: dict[str, Any] = {"top": 3, "filter": Filter("user_id", "eq", "bob")}
        exact = await results(collection, vector, **options)
        found = await results(collection, vector, exact=False, **options)
        assert len(exact) == 3 and [score for _, score, _ in found] == [score for _, score, _ in exact]
        assert all(fields["user_id"] == "bob" for _, _, fields in found)  # which of tied records may differ
    finally:
        await ours.__aexit__(None, None, None)


async def test_the_index_search_finds_the_exact_scores_with_each_record_whole(postgres_database: str) -> None:
    """Forty records are within one HNSW search's reach: the index finds the exact distances (which of
    several tied records it returns may differ), each with its own message's fields."""
    rows = messages()
    stored = {record.key: vars(record) for record, _ in rows}
    ours = PostgresBackend(postgres_database).open()
    try:
        collection = ours.get_collection(record_type(256, "hnsw"), collection_name="recall_lexical_256")
        await collection.ensure_collection_exists()
        await collection.upsert([embedded(r, v, "hnsw") for r, v in rows], generate_vectors=False)
        vector = LexicalEmbeddingClient().embed("database export at midnight")
        for options in ({"top": 8}, {"top": 3, "skip": 2, "filter": Filter("user_id", "eq", "bob")}):
            exact = await results(collection, vector, **options)
            found = await results(collection, vector, exact=False, **options)
            assert [score for _, score, _ in found] == [score for _, score, _ in exact]
            assert all(fields == {k: v for k, v in stored[key].items() if k != "vector"} for key, _, fields in found)
    finally:
        await ours.__aexit__(None, None, None)


def test_the_stores_connections_start_with_the_hnsw_search_settings_and_the_users_options_win(
    postgres_database: str,
) -> None:
    names = ("hnsw.ef_search", "hnsw.iterative_scan", "statement_timeout")
    conninfo = search_settings(make_conninfo(postgres_database, options="-c statement_timeout=5000"))
    with psycopg.connect(conninfo) as connection:
        shown = [connection.execute(f"SHOW {name}").fetchone() for name in names]
    assert shown == [(str(EF_SEARCH),), ("off",), ("5s",)]
    # A setting of the user's own wins over the store's (more candidates: more recall, slower searches).
    conninfo = search_settings(make_conninfo(postgres_database, options="-c hnsw.ef_search=400"))
    with psycopg.connect(conninfo) as connection:
        shown = [connection.execute(f"SHOW {name}").fetchone() for name in names]
    assert shown == [("400",), ("off",), ("0",)]
