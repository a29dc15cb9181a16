"""Failed, timed-out and cancelled calls leave facts and both histories as they were."""

import asyncio

import pytest

from tests.runtime.helpers import facts, live, scripted, transcript
from tests.support.openai_server import Canned
from workbench.memory import EventKind
from workbench.runtime import Mode

SEED = "module=Reporting; database=PostgreSQL"


def snapshot(runtime):
    return runtime.memory.facts(), transcript(runtime, "support"), transcript(runtime, "logs")


@pytest.mark.parametrize("mode", list(Mode), ids=str)
async def test_a_failing_agent_call_changes_nothing_and_the_next_turn_works(loopback, mode):
    runtime = live(loopback.base_url, mode)
    assert (await runtime.ask("support", SEED)).ok
    before = snapshot(runtime)
    loopback.enqueue(Canned(status=400, body={"error": {"message": "context length exceeded"}}))
    result = await runtime.ask("support", "module=Billing; database=SQL Server 2022")
    assert not result.ok
    assert "HTTP 400" in result.error and "context length exceeded" in result.error
    assert snapshot(runtime) == before
    event = runtime.memory.ledger.latest(1)[0]
    assert event.kind is EventKind.ABANDONED and "support agent's call failed" in event.describe()
    assert (await runtime.ask("support", "module=Billing")).ok
    assert facts(runtime)["module"] == ("Billing", "module=Billing")


async def test_a_failing_writer_call_keeps_the_answer_and_the_facts(loopback):
    runtime = live(loopback.base_url)
    assert (await runtime.ask("support", SEED)).ok
    before = runtime.memory.facts()
    loopback.enqueue(Canned(), Canned(status=503, body={"error": {"message": "overloaded"}}))
    result = await runtime.ask("support", "module=Billing")
    assert result.ok
    assert runtime.memory.facts() == before
    event = runtime.memory.ledger.latest(1)[0]
    assert event.kind is EventKind.ABANDONED and "writer call failed" in event.describe()
    assert "HTTP 503" in event.describe()


async def test_unreachable_server_is_a_clear_error(mode=Mode.MANUAL):
    runtime = live("http://127.0.0.1:9/v1", mode, timeout=10)
    result = await runtime.ask("support", SEED)
    assert result.error.startswith("cannot reach http://127.0.0.1:9/v1")
    assert "--base-url" in result.error
    assert runtime.memory.facts() == ()


@pytest.mark.parametrize("mode", list(Mode), ids=str)
async def test_a_timed_out_call_changes_nothing(mode):
    runtime = scripted(mode, delay=0.05, timeout=0.2)
    runtime.models.agent_client.delay = 0
    assert (await runtime.ask("support", SEED)).ok
    before = snapshot(runtime)
    runtime.models.agent_client.delay = 0.05
    result = await runtime.ask("support", "module=Billing")
    assert "timed out" in result.error
    assert snapshot(runtime) == before
    runtime.models.agent_client.delay = 0
    assert (await runtime.ask("support", "module=Billing")).ok


@pytest.mark.parametrize("mode", list(Mode), ids=str)
async def test_a_cancelled_turn_settles_its_ticket_and_changes_nothing(mode):
    runtime = scripted(mode, delay=0.02)
    assert (await runtime.ask("support", SEED)).ok
    before = snapshot(runtime)
    started = asyncio.Event()
    task = asyncio.create_task(runtime.ask("support", "module=Billing", on_text=lambda _t: started.set()))
    await started.wait()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert snapshot(runtime) == before
    event = runtime.memory.ledger.latest(1)[0]
    assert event.kind is EventKind.ABANDONED and "cancelled" in event.describe()
    assert (await runtime.ask("logs", "module=Billing")).ok
    assert facts(runtime)["module"][0] == "Billing"


@pytest.mark.parametrize("mode", list(Mode), ids=str)
async def test_forget_during_a_turn_in_flight(mode):
    runtime = scripted(mode, delay=0.01)
    assert (await runtime.ask("support", SEED)).ok
    started = asyncio.Event()
    task = asyncio.create_task(
        runtime.ask("support", "module=Billing; database=SQL Server 2022", on_text=lambda _t: started.set())
    )
    await started.wait()
    await runtime.forget()
    result = await task
    assert result.ok and "Reporting" in result.reply  # the answer of the old conversation is still shown
    assert runtime.memory.facts() == ()
    stale = runtime.memory.ledger.latest(1)[0]
    assert (stale.kind, stale.turn) == (EventKind.STALE, result.turn.number)
    assert "before a forget" in stale.describe()
    assert transcript(runtime, "support") == [] and transcript(runtime, "logs") == []
    assert (await runtime.ask("support", "module=Billing")).ok
    assert [t for _, t in transcript(runtime, "support") if "SQL Server" in t] == []


@pytest.mark.parametrize("mode", list(Mode), ids=str)
async def test_concurrent_turns_finishing_out_of_order_are_admitted_in_submission_order(mode):
    runtime = scripted(mode, delay=0.01)
    chunks: list[str] = []
    slow = "module=Reporting; " + "a " * 50  # a longer echo: many more streamed words
    first = asyncio.create_task(runtime.ask("support", slow, on_text=lambda _t: chunks.append("support")))
    await asyncio.sleep(0)
    second = asyncio.create_task(runtime.ask("logs", "module=Billing", on_text=lambda _t: chunks.append("logs")))
    await asyncio.gather(first, second)
    last_chunk = {name: max(i for i, c in enumerate(chunks) if c == name) for name in ("support", "logs")}
    assert last_chunk["logs"] < last_chunk["support"]  # the later turn's answer finished first
    applied = [
        (e.turn, e.kind, e.value)
        for e in runtime.memory.ledger.latest()
        if e.kind in (EventKind.ADMITTED, EventKind.REPLACED)
    ]
    assert applied == [(1, EventKind.ADMITTED, "Reporting"), (2, EventKind.REPLACED, "Billing")]
    assert facts(runtime)["module"] == ("Billing", "module=Billing")


@pytest.mark.parametrize("mode", list(Mode), ids=str)
async def test_identical_repeated_turns_are_all_kept_in_history(mode):
    runtime = scripted(mode)
    for _ in range(3):
        assert (await runtime.ask("support", "ping")).ok
    history = transcript(runtime, "support")
    assert [role for role, _ in history] == ["user", "assistant"] * 3
    assert len({text for role, text in history if role == "user"}) == 1  # one identical message, stored three times


async def test_a_message_over_the_limit_is_refused_before_any_call():
    runtime = scripted()
    result = await runtime.ask("support", "x" * 4097)
    assert "message_too_long" in result.error
    assert runtime.calls.records() == [] and transcript(runtime, "support") == []


def test_a_connection_refused_below_the_sdk_is_said_as_cannot_reach():
    """The framework sometimes wraps httpx's ConnectError itself, without the SDK's APIConnectionError in
    the chain (seen with four workers on two cores): it is the same failure, said the same way."""
    import httpx
    from agent_framework.exceptions import ChatClientException

    from workbench.runtime.failures import cannot_reach, explain_failure

    try:
        try:
            request = httpx.Request("POST", "http://127.0.0.1:9/v1/chat/completions")
            raise httpx.ConnectError("All connection attempts failed", request=request)
        except httpx.ConnectError as inner:
            raise ChatClientException("service failed to complete the prompt", inner) from inner
    except ChatClientException as exc:
        assert explain_failure(exc, base_url="http://127.0.0.1:9/v1").startswith("cannot reach http://127.0.0.1:9/v1")
        assert cannot_reach(exc)
