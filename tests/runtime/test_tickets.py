"""Every ticket settles exactly once, whatever ends its turn: cancellation at any await of `ask`,
concurrent turns on one agent, forgets in the middle, in both integration modes."""

import asyncio
import random
from collections import Counter

import pytest

from tests.runtime.helpers import facts
from workbench.memory import EventKind, WorkingMemory
from workbench.runtime import AGENT_NAMES, Mode, ModelConfig, WriterKind, build_models, turns
from workbench.runtime.agents import AgentRuntime
from workbench.session.assemble import assemble

APPLIED = (EventKind.ADMITTED, EventKind.REPLACED)
SETTLING = (EventKind.REJECTED, EventKind.STALE, EventKind.NOTHING_DECLARED, EventKind.ABANDONED)

# Every forget collects garbage (`release_garbage`): the worker's heap from earlier tests is not walked.
pytestmark = pytest.mark.usefixtures("frozen_heap")


def runtime_for(mode: Mode, *, delay: float = 0.0, writer: WriterKind = WriterKind.MODEL) -> AgentRuntime:
    memory = WorkingMemory(ledger_capacity=1_000_000)  # every event of the run stays readable
    return assemble(build_models(ModelConfig(), scripted_delay=delay), memory=memory, mode=mode, writer=writer).runtime


def settlements(runtime: AgentRuntime) -> Counter[int]:
    """How many times each ticket settled, from the ledger: one applied batch counts once."""
    counts: Counter[int] = Counter()
    applied_keys: Counter[tuple[int, str]] = Counter()
    for event in runtime.memory.ledger.latest():
        if event.turn is None:  # a forget or a note: no ticket
            continue
        if event.kind in SETTLING:
            counts[event.turn] += 1
        elif event.kind in APPLIED and event.key is not None:
            applied_keys[event.turn, event.key] += 1
    assert all(n == 1 for n in applied_keys.values()), "a batch was applied twice"
    for turn in {turn for turn, _ in applied_keys}:
        counts[turn] += 1
    return counts


def assert_every_ticket_settled_once(runtime: AgentRuntime) -> None:
    assert runtime.memory.open_tickets() == ()
    counts = settlements(runtime)
    assert {n: counts[n] for n in range(1, runtime.memory.turn + 1)} == dict.fromkeys(
        range(1, runtime.memory.turn + 1), 1
    )


async def steps(n: int) -> None:
    for _ in range(n):
        await asyncio.sleep(0)


async def completion_steps(mode: Mode) -> int:
    """How many loop iterations one declaring turn takes on the built-in model (it yields per word)."""
    runtime = runtime_for(mode)
    task = asyncio.create_task(runtime.ask("support", "module=Billing"))
    count = 0
    while not task.done():
        await asyncio.sleep(0)
        count += 1
    assert task.result().ok
    return count


@pytest.mark.parametrize("earlier_open", [False, True], ids=["alone", "behind-an-open-ticket"])
@pytest.mark.parametrize("mode", list(Mode), ids=str)
async def test_a_turn_cancelled_at_any_await_settles_and_the_next_declaring_turn_applies(
    mode, earlier_open, monkeypatch
):
    # The answer's reader pauses after every piece, as it does on a loaded machine, so every pause it
    # can make is an await the sweep visits (the framework's last update comes after the turn stored).
    monkeypatch.setattr(turns, "STREAM_SLICE_SECONDS", 0)
    total = await completion_steps(mode)
    assert total > 20  # the sweep below really visits the agent call, the writer call and the admission
    cancelled_at = []
    for k in range(total + 3):
        runtime = runtime_for(mode)
        # An earlier ticket still open makes the turn wait for its admission slot, then cancel there.
        earlier = runtime.memory.begin_turn("priority=high", "test") if earlier_open else None
        task = asyncio.create_task(runtime.ask("support", "module=Billing"))
        await steps(k)
        if task.done():
            assert not earlier_open and task.result().ok
            continue
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        cancelled_at.append(k)
        assert runtime.memory.facts() == ()
        assert runtime.history("support") == []  # a cancelled turn is not stored, in either mode
        if runtime.memory.turn == (2 if earlier_open else 1):  # else cancelled before it began
            event = runtime.memory.ledger.latest(1)[0]
            assert (event.kind, event.turn) == (EventKind.ABANDONED, runtime.memory.turn)
            assert "cancelled" in event.describe()
        if earlier is not None:
            runtime.memory.abandon(earlier, "the test let it go")
        nxt = await asyncio.wait_for(runtime.ask("logs", "module=Reporting"), 5)
        assert nxt.ok and facts(runtime) == {"module": ("Reporting", "module=Reporting")}
        assert_every_ticket_settled_once(runtime)
    assert len(cancelled_at) >= total - 1


@pytest.mark.parametrize("mode", list(Mode), ids=str)
async def test_two_concurrent_asks_on_one_agent_both_settle_in_order(mode):
    runtime = runtime_for(mode, delay=0.001)
    first = asyncio.create_task(runtime.ask("support", "module=Reporting; database=PostgreSQL"))
    second = asyncio.create_task(runtime.ask("support", "module=Billing"))
    results = await asyncio.wait_for(asyncio.gather(first, second), 10)
    assert all(r.ok for r in results)
    assert facts(runtime) == {
        "module": ("Billing", "module=Billing"),
        "database": ("PostgreSQL", "database=PostgreSQL"),
    }
    assert [m.message_id for m in runtime.history("support") if str(m.role) == "user"] == ["user-1", "user-2"]
    third = await asyncio.wait_for(runtime.ask("support", "priority=high"), 5)
    assert third.ok and facts(runtime)["priority"] == ("high", "priority=high")
    assert_every_ticket_settled_once(runtime)


def message(i: int) -> str:
    kinds = [
        f"module=M{i}; database=D{i}",
        f"log=/var/log/app-{i}.log",
        "Where are the logs?",
        f"priority=p{i}\nsymptom=s{i}",
        f"colour=red; module=X{i}",  # an unknown key: the whole batch is rejected
    ]
    return kinds[i % len(kinds)]


@pytest.mark.parametrize("mode", list(Mode), ids=str)
async def test_two_hundred_concurrent_asks_with_forgets_and_cancels(mode):
    runtime = runtime_for(mode, delay=0.0005)
    rng = random.Random(9)
    tasks: list[asyncio.Task] = []
    cancelled: list[asyncio.Task] = []
    turn_at_last_forget = 0
    for i in range(200):
        tasks.append(asyncio.create_task(runtime.ask(AGENT_NAMES[i % 2], message(i))))
        await steps(rng.randrange(4))
        if i % 29 == 28:
            cancelled.append(tasks[rng.randrange(len(tasks))])
            cancelled[-1].cancel()
        if i % 40 == 39:
            await runtime.forget(rng.choice([None, "module", "log"]))
            turn_at_last_forget = runtime.memory.turn
    done = await asyncio.wait_for(asyncio.gather(*tasks, return_exceptions=True), 60)
    results = [r for r in done if not isinstance(r, BaseException)]
    assert len(results) >= 200 - len(cancelled)
    assert_every_ticket_settled_once(runtime)
    assert all(f.turn > turn_at_last_forget for f in runtime.memory.facts())
    for name in AGENT_NAMES:
        completed = {
            f"user-{r.turn.number}"
            for r in results
            if r.ok and r.agent == name and r.turn.epoch == runtime.memory.epoch
        }
        history = runtime.history(name)
        stored = [m.message_id or "" for m in history if str(m.role) == "user"]
        assert sorted(stored) == sorted(completed)  # each completed turn once, nothing else
        assert [str(m.role) for m in history] == ["user", "assistant"] * len(completed)
    after = await asyncio.wait_for(runtime.ask("logs", "module=After"), 5)
    assert after.ok and facts(runtime)["module"] == ("After", "module=After")
    assert_every_ticket_settled_once(runtime)
