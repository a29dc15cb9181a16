"""The drift report, and a sweep of them, as JSON for machines: the same measurements as the tables
(`workbench.drift.report`), every text clipped as they clip it."""

from __future__ import annotations

from typing import Any

from workbench.drift.lab import DriftReport
from workbench.drift.policies import PolicyInfo
from workbench.drift.sweep import Sweep
from workbench.runtime.scripted import SCRIPTED_LABEL
from workbench.tables import MAX_SHOWN_CHARS
from workbench.text import clip


def stop_json(report: DriftReport) -> dict[str, Any] | None:
    if report.stop is None:
        return None
    return {
        "policy": report.stop.policy,
        "title": report.titles.get(report.stop.policy, report.stop.policy),
        "turn": report.stop.turn,
        "cause": report.stop.cause,
        "reason": report.stop.reason,
    }


def failures_json(report: DriftReport) -> dict[str, Any]:
    return {name: {"turn": f.turn, "reason": f.reason} for name, f in report.failures.items()}


def intake_json(report: DriftReport) -> dict[str, Any]:
    return {
        name: {
            "batches": i.batches,
            "batches_rejected": i.batches_rejected,
            "memory_calls": i.memory_calls,
            "extractions_failed": i.extractions_failed,
            "stored": i.stored,
            "recalled": i.recalled,
            "received_nothing": i.received_nothing,
            "why": clip(i.describe(), MAX_SHOWN_CHARS),
        }
        for name, i in report.intake.items()
    }


def warnings_json(report: DriftReport) -> dict[str, Any]:
    return {
        name: [
            {"message": clip(w.message, MAX_SHOWN_CHARS), "count": w.count, "first_turn": w.first_turn}
            for w in warned.values()
        ]
        for name, warned in report.warnings.items()
    }


def _policy_json(report: DriftReport, policy: PolicyInfo) -> dict[str, Any]:
    """A policy as the JSON names it: what it keeps, what answered it (and whether a model did); the user's
    agents' rows also each agent's client and memories, and what the lab removed afterwards."""
    return {
        "name": policy.name,
        "title": policy.title,
        "keeps": policy.keeps,
        "live": report.answered_live(policy.name),
        "answered_by": [
            {"agent": agent, "model": label, "calls": count, "live": label != SCRIPTED_LABEL}
            for (agent, label), count in report.answered.get(policy.name, {}).items()
        ],
        **(
            {
                "agents": [{"name": a.name, "client": a.client, "memories": list(a.memories)} for a in policy.agents],
                "removed": [{"what": r.line, "verified": r.done} for r in report.removed.get(policy.name, [])],
            }
            if policy.agents
            else {}
        ),
    }


def to_json(report: DriftReport) -> dict[str, Any]:
    return {
        "chronology": report.chronology.name,
        "turns": report.chronology.turns,
        "model": report.model,
        "live": report.any_live,
        "seconds": round(report.seconds, 3),
        "partial": report.partial,
        "stop": stop_json(report),
        "failures": failures_json(report),
        "unavailable": report.unavailable,
        "intake": intake_json(report),
        "warnings": warnings_json(report),
        "policies": [_policy_json(report, p) for p in report.policies],
        "left_out": list(report.left_out),
        "probes": _probes_json(report),
        "matrix": _matrix_json(report),
        "accounting": _accounting_json(report),
        "request_chars_by_turn": report.sizes,
    }


def _probes_json(report: DriftReport) -> list[dict[str, Any]]:
    return [
        {
            "id": e.probe,
            "question": e.question,
            "agent": e.agent,
            "current": e.current,
            "superseded": e.superseded,
            "prohibition": e.prohibition,
            "forgotten": e.forgotten,
            "expect": list(e.expect),
            "expect_any": list(e.expect_any),
            "forbid": list(e.forbid),
            "derived": e.derived,
            "about_prohibition": e.about_prohibition,
            "why": e.why,
        }
        for e in report.chronology.expectations
    ]


def _matrix_json(report: DriftReport) -> dict[str, Any]:
    return {
        name: {
            probe: {
                "request_chars": cell.request_chars,
                "current": cell.current,
                "superseded": cell.superseded,
                "prohibition": cell.prohibition,
                "forgotten": cell.forgotten,
                "answer": clip(cell.answer, MAX_SHOWN_CHARS),
                "answer_expected": cell.answer_score.expected,
                "answer_expected_any": cell.answer_score.expected_any,
                "answer_forbidden": cell.answer_score.forbidden,
            }
            for probe, cell in probes.items()
        }
        for name, probes in report.scores.items()
    }


def _accounting_json(report: DriftReport) -> dict[str, Any]:
    return {
        name: {
            "calls": cost.calls,
            "request_chars": cost.request_chars,
            "estimated_tokens": cost.estimate,
            "reported_tokens": None
            if cost.reported is None
            else {"input": cost.reported.input_tokens, "output": cost.reported.output_tokens},
            "retained_history": {
                "messages": report.retained[name].messages,
                "chars": report.retained[name].chars,
                "bytes_on_disk": report.retained[name].on_disk,
            },
            "seconds": round(cost.seconds, 3),
            "framework_seconds": round(cost.framework_seconds, 3),
        }
        for name, cost in report.accounting.items()
    }


def sweep_json(sweep: Sweep) -> dict[str, Any]:
    return {
        "chronology": sweep.chronology.name,
        "model": sweep.model,
        "lengths": list(sweep.lengths),
        "left_out": list(sweep.reports[0].left_out) if sweep.reports else [],
        "partial": sweep.stopped is not None,
        "stop": None
        if sweep.stopped is None
        else {"turns": sweep.stopped.chronology.turns, **(stop_json(sweep.stopped) or {})},
        "runs": [
            {
                "turns": report.chronology.turns,
                "seconds": round(report.seconds, 3),
                "partial": report.partial,
                "failures": failures_json(report),
                "policies": {
                    name: {
                        "request_chars_at_last_probe": report.last_probe_chars(name),
                        "chars_sent": cost.request_chars,
                        "calls": sum(cost.calls.values()),
                        "seconds": round(cost.seconds, 3),
                    }
                    for name, cost in report.accounting.items()
                },
                "request_chars_by_turn": report.sizes,
                "unavailable": report.unavailable,
            }
            for report in sweep.reports
        ],
    }
