"""The drift lab: one fixed chronology through six context policies, scored on what each
request contains, with honest accounting. Knows nothing of Textual."""

from workbench.drift.chronology import Chronology, Expectation, Step, load_chronology
from workbench.drift.lab import Accounting, DriftReport, ProbeScore, Retained, run_drift
from workbench.drift.policies import MAX_SUMMARY_CHARS, POLICIES, DriftStopped

__all__ = [
    "MAX_SUMMARY_CHARS",
    "POLICIES",
    "Accounting",
    "Chronology",
    "DriftReport",
    "DriftStopped",
    "Expectation",
    "ProbeScore",
    "Retained",
    "Step",
    "load_chronology",
    "run_drift",
]
