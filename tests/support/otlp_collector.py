"""A real OTLP/HTTP collector on loopback, for tests: it accepts what the OpenTelemetry exporters post
to /v1/traces, /v1/metrics and /v1/logs, keeps every body, and decodes the spans."""

from __future__ import annotations

import threading
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler

from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

from tests.support.loopback_http import LoopbackHTTPServer


@dataclass(frozen=True)
class ExportedSpan:
    name: str
    service: str
    span_id: bytes
    parent_span_id: bytes


class LoopbackCollector:
    def __init__(self) -> None:
        self.bodies: list[tuple[str, bytes]] = []
        self._lock = threading.Lock()
        collector = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                with collector._lock:
                    collector.bodies.append((self.path, body))
                self.send_response(200)
                self.send_header("Content-Type", "application/x-protobuf")
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, format: str, *args: object) -> None:
                pass

        self._server = LoopbackHTTPServer(("127.0.0.1", 0), Handler)
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def endpoint(self) -> str:
        return f"http://127.0.0.1:{self._server.server_port}"

    def __enter__(self) -> LoopbackCollector:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()

    def received(self) -> bytes:
        """Every byte posted to any path, for a search."""
        with self._lock:
            return b"".join(body for _, body in self.bodies)

    def spans(self) -> list[ExportedSpan]:
        found: list[ExportedSpan] = []
        with self._lock:
            traces = [body for path, body in self.bodies if path == "/v1/traces"]
        for body in traces:
            request = ExportTraceServiceRequest.FromString(body)
            for resource_spans in request.resource_spans:
                attributes = {a.key: a.value.string_value for a in resource_spans.resource.attributes}
                for scope_spans in resource_spans.scope_spans:
                    found.extend(
                        ExportedSpan(s.name, attributes.get("service.name", ""), s.span_id, s.parent_span_id)
                        for s in scope_spans.spans
                    )
        return found
