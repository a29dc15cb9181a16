"""Run a chronology through every policy and score what each request contained and what each answer
said. A stop keeps everything measured before it."""

from __future__ import annotations

import gc
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from workbench.agentmem.base import MEM0_EMBEDDINGS_CALL, MEMORY_CALLS
from workbench.agentmem.extracted import unavailable as extracted_unavailable
from workbench.agentmem.mem0_config import Mem0Config
from workbench.chronology import Chronology, Expectation, load_chronology
from workbench.chronology_file import FORGET_ALL
from workbench.drift.agentmem_policy import NEEDS_LOOP, NEEDS_MODEL
from workbench.drift.catalog import build_policies, chosen_policies, policy_names
from workbench.drift.compare import Haystack
from workbench.drift.mem0_policy import MEM0_NEEDS_MODEL, NEEDS_EMBEDDINGS
from workbench.drift.policies import POLICIES, Policy, PolicyFailed, PolicyInfo, Received, Removal
from workbench.drift.tally import (
    LabCallLog,
    LibraryWarning,
    framework_time,
    library_warnings,
    skipped_extractions,
)
from workbench.heap import paced_garbage_collection
from workbench.loading import LoadedAgent
from workbench.memory import MemoryTurn
from workbench.memory.turns import acting_for
from workbench.runtime.calls import CallRecord
from workbench.runtime.failures import cannot_reach
from workbench.runtime.models import ModelSet
from workbench.runtime.scripted import SCRIPTED_LABEL
from workbench.runtime.usage import Usage, estimate_tokens


@dataclass(frozen=True)
class AnswerScore:
    """Which expected texts an answer contains and which forbidden ones it revived, by the lab's one
    comparison rule (`workbench.drift.compare`). Exact text, no judge."""

    expected: dict[str, bool]
    forbidden: dict[str, bool]
    expected_any: dict[str, bool] = field(default_factory=dict)  # any one of these counts (a paraphrase)

    @property
    def any_found(self) -> bool | None:
        """Whether the answer holds any of the `expect_any` texts; None when the probe lists none."""
        return any(self.expected_any.values()) if self.expected_any else None

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
    framework_seconds: float = 0.0  # of `seconds`, in the framework's providers that re-read their files

    @property
    def estimate(self) -> int:
        return estimate_tokens(self.request_chars)


@dataclass(frozen=True)
class Retained:
    messages: int
    chars: int
    on_disk: int | None = None  # bytes of the files the policy's memory keeps; None: it keeps none


@dataclass(frozen=True)
class Intake:
    """What a policy's memory was handed over the run, where it has one that can refuse or fail: the
    writer's batches the host settled (bounded facts), its own model calls (extraction, consolidation,
    Mem0's) and how many failed or stored nothing, the messages stored and recalled (retrieved history).
    A policy whose memory received nothing says so beside its cells, with these counts."""

    batches: int = 0
    batches_rejected: int = 0
    memory_calls: int = 0
    extractions_failed: int = 0  # memory calls that failed, and extractions the framework skipped
    stored: int | None = None
    recalled: int | None = None
    first_reason: str = ""

    @property
    def received_nothing(self) -> bool:
        return (
            (self.batches > 0 and self.batches_rejected == self.batches)
            or (self.memory_calls > 0 and self.extractions_failed >= self.memory_calls)
            or self.stored == 0
            or self.recalled == 0
        )

    def describe(self) -> str:
        """Why the memory received nothing, with the counts (empty when it received something)."""
        if not self.received_nothing:
            return ""
        parts = []
        if self.batches and self.batches_rejected == self.batches:
            parts.append(f"all {self.batches:,} of the writer's batches were rejected")
        if self.memory_calls and self.extractions_failed >= self.memory_calls:
            parts.append(f"all {self.memory_calls:,} of its memory calls failed or stored nothing")
        if self.stored == 0:
            parts.append("no message was stored")
        elif self.recalled == 0:
            parts.append("no message was recalled")
        first = f"; the first: {self.first_reason}" if self.first_reason else ""
        return f"its memory received nothing: {', '.join(parts)}{first}"


@dataclass(frozen=True)
class Failure:
    """Where and why one policy failed (a timeout, a cut-off or refused reply, a bad summary): its
    cells from that turn on are not measured. The seed's rule: no replacement text."""

    turn: int
    reason: str


@dataclass(frozen=True)
class Stop:
    """Where and why the whole comparison stopped: the server cannot be reached, or several
    policies failed in a row (`cause` says which)."""

    policy: str
    turn: int
    reason: str
    cause: str = ""


# The lab stops after this many policies failed one after another: by then the model, not one
# policy, is what fails.
MAX_FAILURES_IN_A_ROW = 3
UNREACHABLE = "the server cannot be reached"


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
    failures: dict[str, Failure] = field(default_factory=dict)
    stop: Stop | None = None
    unavailable: dict[str, str] = field(default_factory=dict)  # policy: why it did not run with this model
    intake: dict[str, Intake] = field(default_factory=dict)
    # What the libraries logged as warnings during each policy's run, by kind (not on stderr).
    warnings: dict[str, dict[str, LibraryWarning]] = field(default_factory=dict)
    # The policies compared, in the report's order: the built-in ones, then the user's agents'.
    policies: tuple[PolicyInfo, ...] = POLICIES
    # The policies this run could have compared but was asked not to (`run_drift`'s `policies`), by name.
    left_out: tuple[str, ...] = ()
    # Each policy's answered agent calls, by agent and by the model that answered (its label, as recorded).
    answered: dict[str, Counter[tuple[str, str]]] = field(default_factory=dict)
    # What closing each policy removed of what it wrote outside the lab's own folders (the user's agents'
    # rows: the lab's copies and keys), verified or not.
    removed: dict[str, list[Removal]] = field(default_factory=dict)

    @property
    def partial(self) -> bool:
        return self.stop is not None

    def answered_live(self, name: str, agent: str | None = None) -> bool:
        """Whether a model answered the policy (its agent `agent`) in this run: a call answered by a
        client other than the built-in model, which is no model."""
        return any(
            label != SCRIPTED_LABEL and (agent is None or by == agent) for by, label in self.answered.get(name, {})
        )

    @property
    def any_live(self) -> bool:
        """Whether any answer in this report came from a model (the lab's, or an agent's own client)."""
        return any(self.answered_live(name) for name in self.answered)

    def answering(self, name: str) -> list[str]:
        """The models that answered the policy, each once, in the order they first did."""
        return list(dict.fromkeys(label for _, label in self.answered.get(name, {})))

    @property
    def one_model(self) -> bool:
        """Whether every answer came from the lab's own model (`model`): the report can name it alone."""
        return all(label == self.model for name in self.answered for label in self.answering(name))

    @property
    def left_behind(self) -> list[tuple[str, Removal]]:
        """What the lab may have left where it wrote for a policy (a removal it could not verify)."""
        return [(name, r) for name, removals in self.removed.items() for r in removals if not r.done]

    @property
    def titles(self) -> dict[str, str]:
        return {p.name: p.title for p in self.policies}

    def last_probe_chars(self, name: str) -> int | None:
        """The policy's request size at the chronology's last probe; None when it did not get there."""
        last = self.chronology.expectations[-1].probe if self.chronology.expectations else None
        cell = self.scores.get(name, {}).get(last) if last else None
        return cell.request_chars if cell else None


def request_text(call: CallRecord) -> str:
    return "\n".join([call.instructions, *(m.text for m in call.messages)])


def score(text: str, expected: Expectation, answer: str) -> ProbeScore:
    """Presence checks on the request as sent and on the answer, both by the one comparison rule
    (`workbench.drift.compare`): no model judges, no winner is named."""
    has = Haystack(text).holds
    said = Haystack(answer).holds

    return ProbeScore(
        request_chars=len(text),
        current={k: has(v) for k, v in expected.current.items()},
        superseded={v: has(v) for values in expected.superseded.values() for v in values},
        prohibition=has(expected.prohibition) if expected.prohibition else None,
        forgotten={v: has(v) for values in expected.forgotten.values() for v in values},
        answer=answer,
        answer_score=AnswerScore(
            expected={t: said(t) for t in expected.expect},
            forbidden={t: said(t) for t in expected.forbid},
            expected_any={t: said(t) for t in expected.expect_any},
        ),
    )


# policy title, turn, turns in the chronology
Progress = Callable[[str, int, int], None]
# The cost table's call columns, each the purposes it counts: a memory's own model calls (extraction,
# consolidation, Mem0's) are memory calls, Mem0's embeddings requests are embeddings calls.
CALL_KINDS: dict[str, tuple[str, ...]] = {
    "agent": ("agent",),
    "writer": ("writer",),
    "summarizer": ("summarizer",),
    "memory": MEMORY_CALLS,
    "embeddings": ("embeddings", MEM0_EMBEDDINGS_CALL),
}


async def run_drift(
    models: ModelSet,
    *,
    turns: int | None = None,
    chronology: Chronology | None = None,
    progress: Progress | None = None,
    mem0: Mem0Config | None = None,
    agents: Sequence[LoadedAgent] = (),
    policies: Sequence[str] | None = None,
    allow_your_stores: bool = False,
) -> DriftReport:
    """Every turn of the chronology through every policy, in order; `agents`, the user's own, run
    beside the built-in policies (`workbench.drift.yours_policy`). `policies` names the only ones to
    build and run (UnknownPolicy before anything runs for a name no policy has); the report has only
    those, and names the others left out. A policy that fails (a failed model call, a bad summary)
    keeps what it measured before, its failure is named, and the next policy runs; the comparison
    stops when the server cannot be reached, or after MAX_FAILURES_IN_A_ROW failed policies in a row,
    and the report keeps what was measured and names the stop. A policy this run cannot run (see
    `needs`) is reported with what it needs; `mem0` is Mem0's model and embedder. Every policy is
    closed at the end (Mem0's removes its folder; the user's agents' rows remove the stores of the lab's
    own they ran on, verified: `workbench.drift.copies`, and say so in `removed`). `allow_your_stores`:
    an agent with a memory the lab cannot redirect runs on the user's own store; else its rows do not run."""
    chosen = chosen_policies(policies, agents)
    story = chronology or load_chronology()
    if turns is not None:
        story = story.stretched(turns)
    calls = LabCallLog()
    built = build_policies(
        models,
        calls,
        contract=story.contract,
        mem0=mem0,
        yours=agents,
        names=chosen,
        allow_your_stores=allow_your_stores,
    )
    report = DriftReport(
        story,
        models.agent_label,
        live=models.agent_label != SCRIPTED_LABEL,
        policies=tuple(p.info for p in built),
        left_out=tuple(name for name in policy_names(agents) if chosen is not None and name not in chosen),
    )
    for policy in built:  # known before any runs: a stop does not hide what a policy needs
        if (missing := needs(policy.info, models, mem0)) is not None:
            report.unavailable[policy.info.name] = missing
    try:
        await _run_policies(built, story, calls, models, report, progress)
    finally:
        for policy in built:
            await policy.close()
            if removed := policy.removed():
                report.removed[policy.info.name] = removed
    return report


async def _run_policies(
    built: Sequence[Policy],
    story: Chronology,
    calls: LabCallLog,
    models: ModelSet,
    report: DriftReport,
    progress: Progress | None,
) -> None:
    """Each policy that can run, one after another, until the report has a stop; the libraries' warnings
    and the framework's time are told apart by the policy running."""
    running = [""]
    framework: dict[str, float] = {}
    with (
        paced_garbage_collection(),
        library_warnings(report.warnings, running),
        framework_time(framework, running),
    ):
        started = time.perf_counter()
        in_a_row = 0
        for policy in built:
            policy_started = time.perf_counter()
            name = running[0] = policy.info.name
            if name in report.unavailable:
                continue
            report.scores[name], report.sizes[name] = {}, []
            try:
                await _replay(policy, story, calls, models, report, progress)
                in_a_row = 0
            except _Failed as failed:
                in_a_row += 1
                _take_failure(report, name, failed, in_a_row)
            _take_accounting(report, name, calls, time.perf_counter() - policy_started, framework.get(name, 0.0))
            _take_intake(report, policy, calls)
            await _take_retained(report, policy)
            calls.latest_agent.pop(name, None)
            gc.collect()  # this policy's garbage goes before the next policy's run adds its own
            if report.stop:
                break
        report.seconds = time.perf_counter() - started


def _take_failure(report: DriftReport, name: str, failed: _Failed, in_a_row: int) -> None:
    """The policy's failure, and the comparison's stop when the server cannot be reached or too many
    policies failed in a row."""
    report.failures[name] = Failure(failed.turn, failed.reason)
    if failed.unreachable:
        report.stop = Stop(name, failed.turn, failed.reason, UNREACHABLE)
    elif in_a_row >= MAX_FAILURES_IN_A_ROW:
        cause = f"{in_a_row} policies failed in a row"
        report.stop = Stop(name, failed.turn, failed.reason, cause)


def _take_accounting(report: DriftReport, name: str, calls: LabCallLog, seconds: float, framework: float) -> None:
    made = calls.calls.get(name, Counter[str]())
    report.accounting[name] = Accounting(
        calls={kind: sum(made[p] for p in purposes) for kind, purposes in CALL_KINDS.items()},
        request_chars=calls.chars[name],
        reported=calls.total(name),
        seconds=seconds,
        framework_seconds=framework,
    )


async def _take_retained(report: DriftReport, policy: Policy) -> None:
    retained = await policy.retained_now()
    chars = sum(len(m.text or "") for m in retained)
    report.retained[policy.info.name] = Retained(len(retained), chars, policy.on_disk())


def _take_intake(report: DriftReport, policy: Policy, calls: LabCallLog) -> None:
    """What the policy's memory was handed; a memory whose every call failed or stored nothing is a
    failed policy (its cells would show an empty memory as if measured), with the first reason."""
    name = policy.info.name
    received = policy.received()
    memory_calls = sum(calls.calls.get(name, Counter[str]())[p] for p in MEMORY_CALLS)
    skipped, first_skipped = skipped_extractions(report.warnings.get(name, {}))
    failed_turn, first_failed = calls.first_failure.get(name, (None, ""))
    if received is None and not memory_calls:
        return
    received = received or Received()
    intake = Intake(
        batches=received.batches,
        batches_rejected=received.batches_rejected,
        memory_calls=memory_calls,
        extractions_failed=calls.memory_failed[name] + skipped,
        stored=received.stored,
        recalled=received.recalled,
        first_reason=received.first_reason or first_failed or first_skipped,
    )
    report.intake[name] = intake
    if memory_calls and intake.extractions_failed >= memory_calls and name not in report.failures:
        turn = failed_turn or min((w.first_turn or 1 for w in report.warnings.get(name, {}).values()), default=1)
        report.failures[name] = Failure(
            turn,
            f"every one of its {memory_calls:,} memory calls failed or stored nothing, so its memory received "
            f"nothing; the first: {intake.first_reason}",
        )
        report.scores[name] = {}


def needs(info: PolicyInfo, models: ModelSet, mem0: Mem0Config | None) -> str | None:
    """What this run lacks to run the policy honestly (its row says so instead of faked cells), or None."""
    if info.withheld:
        return info.withheld
    if info.needs_extracted_memory and (why := extracted_unavailable()) is not None:
        return why
    if info.calls_functions and not (models.function_calls and not models.scripted):
        return NEEDS_MODEL if models.scripted else NEEDS_LOOP
    if info.needs_embedding_model and (models.scripted or mem0 is None):
        return MEM0_NEEDS_MODEL if models.scripted else NEEDS_EMBEDDINGS
    return None


class _Failed(Exception):
    def __init__(self, turn: int, reason: str, *, unreachable: bool = False) -> None:
        super().__init__(reason)
        self.turn = turn
        self.reason = reason
        self.unreachable = unreachable


async def _replay(
    policy: Policy,
    story: Chronology,
    calls: LabCallLog,
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
        before = calls.latest_agent.get(name)
        try:
            with acting_for(MemoryTurn(0, number, step.say or "", name)):  # labels the step's calls
                if step.forget:
                    await policy.forget(None if step.forget == FORGET_ALL else step.forget)
                if step.probe:
                    await policy.before_probe()
                answer = await policy.answer(number, step.agent, step.say) if step.say is not None else None
        except PolicyFailed as exc:
            raise _Failed(number, str(exc)) from exc
        except Exception as exc:
            detail = models.explain(exc)
            raise _Failed(number, detail, unreachable=cannot_reach(exc)) from exc
        if answer is None:
            sizes.append(None)
            continue
        call = calls.latest_agent.get(name)
        assert call is not None and call is not before
        answering = policy.agents[step.agent].name or step.agent
        report.answered.setdefault(name, Counter())[(answering, call.model)] += 1
        sizes.append(call.request_chars)
        if step.probe:
            scores[step.probe] = score(request_text(call), expectations[step.probe], answer)
