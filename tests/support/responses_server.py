"""A real HTTP server on loopback that speaks OpenAI's Responses API and keeps what it is sent, for tests.

It keeps each response it creates (unless the request says `store: false`, as OpenAI does), continues a
conversation from `previous_response_id` or `conversation` (refusing an id it does not hold, as OpenAI
does), answers like the built-in scripted model over the whole conversation it holds, and reports usage.
Streamed (`response.created`, text deltas, `response.completed`) or not, as the request asks; with
`fail_streams` each stream fails after its first text delta (an `error` event, as OpenAI sends one).

What it keeps can be read (`GET /v1/responses/{id}`, `GET /v1/conversations/{id}`) and deleted
(`DELETE` on both), answered as OpenAI answers: the deleted object, then 404 for it. `deletion` makes it a
service that does not offer deletion (405), or refuses it to this credential (403). Every request is
recorded with its method, path and body; the key it was sent is checked and never kept."""

from __future__ import annotations

import itertools
import json
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from typing import Any, Literal

from tests.support.loopback_http import LoopbackHTTPServer
from workbench.runtime.scripted import scripted_reply

Deletion = Literal["offered", "not offered", "refused"]
KEY = "sk-loopback-responses-0000"  # the credential the user's client sends; any other is refused with 401


@dataclass
class Stored:
    """One response the service keeps: what it was sent (its input items and instructions) and its body."""

    body: dict[str, Any]
    input: list[dict[str, Any]]
    instructions: str


@dataclass
class ServiceState:
    responses: dict[str, Stored] = field(default_factory=dict)
    conversations: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    requests: list[tuple[str, str, dict[str, Any] | None]] = field(default_factory=list)
    deletion: Deletion = "offered"
    # Set when a response is kept; with `hold` set to an unset event, its answer waits for the event (a turn
    # whose response the service already keeps, still running).
    created: threading.Event = field(default_factory=threading.Event)
    hold: threading.Event | None = None
    # Set: a streamed answer fails after its first text delta, with the `error` event OpenAI sends when a
    # response fails mid-stream, and ends there (the client raises while reading it).
    fail_streams: bool = False
    ids: itertools.count[int] = field(default_factory=lambda: itertools.count(1))
    lock: threading.Lock = field(default_factory=threading.Lock)

    def new_id(self, prefix: str) -> str:
        return f"{prefix}_{next(self.ids):04d}{'a1b2c3d4e5f6' * 2}"

    def texts(self) -> list[str]:
        """Every text the service keeps: what it was sent and what it answered."""
        found: list[str] = []
        for stored in self.responses.values():
            found += [stored.instructions, json.dumps(stored.input), json.dumps(stored.body)]
        found += [json.dumps(items) for items in self.conversations.values()]
        return found


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(str(part.get("text", "")) for part in content if isinstance(part, dict))
    return ""


def _items(body: dict[str, Any]) -> list[dict[str, Any]]:
    given = body.get("input")
    if isinstance(given, str):
        return [{"type": "message", "role": "user", "content": given}]
    return [item for item in given or [] if isinstance(item, dict)]


def _said(items: list[dict[str, Any]]) -> list[tuple[str, str]]:
    return [
        (str(item.get("role")), _text(item.get("content")))
        for item in items
        if item.get("type", "message") == "message" and item.get("role") not in ("system", "developer")
    ]


class _Handler(BaseHTTPRequestHandler):
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:
        pass

    # -- routes ---------------------------------------------------------------------------------
    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", "0"))) or b"{}")
        if not self._authorised("POST", body):
            return
        path = self.path.rstrip("/")
        if path.endswith("/v1/responses"):
            self._create(body)
        elif path.endswith("/v1/conversations"):
            with self.server.state.lock:
                conversation = self.server.state.new_id("conv")
                self.server.state.conversations[conversation] = list(body.get("items") or [])
            self._json(200, self._conversation(conversation))
        else:
            self._json(404, {"error": {"message": f"no route {self.path}", "type": "invalid_request_error"}})

    def do_GET(self) -> None:
        if not self._authorised("GET", None):
            return
        kind, name = self._target()
        state = self.server.state
        with state.lock:
            if kind == "responses" and name in state.responses:
                self._json(200, state.responses[name].body)
                return
            if kind == "conversations" and name in state.conversations:
                self._json(200, self._conversation(name))
                return
        self._missing(kind, name)

    def do_DELETE(self) -> None:
        if not self._authorised("DELETE", None):
            return
        kind, name = self._target()
        state = self.server.state
        if state.deletion == "not offered":
            self._json(405, {"error": {"message": "Method Not Allowed", "type": "invalid_request_error"}})
            return
        if state.deletion == "refused":
            message = "This project's key may not delete stored responses."
            self._json(403, {"error": {"message": message, "type": "permission_error"}})
            return
        with state.lock:
            found = state.responses.pop(name, None) if kind == "responses" else None
            items = state.conversations.pop(name, None) if kind == "conversations" else None
        if found is None and items is None:
            self._missing(kind, name)
            return
        obj = "response" if kind == "responses" else "conversation"
        self._json(200, {"id": name, "object": f"{obj}.deleted", "deleted": True})

    # -- helpers --------------------------------------------------------------------------------
    def _authorised(self, method: str, body: dict[str, Any] | None) -> bool:
        self.server.state.requests.append((method, self.path, body))
        if self.headers.get("Authorization") == f"Bearer {KEY}":
            return True
        self._json(401, {"error": {"message": "Incorrect API key provided.", "type": "invalid_request_error"}})
        return False

    def _target(self) -> tuple[str, str]:
        parts = self.path.split("?")[0].rstrip("/").split("/")
        return (parts[-2], parts[-1]) if len(parts) >= 2 else ("", "")

    def _missing(self, kind: str, name: str) -> None:
        what = "Response" if kind == "responses" else "Conversation"
        self._json(404, {"error": {"message": f"{what} with id '{name}' not found.", "type": "invalid_request_error"}})

    def _conversation(self, name: str) -> dict[str, Any]:
        return {"id": name, "object": "conversation", "created_at": 0, "metadata": {}}

    def _create(self, body: dict[str, Any]) -> None:
        state = self.server.state
        items = _items(body)
        instructions = str(body.get("instructions") or "")
        previous = body.get("previous_response_id")
        conversation = body.get("conversation")
        conversation = conversation.get("id") if isinstance(conversation, dict) else conversation
        with state.lock:
            if previous and previous not in state.responses:
                message = f"Previous response with id '{previous}' not found."
                self._json(400, {"error": {"message": message, "type": "invalid_request_error"}})
                return
            if conversation and conversation not in state.conversations:
                self._missing("conversations", str(conversation))
                return
            earlier: list[tuple[str, str]] = []
            chain, at = [], previous
            while at:  # the conversation the service holds, oldest first
                chain.append(state.responses[at])
                at = state.responses[at].body.get("previous_response_id")
            for stored in reversed(chain):
                earlier += [*_said(stored.input), ("assistant", _output_text(stored.body))]
            if conversation:
                earlier += _said(state.conversations[conversation])
            said = [*earlier, *_said(items)]
            system = "\n".join(
                [instructions, *(_text(i.get("content")) for i in items if i.get("role") in ("system", "developer"))]
            )
            text = scripted_reply(system, said, structured=False)
            shape = (body.get("text") or {}).get("format") or {}
            if shape.get("type") == "json_schema":  # as a model that follows the response format asked for
                text = json.dumps(_instance(shape.get("schema") or {}, text))
            response_id = state.new_id("resp")
            prompt = max(1, sum(len(t) for _, t in said) // 4)
            answer = max(1, len(text) // 4)
            response = {
                "id": response_id,
                "object": "response",
                "created_at": time.time(),
                "status": "completed",
                "model": body.get("model", "loopback"),
                "output": [
                    {
                        "type": "message",
                        "id": f"msg_{response_id}",
                        "role": "assistant",
                        "status": "completed",
                        "content": [{"type": "output_text", "text": text, "annotations": []}],
                    }
                ],
                "parallel_tool_calls": True,
                "tool_choice": "auto",
                "tools": [],
                "previous_response_id": previous,
                "conversation": {"id": conversation} if conversation else None,
                "instructions": instructions or None,
                "store": body.get("store") is not False,
                "usage": {
                    "input_tokens": prompt,
                    "input_tokens_details": {"cached_tokens": 0},
                    "output_tokens": answer,
                    "output_tokens_details": {"reasoning_tokens": 0},
                    "total_tokens": prompt + answer,
                },
            }
            if body.get("store") is not False:
                state.responses[response_id] = Stored(response, items, instructions)
            if conversation:
                state.conversations[conversation] += [*items, *response["output"]]
        state.created.set()
        if state.hold is not None:
            state.hold.wait()
        if body.get("stream"):
            self._stream(response, text)
        else:
            self._json(200, response)

    def _stream(self, response: dict[str, Any], text: str) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.end_headers()
        sequence = itertools.count()
        created = {**response, "status": "in_progress", "output": [], "usage": None}
        self._event("response.created", {"response": created, "sequence_number": next(sequence)})
        # The events OpenAI sends around the text, in its order: the openai SDK's stream helper (used for a
        # request with a response format, as a workflow's reviewer with a pydantic model) refuses a delta
        # that comes before its output item and content part.
        output = response["output"][0]
        item = output["id"]
        where = {"item_id": item, "output_index": 0, "content_index": 0}
        opened = {**output, "status": "in_progress", "content": []}
        self._event(
            "response.output_item.added", {"output_index": 0, "item": opened, "sequence_number": next(sequence)}
        )
        part = {"type": "output_text", "text": "", "annotations": []}
        self._event("response.content_part.added", {**where, "part": part, "sequence_number": next(sequence)})
        for i in range(0, len(text), 16):
            delta = {**where, "delta": text[i : i + 16], "logprobs": [], "sequence_number": next(sequence)}
            self._event("response.output_text.delta", delta)
            if self.server.state.fail_streams:
                failed = {"code": "server_error", "message": "The server had an error while processing your request."}
                self._event("error", {**failed, "param": None, "sequence_number": next(sequence)})
                return
        done = {**where, "text": text, "logprobs": [], "sequence_number": next(sequence)}
        self._event("response.output_text.done", done)
        whole = {**part, "text": text}
        self._event("response.content_part.done", {**where, "part": whole, "sequence_number": next(sequence)})
        self._event("response.output_item.done", {"output_index": 0, "item": output, "sequence_number": next(sequence)})
        self._event("response.completed", {"response": response, "sequence_number": next(sequence)})

    def _event(self, kind: str, payload: dict[str, Any]) -> None:
        data = json.dumps({"type": kind, **payload})
        self.wfile.write(f"event: {kind}\ndata: {data}\n\n".encode())
        self.wfile.flush()

    def _json(self, status: int, payload: dict[str, Any]) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


def _instance(schema: dict[str, Any], text: str) -> Any:
    """A value of `schema` (a JSON Schema as the Responses API's `json_schema` format carries it): each
    string the scripted reply, each number 1, each object with every property, each array empty."""
    if "enum" in schema:
        return schema["enum"][0]
    kind = schema.get("type")
    kind = next((k for k in kind if k != "null"), "null") if isinstance(kind, list) else kind
    if kind == "object" or "properties" in schema:
        return {name: _instance(sub, text) for name, sub in (schema.get("properties") or {}).items()}
    return {"string": text, "integer": 1, "number": 1.0, "boolean": True, "array": []}.get(str(kind))


def _output_text(body: dict[str, Any]) -> str:
    return "".join(part.get("text", "") for item in body.get("output", []) for part in item.get("content", []) if item)


class _Server(LoopbackHTTPServer):
    daemon_threads = True

    def __init__(self, state: ServiceState) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.state = state


class LoopbackResponses:
    """Start with `with LoopbackResponses() as service:`; `service.base_url` ends in /v1."""

    def __init__(self, deletion: Deletion = "offered") -> None:
        self.state = ServiceState(deletion=deletion)
        self._server = _Server(self.state)
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_port}/v1"

    @property
    def requests(self) -> list[tuple[str, str, dict[str, Any] | None]]:
        return self.state.requests

    def __enter__(self) -> LoopbackResponses:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()
