"""The drift lab: a chronology through the context policies, scored on what each request
contains and what each answer says, with honest accounting. Knows nothing of Textual."""

from workbench.chronology import (
    Chronology,
    ChronologyError,
    Expectation,
    Step,
    load_chronology,
    load_chronology_file,
    parse_chronology,
)
from workbench.drift.catalog import UnknownPolicy
from workbench.drift.lab import (
    Accounting,
    AnswerScore,
    DriftReport,
    Failure,
    ProbeScore,
    Retained,
    Stop,
    run_drift,
)
from workbench.drift.policies import MAX_SUMMARY_CHARS, POLICIES, PolicyFailed

__all__ = [
    "MAX_SUMMARY_CHARS",
    "POLICIES",
    "Accounting",
    "AnswerScore",
    "Chronology",
    "ChronologyError",
    "DriftReport",
    "Expectation",
    "Failure",
    "PolicyFailed",
    "ProbeScore",
    "Retained",
    "Step",
    "Stop",
    "UnknownPolicy",
    "load_chronology",
    "load_chronology_file",
    "parse_chronology",
    "run_drift",
]
