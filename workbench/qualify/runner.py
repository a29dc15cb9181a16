"""Run the contract suite against the configured writer model and report only what was measured."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field

from workbench.memory import EventKind, ReasonCode, Status, WorkingMemory, declared_candidates
from workbench.qualify.suite import Case, Suite, load_suite
from workbench.runtime.calls import CallLog, CallRecord, current_turn
from workbench.runtime.failures import explain_failure, rejects_request_format
from workbench.runtime.models import ModelSet
from workbench.runtime.usage import Usage, total_usage
from workbench.runtime.writer import MalformedOutput, ModelWriter, WriterFormat

CONCRETE_FORMATS = (
    WriterFormat.JSON_SCHEMA,
    WriterFormat.JSON_OBJECT_SCHEMA,
    WriterFormat.JSON_OBJECT,
    WriterFormat.PROMPT,
)


@dataclass(frozen=True)
class CaseResult:
    case: Case
    outcome: str
    reasons: tuple[str, ...]
    facts: dict[str, str]
    writer_format: str
    latency_ms: float
    usage: Usage | None
    detail: str = ""

    @property
    def passed(self) -> bool:
        if self.outcome != self.case.expect or self.facts != self.case.facts:
            return False
        return self.case.reason is None or self.case.reason in self.reasons


@dataclass
class QualifyReport:
    suite: Suite
    model: str
    requested_format: str
    results: list[CaseResult] = field(default_factory=list)
    formats: dict[str, str] = field(default_factory=dict)
    self_check: bool = False

    @property
    def passed(self) -> int:
        return sum(r.passed for r in self.results)

    @property
    def qualified(self) -> bool:
        """Only a model that was asked, and did what the contract says in every case, qualifies."""
        return not self.self_check and bool(self.results) and self.passed == len(self.results)

    @property
    def usage(self) -> Usage | None:
        return total_usage(r.usage for r in self.results)


async def probe_formats(models: ModelSet, text: str, timeout: float) -> dict[str, str]:
    """Which request formats the server accepts, one plain request each: "accepted", "refused"
    (the server rejected the format itself), or the failure in one line."""
    found = {}
    for writer_format in CONCRETE_FORMATS:
        writer = ModelWriter(
            models.writer_client,
            CallLog(),
            models.writer_label,
            timeout=timeout,
            writer_format=writer_format,
            bound=models.bound,
        )
        try:
            await writer.propose(text)
            found[str(writer_format)] = "accepted"
        except MalformedOutput:
            found[str(writer_format)] = "accepted (reply not a valid extraction)"
        except Exception as exc:
            found[str(writer_format)] = (
                "refused by the server"
                if rejects_request_format(exc)
                else explain_failure(exc, base_url=models.base_url, secrets=models.secrets)
            )
    return found


def reported_usage(records: list[CallRecord]) -> Usage | None:
    """What the provider reported for these calls: the sum over those it answered (a refused format
    probe has nothing to report), or unknown when any answered call reported nothing, or none was answered."""
    answered = [r for r in records if r.finished]
    return total_usage(r.usage for r in answered) if answered else None


# the step running, its number (from 1), steps in all
Progress = Callable[[str, int, int], None]


class QualifyStopped(Exception):
    """The model could not be asked at all; the message names what to check."""


async def _run_case(case: Case, writer: ModelWriter, calls: CallLog, models: ModelSet) -> CaseResult:
    memory = WorkingMemory()
    for text in case.setup:
        memory.admit(memory.begin_turn(text, "setup"), declared_candidates(text))
    origin = f"qualify:{case.id}"  # turn numbers repeat across the cases' fresh memories; ids do not
    turn = memory.begin_turn(case.message, origin)
    token = current_turn.set(turn)
    started = time.perf_counter()
    detail = ""
    try:
        try:
            candidates = await writer.propose(case.message)
        except MalformedOutput as exc:
            outcome = memory.reject(turn, ReasonCode.MALFORMED_OUTPUT, str(exc))
        except Exception as exc:
            detail = explain_failure(exc, base_url=models.base_url, secrets=models.secrets)
            outcome = memory.abandon(turn, detail)
        else:
            outcome = memory.admit(turn, candidates)
    finally:
        current_turn.reset(token)
    latency = (time.perf_counter() - started) * 1000
    event = outcome.events[0]
    reasons = tuple(str(r.code) for r in event.reasons) if event.kind is EventKind.REJECTED else ()
    return CaseResult(
        case=case,
        outcome={Status.APPLIED: "admitted"}.get(outcome.status, str(outcome.status)),
        reasons=reasons,
        facts={f.key: f.value for f in memory.facts() if f.turn == turn.number} if outcome.applied else {},
        writer_format=str(writer.format),
        latency_ms=latency,
        usage=reported_usage(calls.records(origin=origin)),
        detail=detail or (event.describe() if event.kind is EventKind.REJECTED else ""),
    )


async def run_qualify(
    models: ModelSet, *, timeout: float = 120.0, suite: Suite | None = None, progress: Progress | None = None
) -> QualifyReport:
    """Every case of the suite through one writer with the configured format (auto negotiates once,
    then keeps what it found). The host's verification is the app's own. On the built-in script the
    run is a self-check of the suite (do its expectations agree with the contract?), not a qualification."""
    suite = suite or load_suite()
    calls = CallLog()
    writer = ModelWriter(
        models.writer_client,
        calls,
        models.writer_label,
        timeout=timeout,
        writer_format=models.writer_format,
        bound=models.bound,
    )
    report = QualifyReport(suite, models.writer_label, str(models.writer_format), self_check=models.scripted)
    steps = len(suite.cases) + (0 if report.self_check else 1)
    if not report.self_check:  # the built-in script has no server whose formats could be probed
        if progress is not None:
            progress("probing request formats", 1, steps)
        report.formats = await probe_formats(models, suite.format_probe, timeout)
        failures = [v for v in report.formats.values() if not v.startswith(("accepted", "refused"))]
        if len(failures) == len(CONCRETE_FORMATS):
            raise QualifyStopped(failures[0])
    for number, case in enumerate(suite.cases, steps - len(suite.cases) + 1):
        if progress is not None:
            progress(f"case {case.id}", number, steps)
        report.results.append(await _run_case(case, writer, calls, models))
    return report
