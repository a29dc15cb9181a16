"""The host's checks: store rules for any batch, and the match against the message's declarations.

Each function returns reasons and never raises for bad input: a failure is data to show.
"""

from __future__ import annotations

from collections.abc import Sequence

from workbench.memory.contract import MAX_MESSAGE_CHARS, Contract, ParsedMessage, parse_message, unencodable
from workbench.memory.ledger import Reason, ReasonCode
from workbench.memory.records import Fact, FactCandidate, declared_candidates
from workbench.memory.shown import quoted


def check_message(user_text: str) -> Reason | None:
    """Whether a message can be read at all: bounded, and encodable (checked before any model call)."""
    if problem := unencodable(user_text):
        return Reason(ReasonCode.UNENCODABLE_TEXT, None, problem)
    if len(user_text) > MAX_MESSAGE_CHARS:
        return Reason(
            ReasonCode.MESSAGE_TOO_LONG,
            None,
            f"the message has {len(user_text):,} characters; at most {MAX_MESSAGE_CHARS:,} are read",
        )
    return None


def _value_problem(key: str, value: str, contract: Contract) -> Reason | None:
    if not value.strip():
        return Reason(ReasonCode.EMPTY_VALUE, key, "the value is empty")
    if len(value) > (most := contract.max_value_chars):
        detail = f"the value has {len(value):,} characters; at most {most:,}"
        return Reason(ReasonCode.VALUE_TOO_LONG, key, detail, limit=most)
    return None


def _candidate_problem(user_text: str, candidate: FactCandidate, seen: set[str], contract: Contract) -> Reason | None:
    key, value, evidence = candidate.key, candidate.value, candidate.evidence
    if not contract.allows(key):
        return Reason(ReasonCode.UNKNOWN_KEY, key, contract.explain_key(key))
    if key in seen:
        return Reason(ReasonCode.DUPLICATE_KEY, key, "the batch proposes this key more than once")
    if problem := _value_problem(key, value, contract):
        return problem
    if not evidence.strip():
        return Reason(ReasonCode.EVIDENCE_MISSING, key, "no quotation of the message was given")
    if len(evidence) > (most := contract.max_evidence_chars):
        detail = f"the quotation has {len(evidence):,} characters; at most {most:,}"
        return Reason(ReasonCode.EVIDENCE_TOO_LONG, key, detail, limit=most)
    if evidence not in user_text:
        return Reason(
            ReasonCode.EVIDENCE_NOT_IN_MESSAGE,
            key,
            f"the quotation {quoted(evidence, contract.max_evidence_chars)} is not an exact part of the message",
        )
    if value not in evidence:
        return Reason(
            ReasonCode.VALUE_NOT_IN_EVIDENCE,
            key,
            f"the quotation {quoted(evidence, contract.max_evidence_chars)} does not contain the value "
            f"{quoted(value, contract.max_value_chars)}",
        )
    return None


def check_candidates(user_text: str, candidates: Sequence[FactCandidate], contract: Contract) -> list[Reason]:
    """The store rules: at most `max_facts` candidates, unique allowed keys, bounded non-blank values
    and quotations, each quotation an exact part of the message that contains its value."""
    reasons: list[Reason] = []
    if len(candidates) > contract.max_facts:
        reasons.append(
            Reason(
                ReasonCode.TOO_MANY_FACTS,
                None,
                f"{len(candidates)} candidates; at most {contract.max_facts} per batch",
                limit=contract.max_facts,
            )
        )
    seen: set[str] = set()
    for candidate in candidates:
        if problem := _candidate_problem(user_text, candidate, seen, contract):
            reasons.append(problem)
        seen.add(candidate.key)
    return reasons


def check_declarations(parsed: ParsedMessage, candidates: Sequence[FactCandidate], contract: Contract) -> list[Reason]:
    """The host check: the candidates are exactly the message's declarations, key for key and
    value for value, and the declarations themselves are admissible."""
    reasons: list[Reason] = [
        Reason(ReasonCode.UNKNOWN_KEY, key, f"declared in the message, but {contract.explain_key(key)}")
        for key in parsed.lookalike_keys
    ]
    declared = parsed.declarations
    if len(declared) > contract.max_facts:
        reasons.append(
            Reason(
                ReasonCode.TOO_MANY_FACTS,
                None,
                f"the message declares {len(declared)} keys; at most {contract.max_facts}",
                limit=contract.max_facts,
            )
        )
    proposed = {c.key for c in candidates}
    for candidate in candidates:
        if candidate.key not in declared:
            foreign = contract.foreign_characters(candidate.key)  # a look-alike of a key the message declares
            detail = "the message declares no such key" + (f": {foreign}" if foreign else "")
            reasons.append(
                Reason(ReasonCode.DECLARATION_MISMATCH, candidate.key, f"{detail}: no guessed fact is admitted")
            )
        elif candidate.value != declared[candidate.key]:
            reasons.append(
                Reason(
                    ReasonCode.DECLARATION_MISMATCH,
                    candidate.key,
                    f"the proposed value {quoted(candidate.value, contract.max_value_chars)} is not the declared "
                    f"{quoted(declared[candidate.key], contract.max_value_chars)}",
                )
            )
    for key, value in declared.items():
        if key in proposed:
            continue
        if not contract.allows(key):
            reason = f"declared in the message, but {contract.explain_key(key)}"
            reasons.append(Reason(ReasonCode.UNKNOWN_KEY, key, reason))
        elif problem := _value_problem(key, value, contract):
            reasons.append(problem)
        else:
            reasons.append(
                Reason(
                    ReasonCode.DECLARATION_MISMATCH, key, "the message declares this key but no candidate carries it"
                )
            )
    return reasons


def first_per_key(reasons: list[Reason]) -> tuple[Reason, ...]:
    """One reason per failed candidate (the first found), and each batch-level code once."""
    seen: set[str | ReasonCode] = set()
    kept: list[Reason] = []
    for reason in reasons:
        mark = reason.key if reason.key is not None else reason.code
        if mark not in seen:
            seen.add(mark)
            kept.append(reason)
    return tuple(kept)


def admissible_as_declared(user_text: str, contract: Contract) -> bool:
    """Whether admission would take the message's declarations as the host reads them (no writer):
    readable, matching its declarations exactly, passing every store rule. What the drift lab's
    expectations walk with, so a story is judged by the same rules as the app."""
    if check_message(user_text) is not None:
        return False
    candidates = declared_candidates(user_text)
    parsed = parse_message(user_text)
    return not (check_declarations(parsed, candidates, contract) or check_candidates(user_text, candidates, contract))


def stored_problem(facts: Sequence[Fact], contract: Contract) -> str | None:
    """The first rule that stored facts break, in words, or None: what a fact read back (a resumed
    file) must satisfy, as admission made it under `contract`. At most `max_facts` facts, one per
    allowed key, values and quotations bounded, each quotation holding its value, each fact's own
    declaration declaring exactly its key with its value, and quotation and declaration parts of one
    message (one holds the other)."""
    if len(facts) > contract.max_facts:
        return f"{len(facts)} facts; at most {contract.max_facts}"
    seen: set[str] = set()
    for fact in facts:
        candidate = FactCandidate(key=fact.key, value=fact.value, evidence=fact.evidence)
        if problem := _candidate_problem(fact.evidence, candidate, seen, contract):
            return f"{quoted(fact.key, 40)}: {problem.detail}"
        seen.add(fact.key)
        if parse_message(fact.declaration).declarations.get(fact.key) != fact.value:
            return f"{quoted(fact.key, 40)}: its declaration {quoted(fact.declaration, 80)} does not declare its value"
        if fact.declaration not in fact.evidence and fact.evidence not in fact.declaration:
            return f"{quoted(fact.key, 40)}: its quotation and its declaration are not parts of one message"
    return None
