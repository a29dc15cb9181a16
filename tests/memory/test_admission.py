from datetime import UTC, datetime, timedelta, timezone

import pytest

from tests.memory.helpers import T0, cand, say, state
from workbench.memory import (
    MAX_EVIDENCE_CHARS,
    MAX_MESSAGE_CHARS,
    MAX_VALUE_CHARS,
    EventKind,
    FactCandidate,
    ReasonCode,
    Status,
    WorkingMemory,
    declared_candidates,
)


def codes(outcome):
    (event,) = outcome.events
    assert event.kind is EventKind.REJECTED
    return [(r.key, r.code) for r in event.reasons]


def test_seed_correction_replaces_two_keys_with_their_quotations():
    memory = WorkingMemory()
    first = say(memory, "module=Reporting; database=PostgreSQL")
    assert [e.kind for e in first.events] == [EventKind.ADMITTED, EventKind.ADMITTED]
    second = say(memory, "module=Billing; database=SQL Server 2022")
    assert [(e.kind, e.key, e.previous, e.value, e.evidence) for e in second.events] == [
        (EventKind.REPLACED, "module", "Reporting", "Billing", "module=Billing"),
        (EventKind.REPLACED, "database", "PostgreSQL", "SQL Server 2022", "database=SQL Server 2022"),
    ]
    facts = {f.key: f for f in memory.facts()}
    assert {k: (f.value, f.evidence, f.turn) for k, f in facts.items()} == {
        "module": ("Billing", "module=Billing", 2),
        "database": ("SQL Server 2022", "database=SQL Server 2022", 2),
    }
    assert all(f.recorded_at == T0 and f.recorded_at.tzinfo is UTC for f in facts.values())
    assert "Reporting" not in memory.prompt_block() and "PostgreSQL" not in memory.prompt_block()
    assert '"Reporting" -> "Billing"' in second.events[0].describe()


def test_values_containing_equals_signs_are_admitted_whole():
    memory = WorkingMemory()
    say(memory, "log=level=debug; file=/var/log/app.log")  # `file` is unknown: whole batch rejected
    assert memory.facts() == ()
    assert say(memory, "log=level=debug,path=C:\\logs").applied
    (fact,) = memory.facts()
    assert (fact.key, fact.value) == ("log", "level=debug,path=C:\\logs")


def test_recorded_at_defaults_to_now_in_utc_and_is_normalised():
    memory = WorkingMemory()
    turn = memory.begin_turn("priority=high")
    before = datetime.now(UTC)
    memory.admit(turn, [cand("priority", "high")])
    assert memory.facts()[0].recorded_at >= before
    turn = memory.begin_turn("priority=low")
    memory.admit(turn, [cand("priority", "low")], datetime(2026, 1, 1, 12, tzinfo=timezone(timedelta(hours=2))))
    assert memory.facts()[0].recorded_at == datetime(2026, 1, 1, 10, tzinfo=UTC)
    turn = memory.begin_turn("priority=mid")
    with pytest.raises(ValueError, match="timezone-aware"):
        memory.admit(turn, [cand("priority", "mid")], datetime(2026, 1, 1))


MESSAGE = "module=Billing; database=SQL Server 2022"


@pytest.mark.parametrize(
    ("message", "candidates", "expected"),
    [
        ("password=x", [cand("password", "x")], [("password", ReasonCode.UNKNOWN_KEY)]),
        ("password=x", [], [("password", ReasonCode.UNKNOWN_KEY)]),
        ("Module=x", [cand("Module", "x")], [("Module", ReasonCode.UNKNOWN_KEY)]),
        ("m\u043edule=x", [], [("m\u043edule", ReasonCode.UNKNOWN_KEY)]),
        ("module\u200b=x", [cand("module\u200b", "x")], [("module\u200b", ReasonCode.UNKNOWN_KEY)]),
        (
            "module=x",
            [cand("module", "x"), cand("module", "x")],
            [("module", ReasonCode.DUPLICATE_KEY)],
        ),
        ("module=", [cand("module", "", "module=")], [("module", ReasonCode.EMPTY_VALUE)]),
        ("module= ", [], [("module", ReasonCode.EMPTY_VALUE)]),
        ("module=" + "v" * 257, [], [("module", ReasonCode.VALUE_TOO_LONG)]),
        (
            "module=" + "v" * 257,
            [cand("module", "v" * 257)],
            [("module", ReasonCode.VALUE_TOO_LONG)],
        ),
        ("module=Billing", [cand("module", "Billing", " ")], [("module", ReasonCode.EVIDENCE_MISSING)]),
        (
            "module=Billing; " + "x" * 600,
            [cand("module", "Billing", "module=Billing; " + "x" * 600)],
            [("module", ReasonCode.EVIDENCE_TOO_LONG)],
        ),
        (
            "module=Billing",
            [cand("module", "Billing", "module = Billing")],
            [("module", ReasonCode.EVIDENCE_NOT_IN_MESSAGE)],
        ),
        ("module=Billing", [cand("module", "Billing", "module=")], [("module", ReasonCode.VALUE_NOT_IN_EVIDENCE)]),
        (MESSAGE, [cand("module", "Billing")], [("database", ReasonCode.DECLARATION_MISMATCH)]),
        (
            MESSAGE,
            [cand("module", "Billing"), cand("database", "SQL Server")],
            [("database", ReasonCode.DECLARATION_MISMATCH)],
        ),
        (
            "module=Billing. The customer is Contoso.",
            [cand("module", "Billing. The customer is Contoso."), cand("customer", "Contoso", "customer is Contoso")],
            [("customer", ReasonCode.DECLARATION_MISMATCH)],
        ),
        (
            "product=A; module=B; priority=C; database=D; constraint=E; customer=F",
            declared_candidates("product=A; module=B; priority=C; database=D; constraint=E; customer=F"),
            [(None, ReasonCode.TOO_MANY_FACTS)],
        ),
        (
            "product=A; module=B; priority=C; database=D; constraint=E; customer=F",
            declared_candidates("product=A; module=B; priority=C; database=D; constraint=E"),
            [(None, ReasonCode.TOO_MANY_FACTS), ("customer", ReasonCode.DECLARATION_MISMATCH)],
        ),
    ],
)
def test_every_reason_code_rejects_the_batch(message, candidates, expected):
    memory = WorkingMemory()
    say(memory, "environment=prod")
    before = state(memory)
    turn = memory.begin_turn(message)
    outcome = memory.admit(turn, candidates, T0)
    assert outcome.status is Status.REJECTED
    assert codes(outcome) == expected
    assert state(memory) == before
    assert "no fallback was attempted" in outcome.events[0].describe()


def test_too_long_message_is_rejected_before_anything_else():
    memory = WorkingMemory()
    text = "module=Billing; " + "x" * MAX_MESSAGE_CHARS
    turn = memory.begin_turn(text)
    memory.erase(memory.plan(None))  # even a stale ticket: the size check comes first
    outcome = memory.admit(turn, [cand("password", "x", "nowhere")], T0)
    assert codes(outcome) == [(None, ReasonCode.MESSAGE_TOO_LONG)]


def test_limits_are_inclusive():
    memory = WorkingMemory()
    value = "v" * MAX_VALUE_CHARS
    assert say(memory, f"symptom={value}").applied
    evidence = f"symptom={value}" + "x" * (MAX_EVIDENCE_CHARS - MAX_VALUE_CHARS - len("symptom="))
    assert len(evidence) == MAX_EVIDENCE_CHARS
    turn = memory.begin_turn(evidence)
    # the declared value is the whole rest of the segment: quote exactly that
    assert memory.admit(turn, declared_candidates(evidence), T0).status is Status.REJECTED  # value too long
    message = "x" * (MAX_MESSAGE_CHARS - len("priority=1; ")) + "; priority=1"
    assert len(message) == MAX_MESSAGE_CHARS
    assert say(memory, message).applied


def test_one_bad_candidate_rejects_the_whole_batch_atomically():
    memory = WorkingMemory()
    say(memory, "module=Reporting; database=PostgreSQL")
    before = state(memory)
    turn = memory.begin_turn("module=Billing; database=SQL Server 2022")
    outcome = memory.admit(
        turn, [cand("module", "Billing"), cand("database", "SQL Server 2022", "SQL Server 2023")], T0
    )
    assert codes(outcome) == [("database", ReasonCode.EVIDENCE_NOT_IN_MESSAGE)]
    assert state(memory) == before
    assert {f.value for f in memory.facts()} == {"Reporting", "PostgreSQL"}


def test_a_message_without_declarations_admits_nothing_without_rejection():
    memory = WorkingMemory()
    outcome = say(memory, "Where can I find logs?", origin="logs")
    (event,) = outcome.events
    assert (outcome.status, event.kind, event.origin) == (Status.NOTHING_DECLARED, EventKind.NOTHING_DECLARED, "logs")
    assert "declares no key=value facts" in event.describe()


def test_a_guessed_fact_is_never_admitted_even_when_quoted():
    memory = WorkingMemory()
    turn = memory.begin_turn("Our database is PostgreSQL, where are the logs?")
    outcome = memory.admit(turn, [cand("database", "PostgreSQL", "database is PostgreSQL")], T0)
    assert codes(outcome) == [("database", ReasonCode.DECLARATION_MISMATCH)]
    # the store rules alone would accept it: the declaration match is what stops a guess
    turn = memory.begin_turn("Our database is PostgreSQL, where are the logs?")
    assert memory.apply(turn, [cand("database", "PostgreSQL", "database is PostgreSQL")], T0).applied


def test_eviction_removes_the_oldest_turn_then_the_ordinally_first_key():
    memory = WorkingMemory()
    say(memory, "version=1; product=P")  # turn 1: both oldest, 'product' < 'version'
    say(memory, "module=M; customer=C")  # turn 2
    say(memory, "symptom=S")  # turn 3: five facts, nothing evicted yet
    assert len(memory.facts()) == 5
    outcome = say(memory, "priority=high")  # turn 4: one over
    evicted = [e for e in outcome.events if e.kind is EventKind.EVICTED]
    assert [(e.key, e.value, e.fact_turn) for e in evicted] == [("product", "P", 1)]
    assert "evicted" in evicted[0].describe()
    outcome = say(memory, "environment=prod; log=/var/log")  # two new keys: version (t1) then customer (t2)
    assert [e.key for e in outcome.events if e.kind is EventKind.EVICTED] == ["version", "customer"]
    assert [f.key for f in memory.facts()] == ["module", "symptom", "priority", "environment", "log"]


def test_a_correction_refreshes_age_and_evicts_nothing():
    memory = WorkingMemory()
    say(memory, "product=P; version=1; module=M; customer=C; symptom=S")
    outcome = say(memory, "product=Q")
    assert [e.kind for e in outcome.events] == [EventKind.REPLACED]
    say(memory, "priority=high")
    assert "product" in {f.key for f in memory.facts()}  # refreshed at turn 2, so 'customer' went
    assert "customer" not in {f.key for f in memory.facts()}


def test_repeating_the_same_value_is_admitted_not_replaced():
    memory = WorkingMemory()
    say(memory, "module=Billing")
    (event,) = say(memory, "module=Billing").events
    assert (event.kind, event.previous) == (EventKind.ADMITTED, "Billing")


def test_facts_snapshot_is_ordered_and_detached():
    memory = WorkingMemory()
    say(memory, "module=M; customer=C")
    snapshot = memory.facts()
    assert [f.key for f in snapshot] == ["customer", "module"]
    say(memory, "product=P")
    assert len(snapshot) == 2
    with pytest.raises(AttributeError):
        snapshot[0].value = "changed"  # type: ignore[misc]


def test_candidate_schema_forbids_extra_fields():
    with pytest.raises(ValueError):
        FactCandidate.model_validate({"key": "module", "value": "x", "evidence": "module=x", "confidence": 1})


def test_a_reason_counts_characters_with_thousands_separators():
    """As every other count the workbench shows: the help says 4,096, so does a refusal."""
    memory = WorkingMemory()
    text = "symptom=" + "A" * 1000
    turn = memory.begin_turn(text)
    (event,) = memory.admit(turn, declared_candidates(text)).events
    assert [r.detail for r in event.reasons] == ["the value has 1,000 characters; at most 256"]


def test_a_writer_that_proposes_a_look_alike_key_has_its_letter_named_as_the_message_path_names_it():
    """`m\\u043edule` (a Cyrillic o) proposed for `module=Billing`: the batch was rejected with "the message
    declares no such key", never naming U+043E, which the message's own check names."""
    memory = WorkingMemory()
    turn = memory.begin_turn("module=Billing", "support")
    outcome = memory.admit(turn, [cand("m\u043edule", "Billing", "module=Billing")], T0)
    (event,) = outcome.events
    (proposed,) = [r for r in event.reasons if r.key == "m\u043edule"]
    assert "U+043E CYRILLIC SMALL LETTER O" in proposed.detail
    assert "U+043E CYRILLIC SMALL LETTER O" in WorkingMemory().contract.explain_key("m\u043edule")  # the one wording
