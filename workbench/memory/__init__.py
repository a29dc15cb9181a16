"""Controlled working memory: the key=value contract, verified atomic admission, a bounded
store with provenance, and the event ledger. Imports neither Textual nor Agent Framework."""

from workbench.memory.contract import (
    ALLOWED_KEYS,
    MAX_EVIDENCE_CHARS,
    MAX_FACTS,
    MAX_MESSAGE_CHARS,
    MAX_VALUE_CHARS,
    ParsedMessage,
    Segment,
    declared_candidates,
    parse_declarations,
    parse_message,
)
from workbench.memory.ledger import EventKind, Ledger, MemoryEvent, Reason, ReasonCode
from workbench.memory.prompt import to_prompt_block
from workbench.memory.records import Extraction, Fact, FactCandidate, MemoryTurn
from workbench.memory.store import Outcome, Status, WorkingMemory

__all__ = [
    "ALLOWED_KEYS",
    "MAX_EVIDENCE_CHARS",
    "MAX_FACTS",
    "MAX_MESSAGE_CHARS",
    "MAX_VALUE_CHARS",
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
    "parse_declarations",
    "parse_message",
    "to_prompt_block",
]
