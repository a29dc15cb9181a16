"""Traces: the framework's agent-run and chat spans under one workbench span per turn, with the writer
call, each admission, each forget and each recall search; by default no message text, reply or fact
value in any span. Read with the SDK's in-memory exporter, through the framework's own providers."""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator

import pytest
from opentelemetry import trace
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from workbench.recall.config import RecallConfig
from workbench.runtime import CallLog, ModelConfig, WriterKind, build_models
from workbench.runtime.agents import AgentRuntime
from workbench.runtime.telemetry import ENDPOINT_VARIABLES, TelemetrySettings, start_telemetry
from workbench.session.assemble import assemble

# Every value and every word a user typed in these tests: none may reach a span by default.
DATABASE = "Quartzbase-Ultra-9931"
MODULE = "Lanternfish"
CORRECTED = "Obsidian-Ledger-42"
MADE_UP_KEY = "colourscheme"
PROSE = "zeppelin nightly export"
SIX_KEYS = "module=M1; database=D2; environment=E3; version=V4; priority=P5; symptom=S6"
TYPED = (DATABASE, MODULE, CORRECTED, MADE_UP_KEY, PROSE, "M1", "D2", "E3", "V4", "P5", "S6")


@pytest.fixture(scope="module")
def exporter() -> Iterator[InMemorySpanExporter]:
    """The framework's providers, configured once for the test process as `--otel` would, with an
    in-memory exporter in place of OTLP (no endpoint variable is set, so no OTLP exporter is built)."""
    memory = InMemorySpanExporter()
    with pytest.MonkeyPatch.context() as env:
        for name in (*ENDPOINT_VARIABLES, "ENABLE_SENSITIVE_DATA"):
            env.delenv(name, raising=False)
        assert start_telemetry(TelemetrySettings(on=True), exporters=[memory])
    yield memory
    # The provider stays for the process (OpenTelemetry allows one); later tests' spans go nowhere.
    provider = trace.get_tracer_provider()
    assert isinstance(provider, TracerProvider)
    provider.shutdown()
    memory.clear()


@pytest.fixture
def spans(exporter: InMemorySpanExporter) -> Callable[[], list[ReadableSpan]]:
    exporter.clear()

    def finished() -> list[ReadableSpan]:
        provider = trace.get_tracer_provider()
        assert isinstance(provider, TracerProvider)
        provider.force_flush()
        return list(exporter.get_finished_spans())

    return finished


def runtime(*, recall: bool = False, writer: WriterKind = WriterKind.MODEL) -> AgentRuntime:
    calls = CallLog()
    setup = RecallConfig(store="memory").build(calls) if recall else None
    return assemble(build_models(ModelConfig()), writer=writer, calls=calls, recall=setup, recall_on=recall).runtime


def named(found: list[ReadableSpan], name: str) -> list[ReadableSpan]:
    return [s for s in found if s.name == name]


def parent_of(span: ReadableSpan, found: list[ReadableSpan]) -> ReadableSpan | None:
    by_id = {s.context.span_id: s for s in found}
    return by_id.get(span.parent.span_id) if span.parent is not None else None


def ancestors(span: ReadableSpan, found: list[ReadableSpan]) -> list[str]:
    names = []
    while (span := parent_of(span, found)) is not None:  # type: ignore[assignment]
        names.append(span.name)
    return names


def every_string(found: list[ReadableSpan]) -> list[str]:
    """Everything a span exports as text: its name, every attribute (of the span, its events, its
    links and its resource), and its status description."""
    texts: list[str] = []

    def add(attributes: object) -> None:
        for key, value in dict(attributes or {}).items():  # type: ignore[call-overload]
            texts.append(str(key))
            texts.extend(str(v) for v in value) if isinstance(value, tuple | list) else texts.append(str(value))

    for span in found:
        texts.append(span.name)
        texts.append(span.status.description or "")
        add(span.attributes)
        add(span.resource.attributes)
        for event in span.events:
            texts.append(event.name)
            add(event.attributes)
        for link in span.links:
            add(link.attributes)
    return texts


async def test_the_turn_span_parents_the_framework_spans_the_writer_call_and_the_admission(spans) -> None:
    rt = runtime()
    result = await rt.ask("support", f"database={DATABASE}; module={MODULE}. Why does the {PROSE} fail?")
    assert result.ok
    found = spans()

    (turn,) = named(found, "workbench.turn")
    assert turn.parent is None and dict(turn.attributes or {}) == {
        "workbench.agent": "support",
        "workbench.mode": "manual",
        "workbench.turn.chars": len(result.turn.user_text),
        "workbench.turn.number": result.turn.number,
        "workbench.turn.epoch": 0,
        "workbench.reply.chars": len(result.reply),
    }
    assert {s.context.trace_id for s in found} == {turn.context.trace_id}
    (agent_run,) = named(found, "invoke_agent support")
    assert parent_of(agent_run, found) is turn
    chats = [s for s in found if s.name.startswith("chat ")]
    assert len(chats) == 2  # the agent's answer and the writer's extraction
    assert {parent_of(c, found).name for c in chats} == {"invoke_agent support", "invoke_agent writer"}  # type: ignore[union-attr]

    (writer,) = named(found, "workbench.writer")
    assert ancestors(writer, found)[-1] == "workbench.turn"
    assert parent_of(named(found, "invoke_agent writer")[0], found) is writer
    assert writer.attributes["workbench.writer.candidates"] == 2  # type: ignore[index]
    assert writer.attributes["workbench.writer.keys"] == ("database", "module")  # type: ignore[index]

    (admission,) = named(found, "workbench.admission")
    assert "workbench.turn" in ancestors(admission, found)
    assert admission.attributes["workbench.admission.status"] == "applied"  # type: ignore[index]
    assert admission.attributes["workbench.admission.admitted"] == 2  # type: ignore[index]
    assert admission.attributes["workbench.admission.keys"] == ("database", "module")  # type: ignore[index]


async def test_a_refused_batch_reports_its_reason_codes_and_counts(spans) -> None:
    rt = runtime(writer=WriterKind.HOST)
    await rt.ask("logs", SIX_KEYS)
    (admission,) = named(spans(), "workbench.admission")
    attributes = dict(admission.attributes or {})
    assert attributes["workbench.admission.status"] == "rejected"
    assert "too_many_facts" in attributes["workbench.admission.reasons"]  # type: ignore[operator]
    assert attributes["workbench.admission.candidates"] == 6
    assert attributes["workbench.admission.admitted"] == 0


async def test_a_failed_turn_is_an_error_span_that_names_the_failure_type_only(spans) -> None:
    rt = assemble(build_models(ModelConfig(model="m", base_url="http://127.0.0.1:9/v1", max_retries=0))).runtime
    result = await rt.ask("support", f"module={MODULE}")
    assert not result.ok
    found = spans()
    (turn,) = named(found, "workbench.turn")
    assert turn.status.status_code is trace.StatusCode.ERROR and not turn.status.description
    assert turn.attributes["error.type"]  # type: ignore[index]
    (admission,) = named(found, "workbench.admission")
    assert admission.attributes["workbench.admission.status"] == "abandoned"  # type: ignore[index]
    assert not [t for t in every_string(found) if MODULE in t]


async def test_a_forget_span_names_the_key_and_counts_per_holder_never_the_value(spans) -> None:
    rt = runtime(recall=True)
    await rt.ask("support", f"database={DATABASE}")
    spans()
    report = await rt.forget("database")
    (forget,) = named(spans(), "workbench.forget")
    attributes = dict(forget.attributes or {})
    assert attributes["workbench.forget.keys"] == ("database",)
    assert attributes["workbench.forget.everything"] is False
    assert attributes["workbench.forget.reached"] == (
        "agent sessions",
        "call log",
        "recall store",
        "transcript",
        "turns in flight",
        "input undo",
    )
    assert {k: v for k, v in attributes.items() if k.startswith("workbench.forget.removed.")} == {
        "workbench.forget.removed.agent_sessions": report.removed["agent sessions"],
        "workbench.forget.removed.call_log": report.removed["call log"],
        "workbench.forget.removed.recall_store": report.removed["recall store"],
        "workbench.forget.removed.transcript": 0,
        "workbench.forget.removed.turns_in_flight": 0,
        "workbench.forget.removed.input_undo": 0,
    }
    assert report.removed["recall store"] == 2  # the message and the reply that quoted it
    assert attributes["workbench.forget.not_reached"] == ()


async def test_a_recall_search_reports_how_many_it_found_and_the_nearest_distance(spans) -> None:
    rt = runtime(recall=True, writer=WriterKind.HOST)
    await rt.ask("support", f"module={MODULE}; the {PROSE} fails")
    await rt.ask("logs", f"where are the {PROSE} logs?")
    searches = named(spans(), "workbench.recall.search")
    assert [s.attributes["workbench.agent"] for s in searches] == ["support", "logs"]  # type: ignore[index]
    first, second = (dict(s.attributes or {}) for s in searches)
    assert first["workbench.recall.count"] == 0 and "workbench.recall.top_distance" not in first
    assert second["workbench.recall.count"] == 2
    nearest = min(r.distance for r in rt.recalled("logs"))
    assert second["workbench.recall.top_distance"] == pytest.approx(nearest)
    found = spans()
    assert "workbench.turn" in ancestors(named(found, "workbench.recall.search")[1], found)


async def test_no_message_text_reply_or_fact_value_is_in_any_span_by_default(spans) -> None:
    rt = runtime(recall=True)
    turns = [
        ("support", f"database={DATABASE}; module={MODULE}. Why does the {PROSE} fail?"),
        ("logs", f"database={CORRECTED}"),  # a correction: the old value is in the replaced event
        ("support", f"{MADE_UP_KEY}=teal"),  # a key that is not allowed, typed by the user
        ("logs", SIX_KEYS),  # a refused batch
        ("support", f"what about the {PROSE}?"),  # recalls the earlier messages
    ]
    replies = [(await rt.ask(agent, text)).reply for agent, text in turns]
    await rt.forget("database")
    await rt.forget(None)
    found = spans()
    assert {"workbench.turn", "workbench.writer", "workbench.admission", "workbench.forget"} <= {s.name for s in found}
    assert named(found, "workbench.recall.search") and named(found, "invoke_agent support")

    texts = every_string(found)
    leaks = {typed for typed in TYPED if any(typed in t for t in texts)}
    leaks |= {reply[:40] for reply in replies if any(reply[:40] in t for t in texts)}
    assert leaks == set()


async def test_with_sensitive_data_on_the_spans_carry_the_text(spans, caplog: pytest.LogCaptureFixture) -> None:
    """The framework's switch (what --otel-sensitive turns on) governs the workbench's spans too."""
    from agent_framework.observability import OBSERVABILITY_SETTINGS

    OBSERVABILITY_SETTINGS.enable_sensitive_data = True
    try:
        rt = runtime()
        await rt.ask("support", f"database={DATABASE}; why does the {PROSE} fail?")
        refused = await rt.ask("logs", "half a pair: \ud800!")
    finally:
        OBSERVABILITY_SETTINGS.enable_sensitive_data = False
    assert not refused.ok
    found = spans()
    turn, unencodable = named(found, "workbench.turn")
    assert PROSE in turn.attributes["workbench.turn.text"]  # type: ignore[index, operator]
    assert unencodable.attributes["workbench.turn.text"] == "half a pair: ?!"  # type: ignore[index]
    with caplog.at_level(logging.ERROR):
        encode_spans(found).SerializeToString()  # as the OTLP exporter sends them; it logs what it drops
    assert caplog.records == []
    admission = named(found, "workbench.admission")[0]
    assert admission.attributes["workbench.admission.facts"] == (f"database={DATABASE}",)  # type: ignore[index]
    (agent_run,) = named(found, "invoke_agent support")
    assert any(PROSE in t for t in every_string([agent_run]))
