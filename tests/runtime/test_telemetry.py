"""Turning traces on: `--otel`, `--otel-sensitive` and the standard OTLP variables, end to end through
the framework's exporters to a loopback OTLP/HTTP collector (`workbench qualify` on the built-in
model makes the agent runs and chat calls)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from tests.support.otlp_collector import LoopbackCollector
from workbench.runtime.telemetry import TelemetryError, TelemetrySettings

# Words of the qualify suite's messages, which the writer's requests carry.
SUITE_TEXT = b"SQL Server 2022"


def settings(otel: bool = False, sensitive: bool = False, **environ: str) -> TelemetrySettings:
    return TelemetrySettings.from_options(otel=otel, sensitive=sensitive, environ=environ)


def test_traces_are_off_unless_a_flag_or_an_endpoint_variable_turns_them_on() -> None:
    assert settings() == TelemetrySettings(False)
    assert settings(ENABLE_SENSITIVE_DATA="true", OTEL_EXPORTER_OTLP_PROTOCOL="nonsense") == TelemetrySettings(False)
    assert settings(otel=True) == TelemetrySettings(True, False, "http://localhost:4318", "http/protobuf")
    assert settings(sensitive=True) == TelemetrySettings(True, True, "http://localhost:4318", "http/protobuf")
    assert settings(OTEL_EXPORTER_OTLP_TRACES_ENDPOINT="http://c:4318/v1/traces") == TelemetrySettings(
        True, False, None, "http/protobuf"
    )
    assert settings(otel=True, OTEL_EXPORTER_OTLP_PROTOCOL="grpc") == TelemetrySettings(
        True, False, "http://localhost:4317", None
    )


def test_the_service_is_named_workbench_unless_a_standard_variable_names_it() -> None:
    assert settings(otel=True).service_name == "workbench"
    assert settings(otel=True, OTEL_SERVICE_NAME="desk").service_name is None
    assert settings(otel=True, OTEL_RESOURCE_ATTRIBUTES="team=a,service.name=desk").service_name is None


def test_the_framework_variable_alone_never_turns_sensitive_data_on() -> None:
    assert settings(otel=True, ENABLE_SENSITIVE_DATA="true").sensitive is False


def test_an_unknown_protocol_is_refused_in_words() -> None:
    with pytest.raises(TelemetryError, match=r'OTEL_EXPORTER_OTLP_PROTOCOL must be one of .* not "Pigeon"'):
        settings(otel=True, OTEL_EXPORTER_OTLP_PROTOCOL="Pigeon")


def run_workbench(*args: str, **environ: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OTEL_", "ENABLE_"))} | environ
    return subprocess.run(
        [sys.executable, "-m", "workbench", *args, "qualify"], env=env, capture_output=True, text=True, timeout=120
    )


def test_a_bad_protocol_variable_stops_the_command_with_one_line_and_exit_2() -> None:
    done = run_workbench("--otel", OTEL_EXPORTER_OTLP_PROTOCOL="pigeon")
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [
        'workbench: OTEL_EXPORTER_OTLP_PROTOCOL must be one of http/protobuf, http, grpc, not "pigeon"'
    ]


def test_the_endpoint_variable_exports_the_framework_spans_without_any_message_text() -> None:
    with LoopbackCollector() as collector:
        # ENABLE_SENSITIVE_DATA, left set for another program, must not put text in this one's spans.
        done = run_workbench(OTEL_EXPORTER_OTLP_ENDPOINT=collector.endpoint, ENABLE_SENSITIVE_DATA="true")
    assert done.returncode == 4, done.stderr  # the built-in model qualifies nothing
    spans = collector.spans()
    assert {s.service for s in spans} == {"workbench"}
    assert {"invoke_agent writer"} <= {s.name for s in spans}
    by_id = {s.span_id: s for s in spans}
    chats = [s for s in spans if s.name.startswith("chat ")]
    assert chats and {by_id[s.parent_span_id].name for s in chats} == {"invoke_agent writer"}
    assert SUITE_TEXT not in collector.received()


def test_otel_sensitive_sends_the_messages_too() -> None:
    with LoopbackCollector() as collector:
        done = run_workbench("--otel-sensitive", OTEL_EXPORTER_OTLP_ENDPOINT=collector.endpoint)
    assert done.returncode == 4, done.stderr
    assert collector.spans() and SUITE_TEXT in collector.received()
