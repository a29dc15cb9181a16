"""A team's own contract: its keys, facts and value length replace the seed's in admission, eviction,
the forget of everything and what a restart reads back; the seed's keys are then unknown keys."""

from datetime import UTC, datetime

import pytest

from workbench.memory import (
    SEED,
    Contract,
    ContractError,
    EventKind,
    ReasonCode,
    Status,
    WorkingMemory,
    declared_candidates,
)
from workbench.memory.rules import admissible_as_declared, stored_problem

TEAM = Contract(("service", "region", "owner"), max_facts=2, max_value_chars=10)
WHEN = datetime(2026, 12, 3, 9, 0, tzinfo=UTC)


def admit(memory: WorkingMemory, text: str):
    turn = memory.begin_turn(text, origin="support")
    return memory.admit(turn, declared_candidates(text), WHEN)


def test_the_seed_is_the_default_and_keeps_todays_values():
    assert WorkingMemory().contract == SEED and SEED.is_seed
    assert (SEED.max_facts, SEED.max_value_chars, SEED.max_evidence_chars) == (5, 256, 512)
    assert "module" in SEED.keys and not TEAM.is_seed
    assert TEAM.keys == ("owner", "region", "service")  # sorted, one of each
    assert Contract(("b", "a", "b")).keys == ("a", "b")


@pytest.mark.parametrize(
    ("fields", "problem"),
    [
        ({"keys": ()}, "a contract declares 1 to 32 keys, not 0"),
        ({"keys": tuple(f"k{n}" for n in range(33))}, "a contract declares 1 to 32 keys, not 33"),
        ({"keys": ("a b",)}, 'the key "a b" is not an ASCII identifier of at most 32 characters'),
        ({"keys": ("régión",)}, 'the key "régión" is not an ASCII identifier'),
        ({"keys": ("1st",)}, "not starting with a digit"),
        ({"keys": ("k" * 33,)}, "is not an ASCII identifier of at most 32 characters"),
        ({"keys": ("service", "all")}, 'the key "all" is reserved: a chronology\'s "forget": "all" forgets everything'),
        ({"keys": ("a",), "max_facts": 0}, "max_facts is a whole number from 1 to 20, not 0"),
        ({"keys": ("a",), "max_facts": 21}, "max_facts is a whole number from 1 to 20, not 21"),
        ({"keys": ("a",), "max_facts": True}, "max_facts is a whole number from 1 to 20, not True"),
        ({"keys": ("a",), "max_value_chars": 0}, "max_value_chars is a whole number from 1 to 4,000, not 0"),
        ({"keys": ("a",), "max_value_chars": 4001}, "max_value_chars is a whole number from 1 to 4,000, not 4001"),
    ],
)
def test_a_contract_out_of_bounds_is_refused_in_words(fields, problem):
    with pytest.raises(ContractError) as raised:
        Contract(**fields)
    assert problem in str(raised.value)


def test_the_bounds_themselves_make_a_contract():
    widest = Contract(tuple(f"k{n}" for n in range(32)), max_facts=20, max_value_chars=4000)
    assert len(widest.keys) == 32 and widest.max_evidence_chars == 4256
    assert Contract(("k" * 32,), max_facts=1, max_value_chars=1).max_facts == 1


def test_the_teams_keys_are_admitted_and_the_seeds_are_unknown():
    memory = WorkingMemory(TEAM)
    assert admit(memory, "service=billing; region=eu-west").status is Status.APPLIED
    assert [(f.key, f.value) for f in memory.facts()] == [("region", "eu-west"), ("service", "billing")]
    rejected = admit(memory, "module=Billing")
    assert rejected.status is Status.REJECTED
    (reason,) = rejected.events[0].reasons
    assert (reason.code, reason.key) == (ReasonCode.UNKNOWN_KEY, "module")
    assert "(allowed: owner, region, service)" in reason.detail
    assert admissible_as_declared("owner=ops", TEAM) and not admissible_as_declared("owner=ops", SEED)
    assert admissible_as_declared("module=Billing", SEED) and not admissible_as_declared("module=Billing", TEAM)


def test_the_teams_limits_bound_values_batches_and_the_store():
    memory = WorkingMemory(TEAM)
    too_long = admit(memory, "owner=abcdefghijk")
    (reason,) = too_long.events[0].reasons
    assert (reason.code, reason.detail) == (ReasonCode.VALUE_TOO_LONG, "the value has 11 characters; at most 10")
    assert reason.generic == "the value is longer than 10 characters"
    too_many = admit(memory, "owner=a; region=b; service=c")
    codes = {r.code: r for r in too_many.events[0].reasons}
    assert codes[ReasonCode.TOO_MANY_FACTS].generic == "one message may carry at most 2 facts"
    admit(memory, "owner=ops")
    admit(memory, "region=eu")
    evicting = admit(memory, "service=api")
    evicted = [e for e in evicting.events if e.kind is EventKind.EVICTED]
    assert [e.key for e in evicted] == ["owner"] and len(memory.facts()) == 2
    assert "evicted: the store holds at most 2 facts and it was the oldest." in evicted[0].describe()


def test_a_redacted_reason_keeps_the_contracts_limit_and_no_value():
    memory = WorkingMemory(TEAM)
    (reason,) = admit(memory, "owner=abcdefghijk").events[0].reasons
    assert reason.redacted().detail == "the value is longer than 10 characters"


def test_forgetting_everything_plans_the_teams_keys():
    memory = WorkingMemory(TEAM)
    admit(memory, "service=api")
    plan = memory.plan(None)
    assert plan.keys == frozenset(TEAM.keys) and plan.values == {"api"}


def test_saved_memory_carries_its_contract_and_is_read_back_by_it():
    memory = WorkingMemory(TEAM)
    admit(memory, "service=api; owner=ops")
    saved = memory.saved()
    assert saved.contract == TEAM
    assert stored_problem(saved.facts, TEAM) is None
    assert stored_problem(saved.facts, SEED) == '"owner": not an allowed key (allowed: ' + ", ".join(SEED.keys) + ")"
    restored = WorkingMemory.restored(saved)
    assert restored.contract == TEAM and restored.facts() == memory.facts()


def test_memory_is_reopened_only_under_a_contract_that_admits_everything_it_saved():
    saved = WorkingMemory(TEAM).saved()
    wider = Contract((*TEAM.keys, "team"), max_facts=3, max_value_chars=10)
    assert WorkingMemory.restored(saved, wider).contract == wider
    for narrower in (
        SEED,
        Contract(("service", "region"), max_facts=2, max_value_chars=10),
        Contract(TEAM.keys, max_facts=1),
    ):
        with pytest.raises(ValueError, match=r"it was saved under the contract \(keys owner, region, service;"):
            WorkingMemory.restored(saved, narrower)
        assert narrower.cannot_open(TEAM) is not None and narrower.describe() in str(narrower.cannot_open(TEAM))
