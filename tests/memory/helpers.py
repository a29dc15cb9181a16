from datetime import UTC, datetime

from workbench.memory import FactCandidate, WorkingMemory, declared_candidates

T0 = datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)


def cand(key: str, value: str, evidence: str | None = None) -> FactCandidate:
    return FactCandidate(key=key, value=value, evidence=evidence if evidence is not None else f"{key}={value}")


def say(memory: WorkingMemory, text: str, origin: str = "support"):
    """One user turn admitted with the host's own candidates."""
    turn = memory.begin_turn(text, origin)
    return memory.admit(turn, declared_candidates(text), T0)


def state(memory: WorkingMemory):
    return memory.facts(), memory.epoch, memory.prompt_block()
