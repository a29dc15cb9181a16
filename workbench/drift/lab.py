"""Run a chronology through every policy and score what each request contained and what each answer
said. A stop keeps everything measured before it."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field

from workbench.drift.agentmem_policy import NEEDS_LOOP, NEEDS_MODEL
from workbench.drift.catalog import build_policies
from workbench.drift.chronology import FORGET_ALL, Chronology, Expectation, load_chronology
from workbench.drift.policies import DriftStopped, Policy
from workbench.heap import paced_garbage_collection
from workbench.memory import MemoryTurn
from workbench.memory.turns import acting_for
from workbench.runtime.calls import CallLog, CallRecord
from workbench.runtime.failures import explain_failure
from workbench.runtime.models import ModelSet
from workbench.runtime.scripted import SCRIPTED_LABEL
from workbench.runtime.usage import Usage, estimate_tokens, total_usage


@dataclass(frozen=True)
class AnswerScore:
    """Which expected texts an answer contains and which forbidden ones it revived, compared
    case-insensitively. Exact text, no judge."""

    expected: dict[str, bool]
    forbidden: dict[str, bool]

    @property
    def missing(self) -> list[str]:
        return [text for text, found in self.expected.items() if not found]

    @property
    def revived(self) -> list[str]:
        return [text for text, found in self.forbidden.items() if found]


@dataclass(frozen=True)
class ProbeScore:
    """What one policy's request held at one probe, per key and per value, and what came back."""

    request_chars: int
    current: dict[str, bool]
    superseded: dict[str, bool]
    prohibition: bool | None
    forgotten: dict[str, bool]
    answer: str
    answer_score: AnswerScore

    @property
    def current_missing(self) -> list[str]:
        return [k for k, present in self.current.items() if not present]


@dataclass(frozen=True)
class Accounting:
    calls: dict[str, int]
    request_chars: int
    reported: Usage | None
    seconds: float

    @property
    def estimate(self) -> int:
        return estimate_tokens(self.request_chars)


@dataclass(frozen=True)
class Retained:
    messages: int
    chars: int


@dataclass(frozen=True)
class Stop:
    """Where and why the comparison stopped; the seed's rule: no replacement text."""

    policy: str
    turn: int
    reason: str


@dataclass
class DriftReport:
    chronology: Chronology
    model: str
    live: bool
    seconds: float = 0.0
    scores: dict[str, dict[str, ProbeScore]] = field(default_factory=dict)
    accounting: dict[str, Accounting] = field(default_factory=dict)
    retained: dict[str, Retained] = field(default_factory=dict)
    # The agent request's size at every turn, from turn 1 (None: a forget-only step, no call).
    sizes: dict[str, list[int | None]] = field(default_factory=dict)
    stop: Stop | None = None
    unavailable: dict[str, str] = field(default_factory=dict)  # policy: why it did not run with this model

    @property
    def partial(self) -> bool:
        return self.stop is not None


def request_text(call: CallRecord) -> str:
    return "\n".join([call.instructions, *(m.text for m in call.messages)])


def _contains(text: str, needle: str) -> bool:
    return needle.casefold() in text.casefold()


def score(text: str, expected: Expectation, answer: str) -> ProbeScore:
    """Presence checks on the request as sent and on the answer: no model judges, no winner is named."""

    def has(value: str) -> bool:
        return value in text

    return ProbeScore(
        request_chars=len(text),
        current={k: has(v) for k, v in expected.current.items()},
        superseded={v: has(v) for values in expected.superseded.values() for v in values},
        prohibition=has(expected.prohibition) if expected.prohibition else None,
        forgotten={v: has(v) for values in expected.forgotten.values() for v in values},
        answer=answer,
        answer_score=AnswerScore(
            expected={t: _contains(answer, t) for t in expected.expect},
            forbidden={t: _contains(answer, t) for t in expected.forbid},
        ),
    )


# policy title, turn, turns in the chronology
Progress = Callable[[str, int, int], None]
CALL_KINDS = ("agent", "writer", "summarizer", "embeddings")


async def run_drift(
    models: ModelSet,
    *,
    turns: int | None = None,
    chronology: Chronology | None = None,
    progress: Progress | None = None,
) -> DriftReport:
    """Every turn of the chronology through every policy, in order. When the comparison cannot go on
    (bad summary, failed model call) the report keeps what was measured and names the stop."""
    story = chronology or load_chronology()
    if turns is not None:
        story = story.stretched(turns)
    calls = CallLog(capacity=1_000_000)
    policies = build_policies(models, calls)
    report = DriftReport(story, models.agent_label, live=models.agent_label != SCRIPTED_LABEL)
    with paced_garbage_collection():
        started = time.perf_counter()
        for policy in policies:
            policy_started = time.perf_counter()
            name = policy.info.name
            if policy.info.calls_functions and not (models.function_calls and not models.scripted):
                report.unavailable[name] = NEEDS_MODEL if models.scripted else NEEDS_LOOP
                continue
            report.scores[name], report.sizes[name] = {}, []
            try:
                await _replay(policy, story, calls, models, report, progress)
            except DriftStopped as stop:
                report.stop = Stop(name, stop.turn, stop.reason)
            records = calls.records(origin=name)
            report.accounting[name] = Accounting(
                calls={kind: sum(1 for r in records if r.purpose == kind) for kind in CALL_KINDS},
                request_chars=sum(r.request_chars for r in records),
                reported=total_usage(r.usage for r in records if r.finished),
                seconds=time.perf_counter() - policy_started,
            )
            retained = policy.retained()
            report.retained[name] = Retained(len(retained), sum(len(m.text or "") for m in retained))
            if report.stop:
                break
        report.seconds = time.perf_counter() - started
    return report


async def _replay(
    policy: Policy,
    story: Chronology,
    calls: CallLog,
    models: ModelSet,
    report: DriftReport,
    progress: Progress | None,
) -> None:
    name = policy.info.name
    expectations = {e.probe: e for e in story.expectations}
    scores, sizes = report.scores[name], report.sizes[name]
    for number, step in enumerate(story.steps, 1):
        if progress is not None:
            progress(policy.info.title, number, story.turns)
        before = calls.latest(origin=name, purpose="agent")
        try:
            with acting_for(MemoryTurn(0, number, step.say or "", name)):  # labels the step's calls
                if step.forget:
                    await policy.forget(None if step.forget == FORGET_ALL else step.forget)
                answer = await policy.answer(number, step.agent, step.say) if step.say is not None else None
        except DriftStopped as exc:
            exc.turn = number
            raise
        except Exception as exc:
            detail = explain_failure(exc, base_url=models.base_url, secrets=models.secrets)
            raise DriftStopped(f"{policy.info.title}, turn {number}: {detail}", turn=number) from exc
        if answer is None:
            sizes.append(None)
            continue
        call = calls.latest(origin=name, purpose="agent")
        assert call is not None and call is not before
        sizes.append(call.request_chars)
        if step.probe:
            scores[step.probe] = score(request_text(call), expectations[step.probe], answer)
