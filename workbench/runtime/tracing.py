"""The workbench's own OpenTelemetry spans, beside the framework's agent-run and chat spans.

One `workbench.turn` span per user turn; under it the framework's `invoke_agent` and `chat` spans,
`workbench.writer` (the writer call), `workbench.admission` (how the turn's ticket settled), and
`workbench.recall.search`; `workbench.forget` for each forget. They carry counts, reason codes, allowed
keys and names: never user or model text, fact values, or a key a model made up, unless the
framework's own sensitive-data switch is on (`--otel-sensitive` turns it on; this module only reads
it). Without a configured tracer provider every span is a no-op: `telemetry.start` configures one.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from functools import cache
from importlib.metadata import version
from typing import TYPE_CHECKING

from agent_framework.observability import OBSERVABILITY_SETTINGS, capture_exception, get_tracer
from opentelemetry.trace import NoOpTracer, Span, Status, StatusCode

from workbench.memory import Contract
from workbench.memory.ledger import EventKind
from workbench.memory.outcome import Outcome
from workbench.memory.outcome import Status as Settled

if TYPE_CHECKING:
    from workbench.memory.forget import ForgetReport
    from workbench.memory.records import FactCandidate, MemoryTurn

TURN = "workbench.turn"
WRITER = "workbench.writer"
ADMISSION = "workbench.admission"
FORGET = "workbench.forget"
RECALL_SEARCH = "workbench.recall.search"

Attributes = dict[str, str | int | bool | float | list[str]]
# How a ticket settles; a forget and a note settle none.
_SETTLEMENTS = frozenset(Settled) - {Settled.FORGOTTEN, Settled.NOTED}


def sensitive() -> bool:
    """Whether spans may carry text and values: the framework's switch, the one owner of that rule."""
    return OBSERVABILITY_SETTINGS.SENSITIVE_DATA_ENABLED


def _text(text: str) -> str:
    """Text as OTLP can carry it: half of a surrogate pair (in a message refused as unencodable) is not
    UTF-8, and the exporter's encoder would drop the attribute with a traceback; it becomes "?"."""
    return text.encode("utf-8", "replace").decode("utf-8") if not text.isascii() else text


def allowed_keys(keys: Iterable[str | None], contract: Contract) -> list[str]:
    """The contract's keys among `keys`, sorted: any other key is text a user or model made up."""
    return sorted({k for k in keys if k is not None and contract.allows(k)})


@cache
def _tracer_version() -> str:
    """The distribution's version, from its installed metadata: the one source, below every layer."""
    return version("agent-memory-workbench")


@contextmanager
def _span(name: str, attributes: Attributes) -> Iterator[Span]:
    """A span as the framework makes its own: none while its instrumentation is off, and an exception
    recorded by its `capture_exception` (the message only with sensitive data on: it may quote text)."""
    tracer = get_tracer("workbench", _tracer_version()) if OBSERVABILITY_SETTINGS.ENABLED else NoOpTracer()
    with tracer.start_as_current_span(
        name, attributes=attributes, record_exception=False, set_status_on_exception=False
    ) as span:
        try:
            yield span
        except Exception as exc:
            failed(span, exc)
            raise
        except BaseException as exc:  # a cancellation
            span.set_attribute("error.type", type(exc).__name__)
            span.set_status(Status(StatusCode.ERROR))
            raise


def failed(span: Span, exc: Exception) -> None:
    """Mark `span` failed by `exc`, which the caller handles (a turn returns its failure)."""
    capture_exception(span, exc)


@contextmanager
def turn(agent: str, mode: str, text: str) -> Iterator[Span]:
    """One user turn of `agent`: everything its run does is a child of this span."""
    attributes: Attributes = {
        "workbench.agent": agent,
        "workbench.mode": mode,
        "workbench.turn.chars": len(text),
    }
    if sensitive():
        attributes["workbench.turn.text"] = _text(text)
    with _span(TURN, attributes) as span:
        yield span


def turn_opened(span: Span, ticket: MemoryTurn) -> None:
    span.set_attribute("workbench.turn.number", ticket.number)
    span.set_attribute("workbench.turn.epoch", ticket.epoch)


def turn_answered(span: Span, reply: str) -> None:
    span.set_attribute("workbench.reply.chars", len(reply))
    if sensitive():
        span.set_attribute("workbench.reply.text", _text(reply))


@contextmanager
def writer_call(writer: str, writer_format: str) -> Iterator[Span]:
    with _span(WRITER, {"workbench.writer": writer, "workbench.writer.format": writer_format}) as span:
        yield span


def writer_proposed(span: Span, candidates: list[FactCandidate], contract: Contract) -> None:
    span.set_attribute("workbench.writer.candidates", len(candidates))
    span.set_attribute("workbench.writer.keys", allowed_keys((c.key for c in candidates), contract))
    if sensitive():
        span.set_attribute("workbench.writer.facts", [_text(f"{c.key}={c.value}") for c in candidates])


def admissions(contract: Contract) -> Callable[[Outcome], None]:
    """The memory subscriber that records `admission` spans under memory's `contract`."""
    return lambda outcome: admission(outcome, contract)


def admission(outcome: Outcome, contract: Contract) -> None:
    """A `workbench.admission` span for each ticket memory settles (a memory subscriber: it runs where
    the ticket settled, so the span is a child of that turn's)."""
    if outcome.status not in _SETTLEMENTS:
        return
    events = outcome.events
    kinds = [e.kind for e in events]
    reasons = [r for e in events for r in e.reasons]
    rejected_keys = [k for e in events for k in e.keys]
    attributes: Attributes = {
        "workbench.admission.status": str(outcome.status),
        "workbench.admission.admitted": kinds.count(EventKind.ADMITTED),
        "workbench.admission.replaced": kinds.count(EventKind.REPLACED),
        "workbench.admission.evicted": kinds.count(EventKind.EVICTED),
        "workbench.admission.candidates": len(rejected_keys),
        "workbench.admission.reasons": sorted({str(r.code) for r in reasons}),
        "workbench.admission.reason_count": len(reasons) + sum(e.more_reasons for e in events),
        "workbench.admission.keys": allowed_keys(
            [e.key for e in events] + rejected_keys + [r.key for r in reasons], contract
        ),
    }
    if events and events[0].turn is not None:
        attributes["workbench.turn.number"] = events[0].turn
    if sensitive():
        attributes["workbench.admission.facts"] = [_text(f"{e.key}={e.value}") for e in events if e.value is not None]
    with _span(ADMISSION, attributes):
        pass


@contextmanager
def forget(keys: tuple[str, ...] | None, contract: Contract) -> Iterator[Span]:
    attributes: Attributes = {
        "workbench.forget.everything": keys is None,
        "workbench.forget.keys": list(contract.keys) if keys is None else allowed_keys(list(keys), contract),
    }
    with _span(FORGET, attributes) as span:
        yield span


def forgot(span: Span, report: ForgetReport) -> None:
    """What the forget removed per holder (`workbench.forget.removed.agent_sessions`: 3), never a value,
    and the holders it could not reach (failed, or never reachable: only a failure is an error)."""
    for name, removed in report.removed.items():
        span.set_attribute(f"workbench.forget.removed.{name.replace(' ', '_')}", removed)
    span.set_attribute("workbench.forget.reached", list(report.removed))
    span.set_attribute("workbench.forget.not_reached", [*report.unreached, *report.failures])
    if report.failures:
        span.set_status(Status(StatusCode.ERROR, "a holder of text was not reached"))


@contextmanager
def recall_search(agent: str | None, embedder: str, top: int, query: str) -> Iterator[Span]:
    attributes: Attributes = {
        "workbench.recall.embedder": embedder,
        "workbench.recall.top": top,
        "workbench.recall.query.chars": len(query),
    }
    if agent:
        attributes["workbench.agent"] = agent
    if sensitive():
        attributes["workbench.recall.query"] = _text(query)
    with _span(RECALL_SEARCH, attributes) as span:
        yield span


def recall_found(span: Span, distances: list[float]) -> None:
    """How many messages a search found, and the distance of the nearest (lower is closer)."""
    span.set_attribute("workbench.recall.count", len(distances))
    if distances:
        span.set_attribute("workbench.recall.top_distance", min(distances))
