"""The qualification report: per case and in total, as a table or JSON. It claims only what it measured."""

from __future__ import annotations

from typing import Any

from rich.console import Group
from rich.text import Text

from workbench.qualify.runner import QualifyReport
from workbench.runtime.usage import describe_usage
from workbench.tables import titled_table

NOTE = (
    "Each case is one message through the writer, verified by the host exactly as in the app. A pass means "
    "this model, at this moment, through this format, did what the contract says for that case; it says "
    "nothing about other messages. Tokens are as the provider reported them, or unknown."
)


def render(report: QualifyReport) -> Group:
    formats = titled_table("request formats the server accepts", ("format", "result"))
    for name, verdict in report.formats.items():
        formats.add_row(name, Text(verdict, "green" if verdict.startswith("accepted") else "yellow"))
    cases = titled_table(
        f"contract suite {report.suite.name} · writer: {report.model}",
        ("case", "expected", "outcome", "format", "latency", "reported tokens", "verdict"),
    )
    for result in report.results:
        expected = result.case.expect + (f" ({result.case.reason})" if result.case.reason else "")
        outcome = result.outcome + (f" ({', '.join(result.reasons)})" if result.reasons else "")
        cases.add_row(
            Text(f"{result.case.id}: {result.case.title}"),
            expected,
            Text(outcome),
            result.writer_format,
            f"{result.latency_ms:,.1f} ms",
            describe_usage(result.usage),
            Text("pass", "bold green") if result.passed else Text("FAIL", "bold red"),
        )
    total = Text(
        f"{report.passed}/{len(report.results)} cases as the contract says · requested format: "
        f"{report.requested_format} · reported tokens in total: {describe_usage(report.usage)}",
        "bold",
    )
    failed = [
        Text(f"{r.case.id}: {r.detail or 'got ' + r.outcome + ' with ' + repr(r.facts)}", "red")
        for r in report.results
        if not r.passed
    ]
    return Group(formats, cases, total, *failed, Text(NOTE, "dim"))


def to_json(report: QualifyReport) -> dict[str, Any]:
    def usage(u: Any) -> Any:
        return None if u is None else {"input": u.input_tokens, "output": u.output_tokens}

    return {
        "suite": report.suite.name,
        "model": report.model,
        "requested_format": report.requested_format,
        "formats": report.formats,
        "passed": report.passed,
        "total": len(report.results),
        "reported_tokens": usage(report.usage),
        "cases": [
            {
                "id": r.case.id,
                "title": r.case.title,
                "expected": r.case.expect,
                "expected_reason": r.case.reason,
                "outcome": r.outcome,
                "reasons": list(r.reasons),
                "facts": r.facts,
                "format": r.writer_format,
                "latency_ms": round(r.latency_ms, 1),
                "reported_tokens": usage(r.usage),
                "passed": r.passed,
                "detail": r.detail,
            }
            for r in report.results
        ],
    }
