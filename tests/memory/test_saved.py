"""Memory saved and restored is the same memory: facts with provenance, every ledger event, the
epoch and the counters, so tickets and event numbers continue; an open ticket is not carried over."""

from tests.memory.helpers import say
from workbench.memory import EventKind, Status, WorkingMemory
from workbench.memory.saved import SavedMemory


def worked(ledger_capacity: int = 500) -> WorkingMemory:
    memory = WorkingMemory(ledger_capacity=ledger_capacity)
    say(memory, "module=Reporting; database=PostgreSQL")
    say(memory, "module=Billing")
    memory.erase(memory.plan("database"))
    say(memory, "colour=teal")  # rejected: an unknown key
    say(memory, "priority=high; customer=Contoso")
    return memory


def test_restored_memory_is_the_saved_one_and_its_numbering_continues():
    memory = worked(ledger_capacity=4)
    saved = memory.saved()
    assert isinstance(saved, SavedMemory) and len(saved.ledger) == 4 and saved.ledger_seq > 4  # the bounded ledger
    restored = WorkingMemory.restored(saved, ledger_capacity=4)
    assert restored.saved() == saved
    assert (restored.facts(), restored.epoch, restored.turn, restored.prompt_block()) == (
        memory.facts(),
        memory.epoch,
        memory.turn,
        memory.prompt_block(),
    )
    outcome = say(restored, "module=Invoicing")
    assert outcome.status is Status.APPLIED and outcome.events[0].turn == memory.turn + 1
    assert outcome.events[0].seq == saved.ledger_seq + 1 and outcome.events[0].kind is EventKind.REPLACED


def test_a_forget_after_a_restore_finds_the_values_the_saved_ledger_holds():
    restored = WorkingMemory.restored(worked().saved())
    plan = restored.plan("module")
    assert {"Reporting", "Billing"} <= plan.values
    restored.erase(plan)
    assert not any("Billing" in e.describe() or "Reporting" in e.describe() for e in restored.ledger.latest())


def test_an_open_ticket_is_not_saved_and_its_number_is_not_reused():
    memory = WorkingMemory()
    open_ticket = memory.begin_turn("module=Reporting")
    restored = WorkingMemory.restored(memory.saved())
    assert restored.open_tickets() == () and not restored.is_open(open_ticket)
    assert restored.begin_turn("module=Billing").number == open_ticket.number + 1
