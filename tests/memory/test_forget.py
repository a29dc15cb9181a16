from tests.memory.helpers import T0, cand, say
from workbench.memory import EventKind, ReasonCode, Status, WorkingMemory


def everything_visible(memory: WorkingMemory) -> str:
    """All text memory can still show: facts with quotations, the prompt block, every event."""
    facts = " ".join(f"{f.key} {f.value} {f.evidence}" for f in memory.facts())
    events = " ".join(
        f"{e.describe()} {e.value} {e.previous} {e.evidence} {[r.detail for r in e.reasons]}"
        for e in memory.ledger.latest()
    )
    return f"{facts}\n{memory.prompt_block()}\n{events}"


def test_forget_one_key_keeps_the_others_and_leaves_no_residue():
    memory = WorkingMemory()
    say(memory, "module=Reporting; database=PostgreSQL")
    say(memory, "module=Billing; database=SQL Server 2022")
    turn = memory.begin_turn("module=Invoicing")
    memory.reject(turn, ReasonCode.MALFORMED_OUTPUT, "output echoed module Invoicing")
    outcome = memory.erase(memory.plan("module"))
    (event,) = outcome.events
    assert (outcome.status, event.kind, event.key) == (Status.FORGOTTEN, EventKind.FORGOTTEN, "module")
    assert [f.key for f in memory.facts()] == ["database"]
    visible = everything_visible(memory)
    for value in ("Reporting", "Billing", "Invoicing"):
        assert value not in visible
    assert "SQL Server 2022" in visible
    assert "Forgot module." in event.describe()
    assert memory.epoch == 1


def test_forget_all_keeps_that_a_forget_happened_not_what():
    memory = WorkingMemory()
    say(memory, "module=Reporting; database=PostgreSQL")
    say(memory, "customer=Contoso; symptom=timeouts at night")
    memory.erase(memory.plan(None))
    assert memory.facts() == ()
    visible = everything_visible(memory)
    for value in ("Reporting", "PostgreSQL", "Contoso", "timeouts at night"):
        assert value not in visible
    assert "No facts are stored" in memory.prompt_block()
    last = memory.ledger.latest(1)[0]
    assert (last.kind, last.key) == (EventKind.FORGOTTEN, None)
    assert "Forgot every fact (4 removed)." in last.describe()
    assert all(e.redacted for e in memory.ledger.latest() if e.kind is EventKind.ADMITTED)


def test_forget_narrows_another_quotation_that_covered_the_forgotten_value():
    memory = WorkingMemory()
    text = "module=Billing; database=SQL Server 2022"
    turn = memory.begin_turn(text)
    memory.admit(turn, [cand("module", "Billing", text), cand("database", "SQL Server 2022", text)], T0)
    memory.erase(memory.plan("database"))
    (fact,) = memory.facts()
    assert (fact.key, fact.value, fact.evidence) == ("module", "Billing", "module=Billing")
    assert "SQL Server 2022" not in everything_visible(memory)


def test_forget_removes_another_fact_whose_value_holds_the_forgotten_value():
    """The transcript and the export blank `billing` inside the log path; the fact kept it whole, and
    went on into every prompt."""
    memory = WorkingMemory()
    say(memory, "module=Billing; log=/var/log/billing/export.log; database=SQL Server 2022")
    (event,) = memory.erase(memory.plan("module")).events
    assert [(f.key, f.value) for f in memory.facts()] == [("database", "SQL Server 2022")]
    assert "billing" not in everything_visible(memory).lower()
    assert "Removed log too: it held a forgotten value." in event.describe()


def test_forgetting_an_absent_key_still_advances_the_epoch():
    memory = WorkingMemory()
    turn = memory.begin_turn("module=Billing")
    outcome = memory.erase(memory.plan("customer"))
    assert "it was not stored" in outcome.events[0].describe()
    assert memory.admit(turn, [cand("module", "Billing")], T0).status is Status.STALE


def test_evicted_values_are_forgotten_too():
    memory = WorkingMemory()
    say(memory, "product=Old")
    say(memory, "module=M; customer=C; symptom=S; version=1; priority=high")
    assert "product" not in {f.key for f in memory.facts()}
    memory.erase(memory.plan("product"))
    assert "Old" not in everything_visible(memory)


def test_a_failure_detail_that_quotes_a_forgotten_value_is_removed():
    memory = WorkingMemory()
    say(memory, "module=Billing; database=SQL Server 2022")
    failed = memory.begin_turn("module=Ledger")
    memory.abandon(failed, "the server said: invalid input 'module=Billing'")
    other = memory.begin_turn("priority=high")
    memory.abandon(other, "the server said: HTTP 400 for 'database=SQL Server 2022'")
    memory.erase(memory.plan("module"))
    details = [e.describe() for e in memory.ledger.latest() if e.kind is EventKind.ABANDONED]
    assert "Billing" not in " ".join(details) and "details were removed by a forget" in details[0]
    assert "SQL Server 2022" in details[1]  # not forgotten: kept
    memory.erase(memory.plan(None))
    assert "SQL Server 2022" not in everything_visible(memory)
    assert "SQL Server 2022" not in " ".join(e.describe() for e in memory.ledger.latest())
