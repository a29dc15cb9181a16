"""Writer output formats against loopback servers that accept or refuse them."""

import json

import pytest

from tests.live.helpers import is_writer, live_runtime, response_format_type, writer_format_of
from tests.support.openai_server import Canned
from workbench.memory import EventKind, ReasonCode
from workbench.runtime.config import ModelConfig, WriterFormat
from workbench.runtime.writer import MalformedOutput, parse_extraction

GOOD = json.dumps({"facts": [{"key": "module", "value": "Billing", "evidence": "module=Billing"}]})


def writer_requests(server):
    return [r for r in server.requests if is_writer(r)]


def refuse(formats, status=500):
    def responder(body):
        if is_writer(body) and writer_format_of(body) in formats:
            return Canned(
                status=status,
                body={"error": {"message": f"response_format {writer_format_of(body)} is not supported"}},
            )
        return None

    return responder


def test_default_formats():
    assert ModelConfig().effective_writer_format is WriterFormat.JSON_SCHEMA
    assert ModelConfig(model="gpt-4o-mini", api_key="k").effective_writer_format is WriterFormat.JSON_SCHEMA
    assert ModelConfig(model="llama3.2", base_url="http://h/v1").effective_writer_format is WriterFormat.AUTO
    assert (
        ModelConfig(model="x", base_url="http://h/v1", writer_format=WriterFormat.PROMPT).effective_writer_format
        is WriterFormat.PROMPT
    )


async def test_a_server_that_accepts_json_schema(loopback):
    runtime = live_runtime(loopback.base_url, "auto")
    assert (await runtime.ask("support", "module=Billing")).ok
    (request,) = writer_requests(loopback)
    assert response_format_type(request) == "json_schema"
    assert [f.value for f in runtime.memory.facts()] == ["Billing"]
    assert runtime.updater.writer.format_summary == "json_schema (auto)"


async def test_auto_steps_down_once_when_the_server_refuses_json_schema_and_remembers(loopback):
    loopback.state.responder = refuse({"json_schema", "json_object_schema"})
    runtime = live_runtime(loopback.base_url, "auto")
    assert (await runtime.ask("support", "module=Billing")).ok
    assert [f.value for f in runtime.memory.facts()] == ["Billing"]
    formats = ["json_schema", "json_object_schema", "json_object"]
    assert [writer_format_of(r) for r in writer_requests(loopback)] == formats
    schema_note = writer_requests(loopback)[2]["messages"][0]["content"]
    assert '"evidence"' in schema_note  # JSON mode carries the schema in the instructions
    notes = [e.describe() for e in runtime.memory.ledger.latest() if e.kind is EventKind.NOTE]
    assert len(notes) == 2 and "rejected the writer's json_object_schema request format; using json_object" in notes[1]
    assert (await runtime.ask("logs", "database=SQL Server 2022")).ok
    assert [response_format_type(r) for r in writer_requests(loopback)][-1] == "json_object"
    assert runtime.updater.writer.format_summary == "json_object (auto)"


async def test_a_text_only_server_ends_in_prompt_mode_and_a_fence_is_tolerated(loopback):
    def responder(body):
        if not is_writer(body):
            return None
        if response_format_type(body):
            return Canned(status=400, body={"error": {"message": "response_format is not supported by this server"}})
        return Canned(text=f"```json\n{GOOD}\n```")

    loopback.state.responder = responder
    runtime = live_runtime(loopback.base_url, "auto")
    assert (await runtime.ask("support", "module=Billing")).ok
    formats = [writer_format_of(r) for r in writer_requests(loopback)]
    assert formats == ["json_schema", "json_object_schema", "json_object", None]
    assert [f.value for f in runtime.memory.facts()] == ["Billing"]
    assert runtime.updater.writer.format_summary == "prompt (auto)"


async def test_a_fixed_format_never_steps_down(loopback):
    loopback.state.responder = refuse({"json_schema"})
    runtime = live_runtime(loopback.base_url, "json_schema")
    result = await runtime.ask("support", "module=Billing")
    assert result.ok and runtime.memory.facts() == ()
    event = runtime.memory.ledger.latest(1)[0]
    assert event.kind is EventKind.ABANDONED and "HTTP 500" in event.describe()


async def test_a_server_error_unrelated_to_the_format_does_not_step_down(loopback):
    loopback.state.responder = lambda body: (
        Canned(status=500, body={"error": {"message": "out of memory"}}) if is_writer(body) else None
    )
    runtime = live_runtime(loopback.base_url, "auto")
    assert (await runtime.ask("support", "module=Billing")).ok
    assert [response_format_type(r) for r in writer_requests(loopback)] == ["json_schema"]
    assert runtime.memory.ledger.latest(1)[0].kind is EventKind.ABANDONED


BAD = [
    ("garbage", "Sure! Here are the facts: module is Billing.", ReasonCode.MALFORMED_OUTPUT),
    ("truncated", '{"facts": [{"key": "module", "value": "Bill', ReasonCode.MALFORMED_OUTPUT),
    ("prose around JSON", f"Here you go:\n{GOOD}\nHope this helps.", ReasonCode.MALFORMED_OUTPUT),
    (
        "paraphrased evidence",
        json.dumps({"facts": [{"key": "module", "value": "Billing", "evidence": "the module is Billing"}]}),
        ReasonCode.EVIDENCE_NOT_IN_MESSAGE,
    ),
]


@pytest.mark.parametrize("writer_format", ["json_object", "prompt", "json_schema", "json_object_schema"])
@pytest.mark.parametrize(("name", "reply", "code"), BAD, ids=[b[0] for b in BAD])
async def test_bad_output_is_rejected_with_its_reason_and_changes_nothing(loopback, writer_format, name, reply, code):
    runtime = live_runtime(loopback.base_url, writer_format)
    assert (await runtime.ask("support", "module=Reporting")).ok
    before = runtime.memory.facts(), [m.text for m in runtime.history("support")]
    loopback.state.responder = lambda body: Canned(text=reply) if is_writer(body) else None
    assert (await runtime.ask("support", "module=Billing")).ok
    event = runtime.memory.ledger.latest(1)[0]
    assert event.kind is EventKind.REJECTED and event.reasons[0].code is code
    assert runtime.memory.facts() == before[0]
    assert "no fallback was attempted" in event.describe()


def test_fence_tolerance_is_exactly_one_fence():
    assert [c.value for c in parse_extraction(f"```\n{GOOD}\n```", fenced=True)] == ["Billing"]
    assert [c.value for c in parse_extraction(f"  ```json\n{GOOD}```  ", fenced=True)] == ["Billing"]
    for text in (f"```json\n{GOOD}\n```", f"text ```json\n{GOOD}\n```"):
        with pytest.raises(MalformedOutput):
            parse_extraction(text, fenced=text.startswith("text"))
    with pytest.raises(MalformedOutput, match="not valid JSON"):
        parse_extraction(f"```json\n```json\n{GOOD}\n```\n```", fenced=True)
