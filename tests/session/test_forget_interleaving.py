"""A forget that lands in the middle of a turn (while its answer streams, while the writer works, after
the writer answered but before admission) or is itself cancelled: afterwards no string the session
holds contains a forgotten value, the late turn's batch is refused by its ticket, and nothing else is
damaged (the other facts stay, the next turn works)."""

import asyncio
import secrets

import pytest

from tests.live.helpers import is_writer
from tests.runtime.test_tickets import assert_every_ticket_settled_once, steps
from tests.support.openai_server import Canned
from tests.support.residue import residue
from workbench.memory import EventKind, WorkingMemory
from workbench.runtime import AGENT_NAMES, ModelConfig, build_models
from workbench.session.assemble import assemble
from workbench.session.controller import SessionController, TurnOutcome

KEYS = pytest.mark.parametrize("key", [None, "module"], ids=["all", "module"])


def session(config: ModelConfig | None = None) -> SessionController:
    return assemble(build_models(config or ModelConfig()), memory=WorkingMemory(ledger_capacity=10_000))


class Values:
    def __init__(self) -> None:
        tag = secrets.token_hex(5)
        self.earlier, self.late, self.other = f"Billing-{tag}", f"Reporting-{tag}", f"Contoso-{tag}"

    def forgotten(self, key: str | None) -> list[str]:
        return [self.earlier, self.late] + ([self.other] if key is None else [])


async def converse(controller: SessionController, v: Values) -> None:
    assert (await controller.ask("support", f"module={v.earlier}; customer={v.other}")).result.ok


def assert_after(controller: SessionController, v: Values, key: str | None, late: TurnOutcome) -> None:
    runtime = controller.runtime
    kinds = [e.kind for u in late.memory for e in u.outcome.events]
    assert kinds == [EventKind.STALE], kinds  # the late turn's batch is refused by its ticket
    assert late.result.ok  # its answer was still given, on the old session
    assert residue(v.forgotten(key), controller) == {}
    assert [runtime.history(name) for name in AGENT_NAMES] == [[], []]  # the late exchange went nowhere
    kept = {f.key: f.value for f in runtime.memory.facts()}
    assert kept == ({} if key is None else {"customer": v.other})
    assert runtime.memory.open_tickets() == ()


async def next_turn_works(controller: SessionController) -> None:
    nxt = await asyncio.wait_for(controller.ask("support", "module=After"), 5)
    assert nxt.result.ok and {f.key: f.value for f in controller.runtime.memory.facts()}["module"] == "After"
    assert_every_ticket_settled_once(controller.runtime)


@KEYS
async def test_a_forget_while_the_answer_streams(key):
    controller, v = session(), Values()
    await converse(controller, v)
    forgets: list[asyncio.Task] = []

    def streamed(piece: str) -> None:
        if not forgets:
            forgets.append(asyncio.create_task(controller.forget(key)))

    late = await controller.ask("logs", f"module={v.late}; where are the logs?", streamed)
    assert forgets[0].done()  # it finished while the answer streamed on
    assert_after(controller, v, key, late)
    await next_turn_works(controller)


@KEYS
async def test_a_forget_while_the_writer_call_is_in_flight(key, loopback):
    loopback.state.responder = lambda body: Canned(delay=0.3) if is_writer(body) else None
    controller = session(ModelConfig(model="loopback-model", base_url=loopback.base_url, max_retries=0))
    v = Values()
    loopback.state.responder = None
    await converse(controller, v)
    loopback.state.responder = lambda body: Canned(delay=0.3) if is_writer(body) else None
    turn = asyncio.create_task(controller.ask("logs", f"module={v.late}"))
    calls = controller.runtime.calls
    while not any(c.purpose == "writer" and not c.finished for c in calls.records()):
        assert not turn.done()
        await asyncio.sleep(0.005)
    await controller.forget(key)
    late = await turn
    assert_after(controller, v, key, late)
    loopback.state.responder = None
    await next_turn_works(controller)


@KEYS
async def test_a_forget_after_the_writer_answered_and_before_admission(key):
    controller, v = session(), Values()
    await converse(controller, v)
    memory = controller.runtime.memory
    earlier = memory.begin_turn("Where are the logs?", "test")  # admission waits for this earlier ticket
    turn = asyncio.create_task(controller.ask("logs", f"module={v.late}"))
    writer = lambda: [c for c in controller.runtime.calls.records() if c.purpose == "writer"]  # noqa: E731
    while not (writer() and writer()[-1].finished):
        assert not turn.done()
        await asyncio.sleep(0)
    await steps(3)
    assert not turn.done() and len(memory.open_tickets()) == 2  # answered, proposed, waiting to be admitted
    await controller.forget(key)
    memory.abandon(earlier, "the test lets it go")
    late = await turn
    assert_after(controller, v, key, late)
    await next_turn_works(controller)


@KEYS
async def test_a_forget_cancelled_at_any_await_is_carried_out_whole(key):
    """A forget is asked at its call: cancelled at any step, at step 0 too (before the task awaiting it
    starts), it is carried out whole."""
    k = -1
    while True:
        k += 1
        controller, v = session(), Values()
        await converse(controller, v)
        assert (await controller.ask("logs", f"module={v.late}")).result.ok
        task = asyncio.create_task(controller.forget(key))
        await steps(k)
        if task.done():
            break
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        await controller.runtime.forgetting.forget("priority")  # one forget at a time: this one runs after it
        assert residue(v.forgotten(key), controller) == {}, k
        notes = [e for e in controller.runtime.memory.ledger.latest() if e.origin == "forget"]
        assert len(notes) == 2, k  # the cancelled forget said what it reached, then the next one did
        await next_turn_works(controller)
    assert k > 0
