"""Run the chronology through every policy and score what each request actually contains."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field

from workbench.drift.chronology import Chronology, Expectation, load_chronology
from workbench.drift.policies import DriftStopped, Policy, build_policies
from workbench.memory import MemoryTurn
from workbench.runtime.calls import CallLog, CallRecord, current_turn
from workbench.runtime.failures import explain_failure
from workbench.runtime.models import ModelSet
from workbench.runtime.scripted import SCRIPTED_LABEL
from workbench.runtime.usage import Usage, estimate_tokens, total_usage


@dataclass(frozen=True)
class ProbeScore:
    """What one policy's request held at one probe, per key and per value."""

    request_chars: int
    current: dict[str, bool]
    superseded: dict[str, bool]
    prohibition: bool | None
    forgotten: dict[str, bool]
    answer: str

    @property
    def current_missing(self) -> list[str]:
        return [k for k, present in self.current.items() if not present]


@dataclass(frozen=True)
class Accounting:
    calls: dict[str, int]
    request_chars: int
    reported: Usage | None

    @property
    def estimate(self) -> int:
        return estimate_tokens(self.request_chars)


@dataclass(frozen=True)
class Retained:
    messages: int
    chars: int


@dataclass
class DriftReport:
    chronology: Chronology
    model: str
    live: bool
    seconds: float = 0.0
    scores: dict[str, dict[str, ProbeScore]] = field(default_factory=dict)
    accounting: dict[str, Accounting] = field(default_factory=dict)
    retained: dict[str, Retained] = field(default_factory=dict)


def request_text(call: CallRecord) -> str:
    return "\n".join([call.instructions, *(m.text for m in call.messages)])


def score(text: str, expected: Expectation, answer: str) -> ProbeScore:
    """Presence checks on the request as sent: no model judges, no winner is named."""

    def has(value: str) -> bool:
        return value in text

    return ProbeScore(
        request_chars=len(text),
        current={k: has(v) for k, v in expected.current.items()},
        superseded={v: has(v) for values in expected.superseded.values() for v in values},
        prohibition=has(expected.prohibition) if expected.prohibition else None,
        forgotten={v: has(v) for values in expected.forgotten.values() for v in values},
        answer=answer,
    )


Progress = Callable[[str, int, int], None]
CALL_KINDS = ("agent", "writer", "summarizer", "embeddings")


async def run_drift(
    models: ModelSet,
    *,
    turns: int | None = None,
    chronology: Chronology | None = None,
    progress: Progress | None = None,
) -> DriftReport:
    """Every turn of the chronology through every policy, in order. Raises DriftStopped with a
    one-line reason when the comparison cannot go on (bad summary, failed model call)."""
    story = chronology or load_chronology()
    if turns is not None:
        story = story.stretched(turns)
    calls = CallLog(capacity=1_000_000)
    policies = build_policies(models, calls)
    report = DriftReport(story, models.agent_label, live=models.agent_label != SCRIPTED_LABEL)
    expectations = {e.probe: e for e in story.expectations}
    started = time.perf_counter()
    for policy in policies:
        report.scores[policy.info.name] = await _replay(policy, story, expectations, calls, models, progress)
        records = calls.records(origin=policy.info.name)
        report.accounting[policy.info.name] = Accounting(
            calls={
                kind: sum(1 for r in records if r.purpose == kind)
                for kind in ("agent", "writer", "summarizer", "embeddings")
            },
            request_chars=sum(r.request_chars for r in records),
            reported=total_usage(r.usage for r in records),
        )
        retained = policy.retained()
        report.retained[policy.info.name] = Retained(len(retained), sum(len(m.text or "") for m in retained))
    report.seconds = time.perf_counter() - started
    return report


async def _replay(
    policy: Policy,
    story: Chronology,
    expectations: dict[str, Expectation],
    calls: CallLog,
    models: ModelSet,
    progress: Progress | None,
) -> dict[str, ProbeScore]:
    scores: dict[str, ProbeScore] = {}
    for number, step in enumerate(story.steps, 1):
        if progress is not None:
            progress(policy.info.title, number, story.turns)
        token = current_turn.set(MemoryTurn(0, number, step.say, policy.info.name))
        try:
            if step.forget:
                await policy.forget(step.forget)
            answer = await policy.answer(number, step.say)
        except DriftStopped:
            raise
        except Exception as exc:
            detail = explain_failure(exc, base_url=models.base_url, secrets=models.secrets)
            raise DriftStopped(f"{policy.info.title}, turn {number}: {detail}") from exc
        finally:
            current_turn.reset(token)
        if step.probe:
            (call,) = [c for c in calls.records(origin=policy.info.name, turn=number) if c.purpose == "agent"]
            scores[step.probe] = score(request_text(call), expectations[step.probe], answer)
    return scores
