"""Invariants over random sequences of turns, admissions and forgets."""

import itertools

from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import Bundle, RuleBasedStateMachine, consumes, invariant, rule

from tests.memory.test_forget import everything_visible
from workbench.memory import ALLOWED_KEYS, MAX_FACTS, FactCandidate, Status, WorkingMemory, declared_candidates

KEYS = [*sorted(ALLOWED_KEYS), "password", "Module"]
_serial = itertools.count()
words = st.text(alphabet="ab =xyzé漢\u200b", min_size=0, max_size=6)


@st.composite
def messages(draw):
    """A message of declarations (each value unique, so it can be traced) and free text."""
    parts = []
    for key in draw(st.lists(st.sampled_from(KEYS), max_size=7)):
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

    def __init__(self):
        super().__init__()
        self.memory = WorkingMemory()
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
        self.memory.forget(self.memory.plan(key))
        visible = everything_visible(self.memory)
        for value in self.held.pop(key, set()):
            assert value not in visible

    @rule()
    def forget_all(self):
        self.memory.forget(self.memory.plan(None))
        visible = everything_visible(self.memory)
        assert "⟨" not in visible  # no declared value survives anywhere
        self.held.clear()

    @invariant()
    def store_is_bounded_and_quoted(self):
        facts = self.memory.facts()
        assert len(facts) <= MAX_FACTS
        assert len({f.key for f in facts}) == len(facts)
        for fact in facts:
            assert fact.key in ALLOWED_KEYS
            assert fact.evidence in self.texts[fact.turn]
            assert fact.value in fact.evidence
            assert fact.value.strip()


MemoryMachine.TestCase.settings = settings(max_examples=150, stateful_step_count=30, deadline=None)
TestMemoryMachine = MemoryMachine.TestCase
