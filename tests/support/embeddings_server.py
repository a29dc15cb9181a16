"""A real HTTP server on loopback that speaks OpenAI's /v1/embeddings, for tests.

It answers with the built-in lexical embedder's vectors, or misbehaves as real servers do: one
vector per token (llama-cpp-python serving a chat model), sizes that change between calls, or too
few vectors."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from typing import Any

from tests.support.loopback_http import LoopbackHTTPServer
from workbench.recall.embedders import LexicalEmbeddingClient


@dataclass
class EmbeddingsState:
    mode: str = "ok"  # ok | per_token | varying | too_few
    requests: list[dict[str, Any]] = field(default_factory=list)
    dimensions: int = 64


class _Handler(BaseHTTPRequestHandler):
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_POST(self) -> None:
        if not self.path.rstrip("/").endswith("/embeddings"):
            self._send(404, {"error": {"message": f"no route {self.path}"}})
            return
        body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", "0"))) or b"{}")
        state = self.server.state
        state.requests.append(body)
        texts = body["input"] if isinstance(body["input"], list) else [body["input"]]
        embedder = LexicalEmbeddingClient(state.dimensions + (len(state.requests) if state.mode == "varying" else 0))
        vectors: list[Any] = [embedder.embed(t) for t in texts]
        if state.mode == "per_token":
            vectors = [[embedder.embed(word) for word in t.split()] for t in texts]
        if state.mode == "too_few":
            vectors = vectors[:-1]
        data = [{"object": "embedding", "index": i, "embedding": v} for i, v in enumerate(vectors)]
        tokens = sum(len(t.split()) for t in texts)
        self._send(
            200,
            {
                "object": "list",
                "data": data,
                "model": body["model"],
                "usage": {"prompt_tokens": tokens, "total_tokens": tokens},
            },
        )

    def _send(self, status: int, payload: dict[str, Any]) -> None:
        raw = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(raw)))
        self.end_headers()
        self.wfile.write(raw)


class _Server(LoopbackHTTPServer):
    state: EmbeddingsState


@contextmanager
def embeddings_server(mode: str = "ok") -> Iterator[tuple[str, EmbeddingsState]]:
    """The server's /v1 base URL and its state, for the duration of the block."""
    server = _Server(("127.0.0.1", 0), _Handler)
    server.state = EmbeddingsState(mode)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1", server.state
    finally:
        server.shutdown()
        server.server_close()
