"""Turning traces on: `--otel`, `--otel-sensitive`, or the standard `OTEL_EXPORTER_OTLP_*` variables.

The framework's `configure_otel_providers` does the work: it reads the standard variables, builds
the OTLP exporters and the tracer, meter and logger providers, and owns the sensitive-data switch
that both its spans and the workbench's (`workbench.runtime.tracing`) obey. This module decides
only whether tracing is on, which of the two OTLP protocols the `otel` extra ships is used when none
is named, and that sensitive data is on only when the user asks for it with `--otel-sensitive`.

Light to import (the CLI reads it at every start): the framework and the OpenTelemetry SDK and
exporters are imported only by `start_telemetry`, when tracing is on.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from workbench.memory.shown import quoted
from workbench.text import clip

if TYPE_CHECKING:
    from opentelemetry.sdk.trace.export import SpanExporter

# Either one, set to anything, turns tracing on without --otel.
ENDPOINT_VARIABLES = ("OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")
PROTOCOL_VARIABLE = "OTEL_EXPORTER_OTLP_PROTOCOL"
# The OTLP specification's default protocol and its default endpoint; the framework's own default is
# gRPC, whose exporter (grpcio) the `otel` extra does not bring.
DEFAULT_PROTOCOL = "http/protobuf"
PROTOCOLS = {"http/protobuf": "http/protobuf", "http": "http/protobuf", "grpc": "grpc"}  # what the framework reads
DEFAULT_ENDPOINTS = {"http/protobuf": "http://localhost:4318", "grpc": "http://localhost:4317"}
SERVICE_NAME = "workbench"


class TelemetryError(Exception):
    """Tracing was asked for and cannot start; the message says what to install or set."""


@dataclass(frozen=True)
class TelemetrySettings:
    """Whether traces are exported, where to (None: the standard variables say), in which protocol,
    and whether spans may carry text and values."""

    on: bool
    sensitive: bool = False
    endpoint: str | None = None
    protocol: str | None = None
    service_name: str | None = SERVICE_NAME  # None: OTEL_SERVICE_NAME or OTEL_RESOURCE_ATTRIBUTES names it

    @classmethod
    def from_options(cls, *, otel: bool, sensitive: bool, environ: Mapping[str, str]) -> TelemetrySettings:
        """`--otel-sensitive` implies `--otel`; an endpoint variable alone turns tracing on. Sensitive
        data is on only with the flag: the framework's ENABLE_SENSITIVE_DATA, left set for another
        program, does not send this one's facts to a collector."""
        from_environment = any(environ.get(name, "").strip() for name in ENDPOINT_VARIABLES)
        on = otel or sensitive or from_environment
        if not on:
            return cls(False)
        typed = environ.get(PROTOCOL_VARIABLE, "").strip()
        named = typed.lower()
        if named and named not in PROTOCOLS:
            allowed = ", ".join(PROTOCOLS)
            raise TelemetryError(f"{PROTOCOL_VARIABLE} must be one of {allowed}, not {quoted(clip(typed, 60))}")
        protocol = None if named else DEFAULT_PROTOCOL  # None: the framework reads the variable itself
        endpoint = None if from_environment else DEFAULT_ENDPOINTS[PROTOCOLS[named or DEFAULT_PROTOCOL]]
        named_service = environ.get("OTEL_SERVICE_NAME", "").strip() or "service.name=" in environ.get(
            "OTEL_RESOURCE_ATTRIBUTES", ""
        )
        return cls(on, sensitive, endpoint, protocol, None if named_service else SERVICE_NAME)


def start_telemetry(settings: TelemetrySettings, *, exporters: Sequence[SpanExporter] = ()) -> bool:
    """Configure the framework's OpenTelemetry providers once for this process, with its OTLP exporters
    and any `exporters` given. Returns whether tracing is on. TelemetryError when an exporter cannot be
    built (its package is missing, a variable holds a bad value)."""
    if not settings.on:
        return False
    from agent_framework.observability import configure_otel_providers

    try:
        configure_otel_providers(
            service_name=settings.service_name,
            otlp_endpoint=settings.endpoint,
            otlp_protocol=settings.protocol,
            enable_sensitive_data=settings.sensitive,
            exporters=list(exporters) or None,
        )
    except ImportError as exc:
        raise TelemetryError(
            f"traces cannot start: {exc.msg} (pip install 'agent-memory-workbench[otel]' brings the SDK and "
            "the OTLP/HTTP exporter)"
        ) from exc
    except ValueError as exc:
        raise TelemetryError(f"traces cannot start: {exc}") from exc
    return True
