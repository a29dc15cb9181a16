"""A real HTTP server on loopback that speaks OpenAI's /v1/chat/completions, for tests.

By default it answers like the built-in scripted model and reports usage, so the live client
path (HTTP, SSE streaming, structured output, usage) is exercised for real. Tests can queue
canned replies or HTTP errors, add a delay, and read every request it received.
"""

from __future__ import annotations

import json
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from typing import Any

from tests.support.loopback_http import LoopbackHTTPServer
from workbench.memory import parse_declarations
from workbench.runtime.scripted import scripted_reply, split_block


@dataclass
class Canned:
    """One scripted answer: a reply text, or an HTTP error status with a body.

    Misbehaviours, for fault tests: `raw` is sent verbatim as a 200 body (then the connection
    closes), with `declared_length` as its Content-Length when set (a larger one is a body cut off
    mid-way); `events` are sent as SSE `data:` lines verbatim, then the connection closes with no
    `[DONE]` unless listed; `usage` replaces the reported usage object as given; `trickle` sends
    the body one byte at a time with this many seconds between bytes; `ramble` is a model that
    loops: it generates a word every `ramble` seconds until the request's bound (`max_tokens`, or
    `max_completion_tokens` when `reads_max_completion_tokens`) or, with none, its context is full,
    then stops with finish_reason=length, as llama.cpp-family servers do.

    `tool_calls` (function name, arguments) make the reply a function-calling one: no text,
    finish_reason "tool_calls", streamed or not."""

    text: str | None = None
    status: int = 200
    body: dict[str, Any] | None = None
    delay: float = 0.0
    finish_reason: str | None = "stop"
    report_usage: bool | None = None
    headers: dict[str, str] = field(default_factory=dict)
    raw: bytes | None = None
    content_type: str = "application/json"
    declared_length: int | None = None
    events: list[str] | None = None
    usage: Any = None
    trickle: float = 0.0
    ramble: float = 0.0
    tool_calls: list[tuple[str, dict[str, Any]]] | None = None

    def tool_call_list(self) -> list[dict[str, Any]]:
        return [
            {"id": f"call_{i}", "type": "function", "function": {"name": name, "arguments": json.dumps(arguments)}}
            for i, (name, arguments) in enumerate(self.tool_calls or [], 1)
        ]


Responder = Callable[[dict[str, Any]], "Canned | None"]


@dataclass
class ServerState:
    """`responder`, when set, sees each request body first and may answer it (None: fall through
    to the queue, then to the scripted answer)."""

    requests: list[dict[str, Any]] = field(default_factory=list)
    queue: deque[Canned] = field(default_factory=deque)
    responder: Responder | None = None
    report_usage: bool = True
    delay: float = 0.0
    reads_max_completion_tokens: bool = False  # llama-cpp-python ignores it; OpenAI reads only it
    lock: threading.Lock = field(default_factory=threading.Lock)


# The context a rambling model fills when no request bounds it (what SmolLM2 did: 3,500-3,600 tokens).
RAMBLE_CONTEXT_TOKENS = 3_600


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(part.get("text", "") for part in content if isinstance(part, dict))
    return ""


class _Handler(BaseHTTPRequestHandler):
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:  # silence the default stderr log
        pass

    trickle = 0.0

    def do_POST(self) -> None:
        self.trickle = 0.0
        if not self.path.rstrip("/").endswith("/chat/completions"):
            self._send_json(404, {"error": {"message": f"no route {self.path}", "type": "not_found"}})
            return
        body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", "0"))) or b"{}")
        state = self.server.state
        with state.lock:
            state.requests.append(body)
            canned = state.responder(body) if state.responder else None
            if canned is None and state.queue:
                canned = state.queue.popleft()
        delay = canned.delay if canned and canned.delay else state.delay
        if delay:
            time.sleep(delay)
        if canned is not None and canned.status != 200:
            self._send_json(canned.status, canned.body or {"error": {"message": "canned failure"}}, canned.headers)
            return
        if canned is not None and canned.raw is not None:
            self._send_raw(canned)
            return
        if canned is not None and canned.events is not None:
            self._send_events(canned)
            return
        calls = canned.tool_call_list() if canned is not None and canned.tool_calls else []
        text = "" if calls else canned.text if canned and canned.text is not None else self.scripted(body)
        finish = "tool_calls" if calls else canned.finish_reason if canned else "stop"
        if canned is not None and canned.ramble:
            name = "max_completion_tokens" if state.reads_max_completion_tokens else "max_tokens"
            words = body.get(name) or RAMBLE_CONTEXT_TOKENS
            time.sleep(words * canned.ramble)  # generating, one word a token
            text, finish = "la " * words, "length"
        prompt_chars = sum(len(_text(m.get("content"))) for m in body.get("messages", []))
        completion = len(text) // 3 if canned is not None and canned.ramble else max(1, len(text) // 4)
        usage = {
            "prompt_tokens": max(1, prompt_chars // 4),
            "completion_tokens": completion,
            "total_tokens": max(1, prompt_chars // 4) + completion,
        }
        report_usage = state.report_usage if canned is None or canned.report_usage is None else canned.report_usage
        if canned is not None and canned.usage is not None:
            usage, report_usage = canned.usage, True
        self.trickle = canned.trickle if canned else 0.0
        if body.get("stream"):
            self._stream(body, text, usage if report_usage else None, finish, calls)
        else:
            payload = {
                "id": f"chatcmpl-{len(state.requests)}",
                "object": "chat.completion",
                "created": 0,
                "model": body.get("model", "loopback"),
                "choices": [
                    {
                        "index": 0,
                        "message": {
                            "role": "assistant",
                            "content": text or None,
                            **({"tool_calls": calls} if calls else {}),
                        },
                        "finish_reason": finish,
                    }
                ],
            }
            if report_usage:
                payload["usage"] = usage
            self._send_json(200, payload)

    @staticmethod
    def scripted(body: dict[str, Any]) -> str:
        messages = body.get("messages", [])
        instructions = "\n".join(_text(m.get("content")) for m in messages if m.get("role") in ("system", "developer"))
        texts = [(m["role"], _text(m.get("content"))) for m in messages if m.get("role") not in ("system", "developer")]
        structured = (body.get("response_format") or {}).get("type") in ("json_schema", "json_object")
        return scripted_reply(instructions, texts, structured=structured)

    def _write(self, data: bytes) -> None:
        try:
            if not self.trickle:
                self.wfile.write(data)
                self.wfile.flush()
                return
            for i in range(len(data)):
                self.wfile.write(data[i : i + 1])
                self.wfile.flush()
                time.sleep(self.trickle)
        except (BrokenPipeError, ConnectionResetError):  # the client gave up (a timeout under test)
            self.close_connection = True

    def _send_raw(self, canned: Canned) -> None:
        assert canned.raw is not None
        self.send_response(200)
        self.send_header("Content-Type", canned.content_type)
        if canned.declared_length is not None:
            self.send_header("Content-Length", str(canned.declared_length))
        self.end_headers()
        self.trickle = canned.trickle
        self._write(canned.raw)
        self.close_connection = True

    def _send_events(self, canned: Canned) -> None:
        assert canned.events is not None
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.end_headers()
        self.trickle = canned.trickle
        for data in canned.events:
            self._write(f"data: {data}\n\n".encode())
        self.close_connection = True

    def _send_json(self, status: int, payload: dict[str, Any], headers: dict[str, str] | None = None) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self._write(data)

    def _stream(
        self,
        body: dict[str, Any],
        text: str,
        usage: dict[str, int] | None,
        finish: str | None,
        calls: list[dict[str, Any]] | None = None,
    ) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.end_headers()
        for opening in self.stream_opening():
            self._event(opening)
        base = {"id": "chatcmpl-stream", "object": "chat.completion.chunk", "created": 0, "model": body.get("model")}
        pieces = [text[i : i + 16] for i in range(0, len(text), 16)] or [""]
        for i, piece in enumerate(pieces):
            delta = {"content": piece, **({"role": "assistant"} if i == 0 else {})}
            self._event({**base, "choices": [{"index": 0, "delta": delta, "finish_reason": None}]})
        if calls:
            calls_delta: dict[str, Any] = {"tool_calls": [{"index": i, **call} for i, call in enumerate(calls)]}
            self._event({**base, "choices": [{"index": 0, "delta": calls_delta, "finish_reason": None}]})
        if finish is None:  # a server that crashed mid-answer: EOF, no finish_reason, no [DONE]
            self.close_connection = True
            return
        self._event({**base, "choices": [{"index": 0, "delta": {}, "finish_reason": finish}]})
        if usage is not None and (body.get("stream_options") or {}).get("include_usage"):
            self._event({**base, "choices": [], "usage": usage})
        self._write(b"data: [DONE]\n\n")

    def stream_opening(self) -> list[dict[str, Any]]:
        """Events a provider sends before the first choice (none for OpenAI)."""
        return []

    def _event(self, payload: dict[str, Any]) -> None:
        self._write(f"data: {json.dumps(payload)}\n\n".encode())


class _Server(LoopbackHTTPServer):
    def __init__(self, state: ServerState, handler: type[_Handler]) -> None:
        super().__init__(("127.0.0.1", 0), handler)
        self.state = state


class LoopbackOpenAI:
    """Start with `with LoopbackOpenAI() as server:`; `server.base_url` ends in /v1."""

    handler: type[_Handler] = _Handler

    def __init__(self) -> None:
        self.state = ServerState()
        self._server = _Server(self.state, self.handler)
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_port}/v1"

    @property
    def requests(self) -> list[dict[str, Any]]:
        return self.state.requests

    def enqueue(self, *canned: Canned) -> None:
        self.state.queue.extend(canned)

    def __enter__(self) -> LoopbackOpenAI:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()


def memory_file_writer(name: Callable[[str, str], str] = lambda key, value: f"{key}.md") -> Responder:
    """A scripted model that writes memory files: when a request offers `file_memory_write` and ends
    with the user's message, it writes one file per `key=value` that message declares (its name from
    `name(key, value)`, content `key=value`, description "the user's <key>"); otherwise it falls
    through to the scripted answer (after the tool results, for instance)."""

    def respond(body: dict[str, Any]) -> Canned | None:
        offered = {t.get("function", {}).get("name") for t in body.get("tools") or []}
        messages = body.get("messages", [])
        if "file_memory_write" not in offered or not messages or messages[-1].get("role") != "user":
            return None
        said = split_block(_text(messages[-1].get("content")))[1]
        writes = [
            ("file_memory_write", {"file_name": name(k, v), "content": f"{k}={v}", "description": f"the user's {k}"})
            for k, v in parse_declarations(said).items()
            if v
        ]
        return Canned(tool_calls=writes) if writes else None

    return respond
