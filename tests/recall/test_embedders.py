"""The built-in lexical embedder, and OpenAIEmbeddingClient against a loopback /v1/embeddings server,
including the replies of misconfigured servers."""

from __future__ import annotations

import math

import pytest

from tests.recall.helpers import USER, seat
from tests.support.embeddings_server import embeddings_server
from workbench.recall.embedders import (
    LEXICAL_DIMENSIONS,
    EmbeddingError,
    LexicalEmbeddingClient,
    build_embedder,
    lexical_embedder,
)
from workbench.recall.store import RecallStore


def _cosine(a: list[float], b: list[float]) -> float:
    return sum(x * y for x, y in zip(a, b, strict=True))


async def test_the_lexical_embedder_is_deterministic_normalised_and_says_it_is_not_semantic() -> None:
    embedder = lexical_embedder()
    first, again, other = await embedder.embed(["database=PostgreSQL", "database=PostgreSQL", "printer jam"])
    assert first == again and len(first) == LEXICAL_DIMENSIONS
    assert math.isclose(sum(x * x for x in first), 1.0)
    assert "not semantic" in embedder.label and not embedder.semantic
    assert embedder.usage is None  # a local function reports no tokens: unknown, never zero
    query = LexicalEmbeddingClient().embed("Which database is it?")
    assert _cosine(query, first) > _cosine(query, other)
    assert _cosine(LexicalEmbeddingClient().embed("DB"), first) < 0.2  # words, not meaning


async def test_an_openai_compatible_server_embeds_through_the_framework_client() -> None:
    with embeddings_server() as (url, state):
        embedder = build_embedder("nomic-embed-text", base_url=url, api_key=None, timeout=5)
        vectors = await embedder.embed(["database=PostgreSQL", "printer jam"])
    assert [len(v) for v in vectors] == [state.dimensions] * 2
    assert state.requests[0]["input"] == ["database=PostgreSQL", "printer jam"]
    assert state.requests[0]["model"] == "nomic-embed-text"
    assert embedder.semantic and embedder.label.startswith("nomic-embed-text @ 127.0.0.1:")
    assert embedder.usage is not None and embedder.usage.input_tokens == 3


async def test_recall_works_end_to_end_on_server_embeddings(store: RecallStore) -> None:
    with embeddings_server() as (url, _):
        embedder = build_embedder("nomic-embed-text", base_url=url, api_key=None, timeout=5)
        await seat(store, "support", embedder=embedder).say("database=PostgreSQL")
        logs = seat(store, "logs", embedder=embedder)
        await logs.say("Which database?")
    assert "database=PostgreSQL" in [r.text for r in logs.recalled[-1]]
    assert await store.records(USER)


@pytest.mark.parametrize(
    ("mode", "says"),
    [
        ("per_token", "one vector per token (a list of lists)"),
        ("varying", "returned vectors of 65 and then 66 dimensions"),
        ("too_few", "returned 1 vectors for 2 texts"),
    ],
)
async def test_a_server_answering_the_wrong_shape_gets_one_clear_line(mode: str, says: str) -> None:
    with embeddings_server(mode) as (url, _):
        embedder = build_embedder("chat-model", base_url=url, api_key=None, timeout=5)
        with pytest.raises(EmbeddingError) as failure:
            await embedder.embed(["database=PostgreSQL", "printer jam"])
            await embedder.embed(["database=PostgreSQL", "printer jam"])
    message = str(failure.value)
    assert says in message and "\n" not in message
    assert "--embedding-model" in message


async def test_a_wrong_shape_fails_the_turn_and_stores_nothing(store: RecallStore) -> None:
    with embeddings_server("per_token") as (url, _):
        embedder = build_embedder("chat-model", base_url=url, api_key=None, timeout=5)
        support = seat(store, "support", embedder=embedder)
        with pytest.raises(EmbeddingError):
            await support.say("database=PostgreSQL")
    assert await store.records(USER) == []


async def test_an_unreachable_server_is_one_line_too() -> None:
    embedder = build_embedder("m", base_url="http://127.0.0.1:9/v1", api_key=None, timeout=2)
    with pytest.raises(EmbeddingError) as failure:
        await embedder.embed(["x"])
    assert "cannot reach" in str(failure.value) and "\n" not in str(failure.value)
