import threading

from tests.memory.helpers import say
from workbench.memory import EventKind, Outcome, Status, WorkingMemory


def test_subscribers_receive_one_outcome_per_batch_until_they_unsubscribe():
    memory = WorkingMemory()
    seen: list[Outcome] = []
    unsubscribe = memory.subscribe(seen.append)
    say(memory, "module=Reporting; database=PostgreSQL")
    say(memory, "Where can I find logs?", origin="logs")
    memory.erase(memory.plan("module"))
    unsubscribe()
    say(memory, "module=Billing")
    assert [o.status for o in seen] == [Status.APPLIED, Status.NOTHING_DECLARED, Status.FORGOTTEN]
    assert [[(e.kind, e.turn, e.origin) for e in o.events] for o in seen] == [
        [(EventKind.ADMITTED, 1, "support"), (EventKind.ADMITTED, 1, "support")],
        [(EventKind.NOTHING_DECLARED, 2, "logs")],
        [(EventKind.FORGOTTEN, None, "")],
    ]
    assert [e.seq for o in seen for e in o.events] == [1, 2, 3, 4]


def test_a_subscriber_may_read_memory_without_deadlock():
    memory = WorkingMemory()
    snapshots = []
    memory.subscribe(lambda _o: snapshots.append(len(memory.facts())))
    worker = threading.Thread(target=say, args=(memory, "module=Billing"))
    worker.start()
    worker.join(timeout=5)
    assert snapshots == [1]


def test_ledger_is_bounded_and_reads_the_latest_n_oldest_first():
    memory = WorkingMemory(ledger_capacity=3)
    for i in range(5):
        say(memory, f"version={i}")
    assert [e.value for e in memory.ledger.latest()] == ["2", "3", "4"]
    assert [e.value for e in memory.ledger.latest(2)] == ["3", "4"]
    assert memory.ledger.latest(0) == []


def test_concurrent_turns_from_threads_keep_every_invariant():
    memory = WorkingMemory(ledger_capacity=2000)
    barrier = threading.Barrier(8)

    def worker(i: int) -> None:
        barrier.wait()
        for j in range(50):
            say(memory, f"version={i}.{j}; customer=c{i}")

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=30)
    events = memory.ledger.latest()
    applied_turns = [e.turn or 0 for e in events if e.kind in (EventKind.ADMITTED, EventKind.REPLACED)]
    assert applied_turns == sorted(applied_turns)
    assert len({e.turn for e in events}) == 400  # every turn left a trace: applied or stale
    assert len(memory.facts()) == 2


def test_a_rejected_key_is_named_as_typed_in_the_ledger():
    """Not Python's repr: `"café"`, not `'caf\\xe9'`; a look-alike's foreign letter is named in words."""
    memory = WorkingMemory()
    café = say(memory, "café=1").events[0].describe()
    lookalike = say(memory, "m\u043edule=Billing").events[0].describe()
    assert '"café": ' in café and "\\xe9" not in café and "'" not in café
    assert '"m\u043edule": ' in lookalike and "U+043E CYRILLIC SMALL LETTER O" in lookalike


def test_a_context_copied_during_a_turn_keeps_no_message_after_it():
    """A library that keeps a callback made mid-turn (a Redis connection's reader on the event loop)
    keeps that moment's context: once the turn ends, the message is not in it."""
    import contextvars
    import gc

    from workbench.memory.records import MemoryTurn
    from workbench.memory.turns import acting_for, current_turn

    turn = MemoryTurn(1, 1, "customer=Contoso Ltd 7731")
    with acting_for(turn):
        kept = contextvars.copy_context()
        assert kept.run(current_turn.get) is turn
    assert kept.run(current_turn.get) is None
    del turn
    gc.collect()
    held = [o for o in gc.get_objects() if isinstance(o, MemoryTurn) and "Contoso" in o.user_text]
    assert held == []
