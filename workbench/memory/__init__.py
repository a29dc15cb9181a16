"""Controlled working memory: the key=value contract, verified atomic admission, a bounded
store with provenance, and the event ledger. Imports neither Textual nor Agent Framework."""

from __future__ import annotations

from typing import TYPE_CHECKING

from workbench.lazy import lazy_exports

if TYPE_CHECKING:
    from workbench.memory.contract import (
        ALLOWED_KEYS,
        MAX_EVIDENCE_CHARS,
        MAX_FACTS,
        MAX_MESSAGE_CHARS,
        MAX_VALUE_CHARS,
        SEED,
        Contract,
        ContractError,
        ParsedMessage,
        Segment,
        declares_anything,
        parse_declarations,
        parse_message,
    )
    from workbench.memory.ledger import EventKind, Ledger, MemoryEvent, Reason, ReasonCode
    from workbench.memory.outcome import Outcome, Status
    from workbench.memory.prompt import to_prompt_block
    from workbench.memory.records import Extraction, Fact, FactCandidate, MemoryTurn, declared_candidates
    from workbench.memory.store import WorkingMemory

_EXPORTS = {
    "ALLOWED_KEYS": "workbench.memory.contract",
    "MAX_EVIDENCE_CHARS": "workbench.memory.contract",
    "MAX_FACTS": "workbench.memory.contract",
    "MAX_MESSAGE_CHARS": "workbench.memory.contract",
    "MAX_VALUE_CHARS": "workbench.memory.contract",
    "SEED": "workbench.memory.contract",
    "Contract": "workbench.memory.contract",
    "ContractError": "workbench.memory.contract",
    "ParsedMessage": "workbench.memory.contract",
    "Segment": "workbench.memory.contract",
    "declares_anything": "workbench.memory.contract",
    "parse_declarations": "workbench.memory.contract",
    "parse_message": "workbench.memory.contract",
    "EventKind": "workbench.memory.ledger",
    "Ledger": "workbench.memory.ledger",
    "MemoryEvent": "workbench.memory.ledger",
    "Reason": "workbench.memory.ledger",
    "ReasonCode": "workbench.memory.ledger",
    "to_prompt_block": "workbench.memory.prompt",
    "Extraction": "workbench.memory.records",
    "Fact": "workbench.memory.records",
    "FactCandidate": "workbench.memory.records",
    "MemoryTurn": "workbench.memory.records",
    "declared_candidates": "workbench.memory.records",
    "Outcome": "workbench.memory.outcome",
    "Status": "workbench.memory.outcome",
    "WorkingMemory": "workbench.memory.store",
}
__all__ = [
    "ALLOWED_KEYS",
    "MAX_EVIDENCE_CHARS",
    "MAX_FACTS",
    "MAX_MESSAGE_CHARS",
    "MAX_VALUE_CHARS",
    "SEED",
    "Contract",
    "ContractError",
    "EventKind",
    "Extraction",
    "Fact",
    "FactCandidate",
    "Ledger",
    "MemoryEvent",
    "MemoryTurn",
    "Outcome",
    "ParsedMessage",
    "Reason",
    "ReasonCode",
    "Segment",
    "Status",
    "WorkingMemory",
    "declared_candidates",
    "declares_anything",
    "parse_declarations",
    "parse_message",
    "to_prompt_block",
]


__getattr__ = lazy_exports(__name__, _EXPORTS, globals())
