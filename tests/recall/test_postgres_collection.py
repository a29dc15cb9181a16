"""The recall collection on PostgreSQL spans two tables (messages, and embeddings under HNSW): what it
returns must be what the framework's own one-table collection returns for the same records."""

from __future__ import annotations

from typing import Any

import pytest
from agent_framework import Filter
from agent_framework_postgres import PostgresStore

from workbench.recall.embedders import LexicalEmbeddingClient
from workbench.recall.postgres_store import PostgresBackend
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


async def results(collection: Any, vector: list[float], **options: Any) -> list[tuple[str, float, dict[str, Any]]]:
    found = await collection.search(vector=vector, operation_options={"exact": True}, **options)
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
