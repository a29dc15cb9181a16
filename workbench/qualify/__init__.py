"""`workbench qualify`: measure whether a model, through the writer, respects the key=value contract.
Scripted runs qualify no model; a report claims only what it measured."""

from workbench.qualify.runner import CaseResult, QualifyReport, QualifyStopped, run_qualify
from workbench.qualify.suite import Case, Suite, load_suite

__all__ = ["Case", "CaseResult", "QualifyReport", "QualifyStopped", "Suite", "load_suite", "run_qualify"]
