"""Embedders: any OpenAI-compatible /v1/embeddings server, or a built-in lexical one for offline use.

Whatever comes back is checked before it reaches a store: one vector per text, flat, finite, of one
size. A server that answers otherwise gets one line naming what to change, never a wrong search."""

from __future__ import annotations

import hashlib
import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from agent_framework import BaseEmbeddingClient, Embedding, GeneratedEmbeddings, SupportsGetEmbeddings

from workbench.memory.shown import quoted
from workbench.runtime.azure import SignIn
from workbench.runtime.calls import CallLog
from workbench.runtime.config import ModelConfig
from workbench.runtime.usage import Usage

LEXICAL_DIMENSIONS = 256
LEXICAL_LABEL = "lexical (built-in: hashed words and character trigrams; not semantic)"
_WORD = re.compile(r"\w+", re.UNICODE)


class EmbeddingError(Exception):
    """The embedder cannot be used as it answers; the message is one line naming what to change."""


class LexicalEmbeddingClient(BaseEmbeddingClient[str, list[float], Any]):
    """A deterministic bag of hashed words and character trigrams, L2-normalised.

    It finds messages that share words with the query, as a keyword search would, and knows nothing
    of meaning: "DB" and "database" are unrelated to it. Offline, free, and the same on every machine
    (hashes are blake2b, not Python's salted `hash`)."""

    def __init__(self, dimensions: int = LEXICAL_DIMENSIONS) -> None:
        super().__init__()
        self.dimensions = dimensions

    def embed(self, text: str) -> list[float]:
        vector = [0.0] * self.dimensions
        for word in _WORD.findall(text.casefold()):
            self._add(vector, "w:" + word, 1.0)
            padded = f"<{word}>"
            for i in range(len(padded) - 2):
                self._add(vector, "c:" + padded[i : i + 3], 0.25)
        norm = math.sqrt(sum(x * x for x in vector))
        return [x / norm for x in vector] if norm else vector

    def _add(self, vector: list[float], feature: str, weight: float) -> None:
        digest = hashlib.blake2b(feature.encode(), digest_size=8).digest()
        number = int.from_bytes(digest, "little")
        vector[number % self.dimensions] += weight if number >> 63 else -weight

    async def get_embeddings(
        self, values: Sequence[str], *, options: Any | None = None
    ) -> GeneratedEmbeddings[list[float], Any]:
        return GeneratedEmbeddings([Embedding(self.embed(v), model="lexical") for v in values], options=options)


# Told of every successful embeddings request: the texts sent and the usage reported (None: unknown).
EmbeddingObserver = Callable[[Sequence[str], Usage | None], None]


@dataclass
class Embedder:
    """An embedding client with what the app shows about it, and its calls counted."""

    client: SupportsGetEmbeddings[Any, Any, Any]
    label: str
    name: str
    semantic: bool
    calls: int = 0
    chars: int = 0
    usage: Usage | None = field(default_factory=lambda: Usage(0, 0))
    dimensions: int | None = None
    observer: EmbeddingObserver | None = field(default=None, repr=False)
    sign_in: SignIn | None = None  # on Azure OpenAI: the kind of credential sent, to read a refusal by

    async def embed(self, texts: Sequence[str]) -> list[list[float]]:
        """One checked vector per text. Raises EmbeddingError with one line naming what to change."""
        self.calls += 1
        self.chars += sum(len(t) for t in texts)
        try:
            generated = await self.client.get_embeddings(list(texts))
        except EmbeddingError:
            raise
        except Exception as exc:
            from workbench.runtime.failures import explain_failure

            raise EmbeddingError(f"the embeddings call failed: {explain_failure(exc, sign_in=self.sign_in)}") from exc
        reported = _reported_usage(getattr(generated, "usage", None))
        self.usage = None if self.usage is None or reported is None else self.usage + reported
        vectors = [self._checked(item.vector) for item in generated]
        if len(vectors) != len(texts):
            raise EmbeddingError(
                f"the embeddings server {quoted(self.name)} returned {len(vectors)} vectors for {len(texts)} texts: "
                "it must return one vector per input; check that --embedding-model names an embedding model"
            )
        if self.observer is not None:
            self.observer(texts, reported)
        return vectors

    def _checked(self, vector: Any) -> list[float]:
        if not isinstance(vector, list | tuple) or not vector:
            raise EmbeddingError(
                f"the embeddings server {quoted(self.name)} returned something other than a list of numbers: "
                "check that --embedding-model names an embedding model"
            )
        if any(isinstance(x, list | tuple) for x in vector):
            raise EmbeddingError(
                f"the embeddings server {quoted(self.name)} returned one vector per token (a list of lists), not one "
                "per text: it is serving a chat model or pooling is off. Serve an embedding model (llama.cpp: "
                "--embedding --pooling mean; llama-cpp-python: an embedding GGUF) and name it with --embedding-model"
            )
        if not all(isinstance(x, int | float) and not isinstance(x, bool) and math.isfinite(x) for x in vector):
            raise EmbeddingError(
                f"the embeddings server {quoted(self.name)} returned a vector with values that are not finite numbers"
            )
        if self.dimensions is None:
            self.dimensions = len(vector)
        elif len(vector) != self.dimensions:
            raise EmbeddingError(
                f"the embeddings server {quoted(self.name)} returned vectors of {self.dimensions} and then "
                f"{len(vector)} dimensions: one model must serve every call; check --embedding-model and that "
                "nothing else answers at --embedding-base-url"
            )
        return [float(x) for x in vector]


def _reported_usage(details: Any) -> Usage | None:
    if not details:
        return None
    tokens = details.get("input_token_count")
    return None if tokens is None else Usage(tokens, 0)


def lexical_embedder() -> Embedder:
    return Embedder(LexicalEmbeddingClient(), LEXICAL_LABEL, "lexical", semantic=False)


def build_embedder(model: str | None, *, base_url: str | None, api_key: str | None, timeout: float) -> Embedder:
    """The lexical embedder without a model; else Agent Framework's OpenAIEmbeddingClient."""
    if model is None:
        return lexical_embedder()
    from urllib.parse import urlsplit

    from agent_framework.openai import OpenAIEmbeddingClient
    from openai import AsyncOpenAI

    from workbench.runtime.models import LOCAL_PLACEHOLDER_KEY

    sdk = AsyncOpenAI(api_key=api_key or LOCAL_PLACEHOLDER_KEY, base_url=base_url, timeout=timeout, max_retries=1)
    host = urlsplit(base_url).netloc if base_url else "api.openai.com"
    return Embedder(OpenAIEmbeddingClient(model=model, async_client=sdk), f"{model} @ {host}", model, semantic=True)


def build_azure_embedder(deployment: str, chat: ModelConfig) -> Embedder:
    """An Azure OpenAI embedding deployment through OpenAIEmbeddingClient, on the chat model's resource
    and sign-in (its own DefaultAzureCredential when there is no key)."""
    from workbench.runtime.azure import azure_client_options, azure_embedding_client, azure_label, azure_sign_in

    assert chat.azure is not None
    client = azure_embedding_client(chat, deployment, azure_client_options(chat))
    label = azure_label(deployment, chat.azure)
    return Embedder(client, label, deployment, semantic=True, sign_in=azure_sign_in(chat))


def logged_embedder(embedder: Embedder, calls: CallLog) -> Embedder:
    """`embedder`, its requests recorded in `calls` like model calls (purpose "embeddings"), so F2 and
    the drift lab's cost table show what was sent to the embeddings server and what it reported."""

    def record(texts: Sequence[str], usage: Usage | None) -> None:
        call = calls.start("embeddings", embedder.label, "", (("input", t) for t in texts))
        calls.settle(call, usage)

    embedder.observer = record
    return embedder
