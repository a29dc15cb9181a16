"""Invariants over random sequences of turns, admissions and forgets."""

import itertools

from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import Bundle, RuleBasedStateMachine, consumes, invariant, rule

from tests.memory.test_forget import everything_visible
from workbench.memory import SEED, Contract, FactCandidate, Status, WorkingMemory, declared_candidates

# A team's contract: fewer facts and shorter values than the seed's, keys the seed does not know.
TEAM = Contract(("service", "region", "owner"), max_facts=2, max_value_chars=10)
KEYS = [*SEED.keys, *TEAM.keys, "password", "Module"]
_serial = itertools.count()
words = st.text(alphabet="ab =xyzé漢\u200b", min_size=0, max_size=6)


@st.composite
def messages(draw, keys=KEYS):
    """A message of declarations (each value unique, so it can be traced) and free text."""
    parts = []
    for key in draw(st.lists(st.sampled_from(keys), max_size=7)):
        parts.append(f"{key}={draw(words)}⟨{next(_serial)}⟩")
    parts += draw(st.lists(st.sampled_from(["Where are the logs?", "thanks", "a b = c"]), max_size=2))
    return "; ".join(draw(st.permutations(parts)))


def mutate(candidates: list[FactCandidate], how: str, text: str) -> list[FactCandidate]:
    if how == "drop" and candidates:
        return candidates[1:]
    if how == "paraphrase" and candidates:
        first = candidates[0]
        return [first.model_copy(update={"evidence": first.evidence.replace("=", " = ")}), *candidates[1:]]
    if how == "guess":
        return [*candidates, FactCandidate(key="customer", value="Contoso", evidence=text[:20] or "x")]
    if how == "wrong_value" and candidates:
        first = candidates[0]
        return [first.model_copy(update={"value": first.value + "!"}), *candidates[1:]]
    return candidates


class MemoryMachine(RuleBasedStateMachine):
    turns = Bundle("turns")
    contract = SEED

    def __init__(self):
        super().__init__()
        self.memory = WorkingMemory(self.contract)
        self.texts: dict[int, str] = {}
        self.held: dict[str, set[str]] = {}

    def snapshot(self):
        return self.memory.facts(), self.memory.epoch, self.memory.prompt_block()

    @rule(target=turns, text=messages())
    def begin(self, text):
        turn = self.memory.begin_turn(text)
        self.texts[turn.number] = text
        return turn

    @rule(turn=consumes(turns), wide=st.booleans())
    def admit_host_candidates(self, turn, wide):
        candidates = declared_candidates(turn.user_text)
        if wide and len(turn.user_text) <= 512:
            candidates = [c.model_copy(update={"evidence": turn.user_text}) for c in candidates]
        before = self.snapshot()
        outcome = self.memory.admit(turn, candidates)
        if outcome.status in (Status.REJECTED, Status.STALE):
            assert self.snapshot() == before
        for event in outcome.events:
            if event.key and event.value:
                self.held.setdefault(event.key, set()).add(event.value)

    @rule(turn=consumes(turns), how=st.sampled_from(["drop", "paraphrase", "guess", "wrong_value"]))
    def admit_bad_candidates(self, turn, how):
        honest = declared_candidates(turn.user_text)
        bad = mutate(honest, how, turn.user_text)
        before = self.snapshot()
        outcome = self.memory.admit(turn, bad)
        if bad != honest:
            assert outcome.status in (Status.REJECTED, Status.STALE)
            assert self.snapshot() == before

    @rule(key=st.sampled_from(KEYS))
    def forget_key(self, key):
        self.memory.erase(self.memory.plan(key))
        visible = everything_visible(self.memory)
        for value in self.held.pop(key, set()):
            assert value not in visible

    @rule()
    def forget_all(self):
        self.memory.erase(self.memory.plan(None))
        visible = everything_visible(self.memory)
        assert "⟨" not in visible  # no declared value survives anywhere
        self.held.clear()

    @invariant()
    def store_is_bounded_and_quoted(self):
        facts = self.memory.facts()
        assert len(facts) <= self.contract.max_facts
        assert len({f.key for f in facts}) == len(facts)
        for fact in facts:
            assert self.contract.allows(fact.key) and len(fact.value) <= self.contract.max_value_chars
            assert fact.evidence in self.texts[fact.turn]
            assert fact.value in fact.evidence
            assert fact.value.strip()


class TeamMemoryMachine(MemoryMachine):
    """The same invariants under a team's contract: its keys, its bounds, the seed's keys unknown."""

    contract = TEAM

    @rule(target=MemoryMachine.turns, text=messages([*TEAM.keys, "module", "password"]))
    def begin(self, text):  # mostly the team's keys, so its batches are admitted too
        return super().begin(text)


MemoryMachine.TestCase.settings = settings(max_examples=150, stateful_step_count=30, deadline=None)
TeamMemoryMachine.TestCase.settings = settings(max_examples=100, stateful_step_count=30, deadline=None)
TestMemoryMachine = MemoryMachine.TestCase
TestTeamMemoryMachine = TeamMemoryMachine.TestCase
