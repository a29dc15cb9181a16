from tests.memory.helpers import T0, say, state
from workbench.memory import EventKind, ReasonCode, Status, WorkingMemory, declared_candidates


def admit(memory, turn):
    return memory.admit(turn, declared_candidates(turn.user_text), T0)


def test_tickets_are_numbered_in_submission_order_across_epochs():
    memory = WorkingMemory()
    a = memory.begin_turn("a", "support")
    b = memory.begin_turn("b", "logs")
    memory.erase(memory.plan(None))
    c = memory.begin_turn("c")
    assert [(t.epoch, t.number, t.origin) for t in (a, b, c)] == [(0, 1, "support"), (0, 2, "logs"), (1, 3, "")]
    assert (memory.epoch, memory.turn) == (1, 3)


def test_a_ticket_issued_before_forget_is_stale():
    memory = WorkingMemory()
    turn = memory.begin_turn("module=Billing")
    memory.erase(memory.plan("database"))
    before = state(memory)
    outcome = admit(memory, turn)
    (event,) = outcome.events
    assert (outcome.status, event.kind) == (Status.STALE, EventKind.STALE)
    assert "issued before a forget" in event.describe()
    assert state(memory) == before


def test_a_ticket_issued_after_forget_applies():
    memory = WorkingMemory()
    say(memory, "module=Reporting")
    memory.erase(memory.plan(None))
    assert say(memory, "module=Billing").applied


def test_an_earlier_turn_finishing_after_a_later_one_is_stale():
    memory = WorkingMemory()
    first = memory.begin_turn("module=Reporting")
    second = memory.begin_turn("module=Billing")
    assert admit(memory, second).applied
    outcome = admit(memory, first)
    assert outcome.status is Status.STALE
    assert "later turn (2)" in outcome.events[0].describe()
    assert memory.facts()[0].value == "Billing"


def test_an_earlier_turn_may_apply_while_a_later_one_is_still_running():
    memory = WorkingMemory()
    first = memory.begin_turn("module=Reporting")
    second = memory.begin_turn("database=PostgreSQL")
    assert admit(memory, first).applied
    assert admit(memory, second).applied
    assert {f.key for f in memory.facts()} == {"module", "database"}


def test_a_ticket_settles_once():
    memory = WorkingMemory()
    turn = memory.begin_turn("module=Reporting")
    assert admit(memory, turn).applied
    assert admit(memory, turn).status is Status.STALE
    rejected = memory.begin_turn("module=Billing")
    assert memory.admit(rejected, [], T0).status is Status.REJECTED
    assert admit(memory, rejected).status is Status.STALE
    assert memory.facts()[0].value == "Reporting"


def test_a_forged_ticket_is_stale():
    memory = WorkingMemory()
    real = memory.begin_turn("Where are the logs?")
    forged = type(real)(epoch=real.epoch, number=real.number, user_text="module=Evil")
    assert admit(memory, forged).status is Status.STALE
    future = type(real)(epoch=5, number=9, user_text="module=Evil")
    assert "never issued" in admit(memory, future).events[0].describe()
    assert memory.facts() == ()


def test_reject_records_malformed_output_and_abandon_records_a_failed_turn():
    memory = WorkingMemory()
    say(memory, "module=Reporting")
    before = state(memory)
    turn = memory.begin_turn("module=Billing")
    outcome = memory.reject(turn, ReasonCode.MALFORMED_OUTPUT, "the reply is not JSON")
    assert [(r.code, r.detail) for r in outcome.events[0].reasons] == [
        (ReasonCode.MALFORMED_OUTPUT, "the reply is not JSON")
    ]
    assert "no fallback was attempted" in outcome.events[0].describe()
    turn = memory.begin_turn("module=Billing")
    outcome = memory.abandon(turn, "the model call timed out after 30 s")
    assert outcome.status is Status.ABANDONED
    assert "timed out" in outcome.events[0].describe()
    assert state(memory) == before
    assert memory.abandon(turn, "again").status is Status.STALE


def test_a_ticket_in_flight_during_a_forget_stays_open_until_it_settles_once_as_stale():
    memory = WorkingMemory()
    turn = memory.begin_turn("module=Billing")
    memory.erase(memory.plan(None))
    assert memory.open_tickets() == (turn,)  # the registry still owes it a settlement
    assert memory.abandon(turn, "the model call failed").status is Status.STALE
    assert memory.open_tickets() == ()
    assert [e.kind for e in memory.ledger.latest()] == [EventKind.FORGOTTEN, EventKind.STALE]


async def test_admission_waits_for_every_earlier_ticket_of_its_epoch_only():
    import asyncio

    memory = WorkingMemory()
    first = memory.begin_turn("module=Reporting")
    second = memory.begin_turn("module=Billing")
    waiting = asyncio.create_task(memory.wait_for_earlier(second))
    await asyncio.sleep(0)
    assert not waiting.done()
    memory.abandon(first, "failed")
    await asyncio.wait_for(waiting, 1)

    third = memory.begin_turn("module=A")
    fourth = memory.begin_turn("module=B")
    waiting = asyncio.create_task(memory.wait_for_earlier(fourth))
    await asyncio.sleep(0)
    waiting.cancel()  # a cancelled wait changes nothing: the ticket stays open for its owner
    await asyncio.gather(waiting, return_exceptions=True)
    assert memory.is_open(fourth)
    memory.erase(memory.plan(None))  # a forget makes the waiting ticket stale: nothing to wait for any more
    await asyncio.wait_for(memory.wait_for_earlier(fourth), 1)
    fifth = memory.begin_turn("module=C")
    await asyncio.wait_for(memory.wait_for_earlier(fifth), 1)  # the old epoch's open tickets do not block it
    assert memory.is_open(third) and admit(memory, fifth).applied
