"""The seed's "Correct then forget" walk-through, in both integration modes, on the built-in
model, on a real HTTP server speaking /v1/chat/completions, and on one speaking Azure OpenAI's shape."""

import pytest

from tests.azure.helpers import azure_runtime
from tests.runtime.helpers import facts, live, scripted, transcript
from workbench.memory import EventKind
from workbench.memory.prompt import BLOCK_START
from workbench.runtime import Mode

FIRST = "module=Reporting; database=PostgreSQL"
CORRECTION = "module=Billing; database=SQL Server 2022"
LOGS_QUESTION = "Where can I find logs?"


@pytest.fixture(params=[Mode.MANUAL, Mode.PROVIDER], ids=str)
def mode(request):
    return request.param


@pytest.fixture(params=["scripted", "loopback", "azure"])
def runtime(request, mode):
    if request.param == "scripted":
        return scripted(mode)
    if request.param == "azure":
        return azure_runtime(request.getfixturevalue("azure").endpoint, mode)
    return live(request.getfixturevalue("loopback").base_url, mode)


async def test_correct_then_forget(runtime, mode):
    ledger = runtime.memory.ledger

    first = await runtime.ask("support", FIRST)
    assert first.ok, first.error
    assert facts(runtime) == {
        "module": ("Reporting", "module=Reporting"),
        "database": ("PostgreSQL", "database=PostgreSQL"),
    }

    second = await runtime.ask("support", CORRECTION)
    assert second.ok, second.error
    replaced = [e for e in ledger.latest() if e.kind is EventKind.REPLACED]
    assert [(e.key, e.previous, e.value, e.evidence, e.turn) for e in replaced] == [
        ("module", "Reporting", "Billing", "module=Billing", 2),
        ("database", "PostgreSQL", "SQL Server 2022", "database=SQL Server 2022", 2),
    ]
    assert facts(runtime) == {
        "module": ("Billing", "module=Billing"),
        "database": ("SQL Server 2022", "database=SQL Server 2022"),
    }

    before = runtime.memory.facts()
    logs = await runtime.ask("logs", LOGS_QUESTION)
    assert logs.ok, logs.error
    assert runtime.memory.facts() == before
    assert ledger.latest(1)[0].kind is EventKind.NOTHING_DECLARED
    assert "module=Billing" in logs.reply and "database=SQL Server 2022" in logs.reply
    assert "Reporting" not in logs.reply  # the logs agent's history never held the old values
    logs_history = transcript(runtime, "logs")
    support_history = transcript(runtime, "support")
    assert len(logs_history) == 2 and logs_history[0][1].endswith(LOGS_QUESTION)
    assert len(support_history) == 4
    assert not any(LOGS_QUESTION in text for _, text in support_history)
    # Manual mode stores the block with each message; provider mode never stores it.
    stored_blocks = sum(BLOCK_START in text for _, text in support_history + logs_history)
    assert stored_blocks == (3 if mode is Mode.MANUAL else 0)

    await runtime.forget("module")
    assert facts(runtime) == {"database": ("SQL Server 2022", "database=SQL Server 2022")}
    assert transcript(runtime, "support") == [] and transcript(runtime, "logs") == []

    after_key = await runtime.ask("support", "Which module and database am I on?")
    assert after_key.ok, after_key.error
    assert "SQL Server 2022" in after_key.reply
    assert "Billing" not in after_key.reply and "Reporting" not in after_key.reply

    await runtime.forget()
    assert runtime.memory.facts() == ()
    assert transcript(runtime, "support") == [] and transcript(runtime, "logs") == []

    for agent in ("support", "logs"):
        late = await runtime.ask(agent, "Remind me of my module and database, please.")
        assert late.ok, late.error
        for value in ("Billing", "Reporting", "SQL Server 2022", "PostgreSQL"):
            assert value not in late.reply
    assert runtime.memory.facts() == ()


async def test_loopback_exercises_streaming_structured_output_and_usage(loopback, mode):
    runtime = live(loopback.base_url, mode)
    result = await runtime.ask("support", FIRST)
    assert result.ok, result.error
    agent_request, writer_request = loopback.requests
    assert agent_request["stream"] is True
    assert writer_request.get("stream") in (None, False)
    assert writer_request["response_format"]["type"] == "json_schema"
    assert [m["content"] for m in writer_request["messages"] if m["role"] == "user"] == [FIRST]
    assert result.usage is not None and result.usage.input_tokens > 0
    assert all(call.usage is not None for call in runtime.calls.records())
