"""A turn cancelled at any await, with other memories on (recall, extracted memory files): before its
facts settle it stores nothing anywhere; after, its batch is admitted whole and neither history nor
recall holds the turn. Each call it made is recorded as finished or failed, its ticket settles once
and the next turn works."""

import asyncio
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.agentmem.helpers import files_holding
from tests.runtime.helpers import facts
from tests.runtime.test_tickets import assert_every_ticket_settled_once, steps
from workbench.agentmem.extracted import ExtractedMemory
from workbench.memory import EventKind, WorkingMemory
from workbench.recall.config import RecallConfig
from workbench.recall.setup import RecallSetup
from workbench.runtime import AGENT_NAMES, CallLog, CallRecord, Mode, ModelConfig, build_models, turns
from workbench.runtime.agents import AgentRuntime
from workbench.runtime.memories import AgentMemory
from workbench.session.assemble import assemble

SECRET = "Zanzibar-7731"
SAID = f"module={SECRET}"


def with_recall(mode: Mode, memories: list[AgentMemory] | None = None) -> AgentRuntime:
    calls = CallLog()
    return assemble(
        build_models(ModelConfig()),
        memory=WorkingMemory(ledger_capacity=10_000),
        mode=mode,
        calls=calls,
        recall=RecallConfig(store="memory").build(calls),
        recall_on=True,
        memories=memories or [],
    ).runtime


async def recalled_texts(runtime: AgentRuntime) -> list[str]:
    assert isinstance(runtime.recall, RecallSetup)
    return [r.text for r in await runtime.recall.store.records(runtime.recall.search_scope)]


async def assert_cancelled_whole(runtime: AgentRuntime, where: str) -> None:
    """Facts as they were, or the turn's batch admitted whole; nothing of it stored anywhere else."""
    admitted = [e for e in runtime.memory.ledger.latest() if e.kind is EventKind.ADMITTED]
    assert facts(runtime) == ({"module": (SECRET, SAID)} if admitted else {}), where
    assert [runtime.history(name) for name in AGENT_NAMES] == [[], []], where
    assert await recalled_texts(runtime) == [], where
    calls = runtime.calls.records()
    assert all(c.finished != bool(c.error) for c in calls), where  # each call finished or failed, once
    assert all(c.error == "the call was cancelled" for c in calls if c.error), where
    assert runtime.memory.open_tickets() == (), where


async def next_turn_works(runtime: AgentRuntime) -> None:
    nxt = await asyncio.wait_for(runtime.ask("logs", "module=Reporting"), 5)
    assert nxt.ok and facts(runtime)["module"] == ("Reporting", "module=Reporting")
    assert_every_ticket_settled_once(runtime)


@pytest.mark.parametrize("mode", list(Mode), ids=str)
async def test_a_turn_cancelled_at_any_await_with_recall_on_stores_nothing_but_a_whole_batch(mode, monkeypatch):
    monkeypatch.setattr(turns, "STREAM_SLICE_SECONDS", 0)  # a pause after every piece: each is an await swept
    runtime = with_recall(mode)
    task = asyncio.create_task(runtime.ask("support", SAID))
    total = 0
    while not task.done():
        await asyncio.sleep(0)
        total += 1
    assert task.result().ok and SECRET in str(await recalled_texts(runtime))  # a whole turn stores it
    assert total > 20  # the sweep visits recall's search, the answer, the writer call and recall's store
    for k in range(total):
        runtime = with_recall(mode)
        task = asyncio.create_task(runtime.ask("support", SAID))
        await steps(k)
        if task.done():
            continue
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        await assert_cancelled_whole(runtime, f"cancelled after {k} of {total} steps")
        await next_turn_works(runtime)


async def cancel_during(runtime: AgentRuntime, call: Callable[[CallRecord], bool]) -> None:
    """Ask, and cancel the turn while a call `call` chooses is in flight."""
    task = asyncio.create_task(runtime.ask("support", SAID))
    while not any(call(c) and not c.finished for c in runtime.calls.records()):
        assert not task.done(), "the call was never made"
        await asyncio.sleep(0)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task


@pytest.mark.parametrize("mode", list(Mode), ids=str)
async def test_a_turn_cancelled_during_the_writer_call_leaves_no_memory_file_and_no_fact(mode, tmp_path: Path):
    runtime = with_recall(mode, [ExtractedMemory(tmp_path)])
    await cancel_during(runtime, lambda c: c.purpose == "writer")
    await assert_cancelled_whole(runtime, "during the writer call")
    assert facts(runtime) == {}
    assert files_holding(tmp_path, SECRET) == []
    await next_turn_works(runtime)


@pytest.mark.parametrize("mode", list(Mode), ids=str)
async def test_a_turn_cancelled_once_its_batch_is_admitted_keeps_the_batch_whole_and_the_forget_reaches_the_rest(
    mode, tmp_path: Path
):
    """Memory's extraction runs first of everything a turn stores, history last: a cancel during another
    memory's own model call afterwards leaves the batch whole, no history and nothing recalled. What that
    memory had written by then (the framework's transcript, before its extraction call) stays, and the
    one forget reaches it."""
    runtime = with_recall(mode, [ExtractedMemory(tmp_path)])
    await cancel_during(runtime, lambda c: c.purpose == "extraction")
    await assert_cancelled_whole(runtime, "during the extraction call")
    assert facts(runtime) == {"module": (SECRET, SAID)}
    assert [Path(f).parent.name for f in files_holding(tmp_path, SECRET)] == ["transcripts"]
    await runtime.forget("module")
    assert files_holding(tmp_path, SECRET) == []
    await next_turn_works(runtime)
