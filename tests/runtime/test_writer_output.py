"""Bad writer output is a rejected batch with its reason, never a crash and never a state change."""

import json

import pytest

from tests.runtime.helpers import facts, live, scripted, transcript
from tests.support.openai_server import Canned
from workbench.memory import EventKind, ReasonCode
from workbench.runtime import Mode, WriterKind


def extraction(*facts: tuple[str, object, str], **extra) -> str:
    return json.dumps({"facts": [{"key": k, "value": v, "evidence": e} for k, v, e in facts], **extra})


CASES = [
    ("module=Billing", "this is not JSON", ReasonCode.MALFORMED_OUTPUT, None),
    ("module=Billing", '{"facts": [{"key": "module", "value": "Bill', ReasonCode.MALFORMED_OUTPUT, None),
    ("module=Billing", extraction(("module", 5, "module=5")), ReasonCode.MALFORMED_OUTPUT, None),
    (
        "module=Billing",
        extraction(("module", "Billing", "module=Billing"), confidence=0.9),
        ReasonCode.MALFORMED_OUTPUT,
        None,
    ),
    ("module=Billing", '{"facts": [{"key": "module", "value": "Billing"}]}', ReasonCode.MALFORMED_OUTPUT, None),
    (
        "module=Billing",
        extraction(("module", "Billing", "module=Billing"), ("database", "SQL Server 2022", "module=Billing")),
        ReasonCode.DECLARATION_MISMATCH,
        "database",
    ),
    (
        "module=Billing",
        extraction(("module", "Billing", "module is Billing")),
        ReasonCode.EVIDENCE_NOT_IN_MESSAGE,
        "module",
    ),
    (
        "module=Billing\nOur database is PostgreSQL, right?",
        extraction(("module", "Billing", "module=Billing"), ("database", "PostgreSQL", "database is PostgreSQL")),
        ReasonCode.DECLARATION_MISMATCH,
        "database",
    ),
    ("module=Billing", extraction(("module", "billing", "module=Billing")), ReasonCode.DECLARATION_MISMATCH, "module"),
    ("module=Billing", extraction(), ReasonCode.DECLARATION_MISMATCH, "module"),
]


@pytest.mark.parametrize("mode", list(Mode), ids=str)
@pytest.mark.parametrize(("message", "reply", "code", "key"), CASES)
async def test_bad_writer_output_is_rejected_without_state_change(loopback, mode, message, reply, code, key):
    runtime = live(loopback.base_url, mode)
    assert (await runtime.ask("support", "module=Reporting; database=PostgreSQL")).ok
    before = runtime.memory.facts()
    loopback.enqueue(Canned(), Canned(text=reply))  # the agent answers normally, the writer misbehaves
    result = await runtime.ask("support", message)
    assert result.ok  # the answer stands; only the memory update was refused
    event = runtime.memory.ledger.latest(1)[0]
    assert event.kind is EventKind.REJECTED
    assert (event.reasons[0].code, event.reasons[0].key) == (code, key)
    assert "no fallback was attempted" in event.describe()
    assert runtime.memory.facts() == before
    assert len(transcript(runtime, "support")) == 4  # the exchange itself is history


async def test_the_writer_is_not_called_for_a_message_without_declarations(loopback):
    runtime = live(loopback.base_url)
    result = await runtime.ask("logs", "Where can I find logs?")
    assert result.ok
    assert [c.purpose for c in runtime.calls.records()] == ["logs"]
    assert len(loopback.requests) == 1
    assert runtime.memory.ledger.latest(1)[0].kind is EventKind.NOTHING_DECLARED


async def test_host_writer_makes_no_model_call():
    runtime = scripted(writer=WriterKind.HOST)
    assert (await runtime.ask("support", "module=Billing; database=SQL Server 2022")).ok
    assert [c.purpose for c in runtime.calls.records()] == ["support"]
    assert facts(runtime)["module"] == ("Billing", "module=Billing")
    assert runtime.writer_label.startswith("host")


async def test_a_rejected_declaration_is_reported_even_when_the_writer_is_honest():
    runtime = scripted()
    await runtime.ask("support", "m\u043edule=Billing; password=hunter2")
    event = runtime.memory.ledger.latest(1)[0]
    assert event.kind is EventKind.REJECTED
    assert {(r.code, r.key) for r in event.reasons} == {
        (ReasonCode.UNKNOWN_KEY, "m\u043edule"),
        (ReasonCode.UNKNOWN_KEY, "password"),
    }
    assert "CYRILLIC SMALL LETTER O" in event.describe()
