"""Run the contract suite against the configured writer model and report only what was measured."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace

from workbench.memory import (
    SEED,
    Contract,
    EventKind,
    FactCandidate,
    MemoryTurn,
    Outcome,
    ReasonCode,
    Status,
    WorkingMemory,
    declared_candidates,
)
from workbench.qualify.suite import Case, Suite, load_suite
from workbench.runtime.calls import CallLog, CallRecord
from workbench.runtime.config import WriterFormat
from workbench.runtime.deadline import CallTimedOut
from workbench.runtime.failures import rejects_request_format
from workbench.runtime.models import ModelSet
from workbench.runtime.usage import Usage, total_usage
from workbench.runtime.writer import MalformedOutput, ModelWriter

REFUSED = "refused by the server"  # a format probe's verdict: asked once (a refusal is never retried)
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
    host_decided: bool = False  # the host rejects this message whatever the model says: it scores no model
    timed_out: bool = False
    after_timeout: bool = False  # the server may still have been generating for the previous request
    # What the model's reply led to, where the host decided the case from the message alone (then the
    # outcome above is the host's, and this does not change the verdict).
    model_outcome: str = ""

    @property
    def passed(self) -> bool:
        return _as_expected(self.case, self.outcome, self.reasons, self.facts)


def _as_expected(case: Case, outcome: str, reasons: tuple[str, ...], facts: dict[str, str]) -> bool:
    if outcome != case.expect or facts != case.facts:
        return False
    return case.reason is None or case.reason in reasons


@dataclass
class QualifyReport:
    suite: Suite
    model: str
    requested_format: str
    results: list[CaseResult] = field(default_factory=list)
    formats: dict[str, str] = field(default_factory=dict)
    self_check: bool = False
    # The contract the user configured (workbench.toml, --keys) when it is not the seed's: the suite still
    # runs on the seed's, and the report says so.
    configured: Contract | None = None

    @property
    def contract_note(self) -> str | None:
        """What the report says when a contract of the user's own is configured; None under the seed's."""
        if self.configured is None:
            return None
        return (
            f"The suite is fixed and runs on the seed's contract ({SEED.describe()}), not the one configured "
            f"here ({self.configured.describe()}): its cases declare the seed's keys. The host checks a run "
            "under yours by the same rules."
        )

    @property
    def scored(self) -> list[CaseResult]:
        """The cases the model's output decides: only these score it."""
        return [r for r in self.results if not r.host_decided]

    @property
    def host_checks(self) -> list[CaseResult]:
        """The cases the host decides from the message alone (an empty reply passes them)."""
        return [r for r in self.results if r.host_decided]

    @property
    def passed(self) -> int:
        return sum(r.passed for r in self.scored)

    @property
    def all_passed(self) -> bool:
        return all(r.passed for r in self.results)

    @property
    def qualified(self) -> bool:
        """Only a model that was asked, and did what the contract says in every case, qualifies."""
        return not self.self_check and bool(self.results) and self.all_passed

    @property
    def usage(self) -> Usage | None:
        return total_usage(r.usage for r in self.results)


async def probe_formats(models: ModelSet, text: str, timeout: float) -> tuple[dict[str, str], bool]:
    """Which request formats the server accepts, one plain request each: "accepted", "refused"
    (the server rejected the format itself), or the failure in one line; and whether the last probe
    timed out (the server may still be generating for it when the first case is asked)."""
    found = {}
    timed_out = False
    for writer_format in CONCRETE_FORMATS:
        writer = ModelWriter.on(models, CallLog(), timeout=timeout, writer_format=writer_format, contract=SEED)
        timed_out = False
        try:
            await writer.propose(text)
            found[str(writer_format)] = "accepted"
        except MalformedOutput:
            found[str(writer_format)] = "accepted (reply not a valid extraction)"
        except Exception as exc:
            timed_out = _timed_out(exc)
            found[str(writer_format)] = REFUSED if rejects_request_format(exc) else models.explain(exc)
    return found, timed_out


def reported_usage(records: list[CallRecord]) -> Usage | None:
    """What the provider reported for these calls: the sum over those it answered (a refused format
    probe has nothing to report; a reply cut off at the token limit was answered, with its usage), or
    unknown when any answered call reported nothing, or none was answered."""
    answered = [r for r in records if r.finished or r.usage is not None]
    return total_usage(r.usage for r in answered) if answered else None


# the step running, its number (from 1), steps in all
Progress = Callable[[str, int, int], None]


class QualifyStopped(Exception):
    """The model could not be asked at all; the message names what to check."""


def _prepared(case: Case) -> WorkingMemory:
    """A fresh memory, under the seed's contract, after the case's setup."""
    memory = WorkingMemory(SEED)
    for text in case.setup:
        with memory.open_turn(text, "setup") as setup:
            memory.admit(setup.ticket, declared_candidates(text))
    return memory


def _summary(outcome: Outcome, memory: WorkingMemory, turn: MemoryTurn) -> tuple[str, tuple[str, ...], dict[str, str]]:
    event = outcome.events[0]
    reasons = tuple(str(r.code) for r in event.reasons) if event.kind is EventKind.REJECTED else ()
    facts = {f.key: f.value for f in memory.facts() if f.turn == turn.number} if outcome.applied else {}
    return {Status.APPLIED: "admitted"}.get(outcome.status, str(outcome.status)), reasons, facts


Decision = tuple[str, tuple[str, ...], dict[str, str]]  # outcome, reasons, facts


def host_decision(case: Case) -> Decision | None:
    """What the host decides from the message alone, when its checks give the expected outcome whatever
    extraction the model returns (an empty one, the exact one, or an invented fact); else None. Such a
    case (six keys, an unknown key) is decided by the host, so passing it says nothing about the model,
    and a reply that is malformed, empty or never came does not change it."""
    replies: tuple[list[FactCandidate], ...] = (
        [],
        declared_candidates(case.message),
        [FactCandidate(key="product", value="x", evidence="x")],
    )
    decisions = []
    for candidates in replies:
        memory = _prepared(case)
        with memory.open_turn(case.message, "host-check") as opened:
            outcome = memory.admit(opened.ticket, candidates)
        decisions.append(_summary(outcome, memory, opened.ticket))
        if not _as_expected(case, *decisions[-1]):
            return None
    return decisions[1]  # as the host words it for the message's own declarations


def _timed_out(exc: BaseException) -> bool:
    current: BaseException | None = exc
    while current is not None:
        if isinstance(current, TimeoutError | CallTimedOut) or type(current).__name__ == "APITimeoutError":
            return True
        current = current.__cause__ or current.__context__
    return False


async def _run_case(case: Case, writer: ModelWriter, calls: CallLog, models: ModelSet) -> CaseResult:
    origin = f"qualify:{case.id}"  # turn numbers repeat across the cases' fresh memories; ids do not
    memory = _prepared(case)
    started = time.perf_counter()
    detail = ""
    timed_out = False
    with memory.open_turn(case.message, origin) as opened:
        turn = opened.ticket
        try:
            candidates = await writer.propose(case.message)
        except MalformedOutput as exc:
            outcome = memory.reject(turn, ReasonCode.MALFORMED_OUTPUT, str(exc))
        except Exception as exc:
            detail = models.explain(exc)
            timed_out = _timed_out(exc)
            outcome = memory.abandon(turn, detail)
        else:
            outcome = memory.admit(turn, candidates)
    latency = (time.perf_counter() - started) * 1000
    event = outcome.events[0]
    shown, reasons, facts = _summary(outcome, memory, turn)
    detail = detail or (event.describe() if event.kind is EventKind.REJECTED else "")
    model_outcome = ""
    if (decided := host_decision(case)) is not None:
        model_outcome = shown + (f" ({', '.join(reasons)})" if reasons else "")
        if (shown, reasons, facts) != decided:
            detail = f"the model's reply did not decide this case: {detail or model_outcome}"
        shown, reasons, facts = decided
    return CaseResult(
        case=case,
        outcome=shown,
        reasons=reasons,
        facts=facts,
        writer_format=str(writer.format),
        latency_ms=latency,
        usage=reported_usage(calls.records(origin=origin)),
        detail=detail,
        host_decided=decided is not None,
        timed_out=timed_out,
        model_outcome=model_outcome,
    )


async def run_qualify(
    models: ModelSet,
    *,
    timeout: float = 120.0,
    suite: Suite | None = None,
    progress: Progress | None = None,
    configured: Contract = SEED,
) -> QualifyReport:
    """Every case of the suite through one writer with the configured format (auto starts at the first
    format the probe did not see refused, so no case's latency holds a refused request, then keeps what
    it found). The host's verification is the app's own. On the built-in script the
    run is a self-check of the suite (do its expectations agree with the contract?), not a qualification.
    The suite is fixed, on the seed's contract, whatever contract is `configured` (the report says so)."""
    suite = suite or load_suite()
    calls = CallLog()
    writer = ModelWriter.on(models, calls, timeout=timeout, contract=SEED)
    report = QualifyReport(
        suite,
        models.writer_label,
        str(models.writer_format),
        self_check=models.scripted,
        configured=None if configured.is_seed else configured,
    )
    steps = len(suite.cases) + (0 if report.self_check else 1)
    probe_timed_out = False
    if not report.self_check:  # the built-in script has no server whose formats could be probed
        if progress is not None:
            progress("probing request formats", 1, steps)
        report.formats, probe_timed_out = await probe_formats(models, suite.format_probe, timeout)
        failures = [v for v in report.formats.values() if not v.startswith(("accepted", "refused"))]
        if len(failures) == len(CONCRETE_FORMATS):
            raise QualifyStopped(failures[0])
        if models.writer_format is WriterFormat.AUTO:  # the probe negotiated: no case asks a refused format again
            writer.format = next(
                (f for f in CONCRETE_FORMATS if report.formats.get(str(f)) != REFUSED), CONCRETE_FORMATS[-1]
            )
    for number, case in enumerate(suite.cases, steps - len(suite.cases) + 1):
        if progress is not None:
            progress(f"case {case.id}", number, steps)
        result = await _run_case(case, writer, calls, models)
        if report.results[-1].timed_out if report.results else probe_timed_out:
            result = replace(result, after_timeout=True)
        report.results.append(result)
    return report
