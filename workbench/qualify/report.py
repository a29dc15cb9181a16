"""The qualification report: per case and in total, as a table or JSON. It claims only what it measured."""

from __future__ import annotations

from typing import Any

from rich.cells import cell_len
from rich.console import Console, ConsoleOptions, Group, RenderableType, RenderResult
from rich.table import Table
from rich.text import Text

from workbench.memory.shown import quoted
from workbench.qualify.runner import QualifyReport
from workbench.runtime.usage import describe_usage
from workbench.tables import MAX_SHOWN_CHARS, literal, titled_table
from workbench.text import clip

NOTE = (
    "Each case is one message through the writer, verified by the host exactly as in the app. A pass means "
    "this model, at this moment, through this format, did what the contract says for that case; it says "
    "nothing about other messages. Tokens are as the provider reported them, or unknown."
)
HOST_DECIDED = (
    "host-decided: the host rejects this message from the message alone, whatever the model replies (empty, "
    "malformed or none before the timeout), so the verdict is the host's, reported apart, and does not score the model"
)
AFTER_TIMEOUT = (
    "* may include the previous request's time: it timed out (a case, or the last format probe) and the server "
    "may still have been generating for it"
)
# A file or a pipe gets lines this long at most (a terminal, its own width): the report's prose wraps
# between words, as on a terminal; it was one line of 1,146 characters.
PIPED_WIDTH = 120
SELF_CHECK = (
    "NOT A QUALIFICATION: no model was asked. Without --model the writer is the built-in script, a "
    "deterministic parse, so this run checked the suite itself: that each case's expectation agrees with "
    "the host's contract. Name a model with --model (and --base-url) to qualify it."
)


def _facts(facts: dict[str, str]) -> str:
    """Facts as typed: `module="Billing", database="SQL Server 2022"`, or `no facts`."""
    return ", ".join(f"{key}={quoted(value)}" for key, value in facts.items()) or "no facts"


class Adaptive:
    """The report laid out for the width it is printed at: the cases as a table where every word fits
    its column whole, else one block per case (a narrow table cut words in two: "declaration_misma|tch");
    piped, at most PIPED_WIDTH columns."""

    def __init__(self, before: list[RenderableType], cases: Table, stacked: Text, after: list[RenderableType]) -> None:
        self.before, self.cases, self.stacked, self.after = before, cases, stacked, after

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        if not console.is_terminal:
            options = options.update_width(min(options.max_width, PIPED_WIDTH))
        fits = fitted_columns(self.cases, options.max_width)
        yield from console.render(Group(*self.before, self.cases if fits else self.stacked, *self.after), options)


def render(report: QualifyReport) -> Adaptive:
    cases, stacked = _cases(report)
    return Adaptive(_before(report), cases, stacked, _after(report))


def _before(report: QualifyReport) -> list[RenderableType]:
    """What precedes the cases: the contract's note, and the formats the server accepts (with no model:
    that no model is qualified)."""
    parts: list[RenderableType] = []
    if report.contract_note is not None:
        parts.append(Text(report.contract_note, "bold"))
    if report.self_check:
        parts.append(Text(SELF_CHECK, "bold yellow"))
    else:
        formats = titled_table("request formats the server accepts", ("format", "result"))
        for name, verdict in report.formats.items():
            formats.add_row(name, literal(verdict, "green" if verdict.startswith("accepted") else "yellow"))
        parts.append(formats)
    return parts


def _cases(report: QualifyReport) -> tuple[Table, Text]:
    """The cases as a table, and the same rows as one block per case (`Adaptive` shows one of them)."""
    what = "suite self-check" if report.self_check else "contract suite"
    good, bad = ("agrees", "DISAGREES") if report.self_check else ("pass", "FAIL")
    cases = titled_table(
        f"{what} {report.suite.name} · writer: {report.model}",
        ("case", "decided by", "expected", "outcome", "format", "latency", "reported tokens", "verdict"),
    )
    stacked = Text(f"{what} {report.suite.name} · writer: {report.model}\n", "italic")
    for result in report.results:
        expected = result.case.expect + (f" ({result.case.reason})" if result.case.reason else "")
        outcome = result.outcome + (f" ({', '.join(result.reasons)})" if result.reasons else "")
        if result.model_outcome and result.model_outcome != outcome:
            outcome += f"; the model's reply: {result.model_outcome}"
        row = (
            literal(f"{result.case.id}: {result.case.title}"),
            Text("host" if result.host_decided else "model"),
            literal(expected),
            literal(outcome, limit=MAX_SHOWN_CHARS),
            Text(result.writer_format),
            Text(f"{result.latency_ms:,.1f} ms{' *' if result.after_timeout else ''}"),
            Text(describe_usage(result.usage)),
            Text(good, "bold green") if result.passed else Text(bad, "bold red"),
        )
        cases.add_row(*row)
        stacked.append_text(Text("\n").join([Text.assemble(row[0], style="bold"), _fields(cases, row)]))
        stacked.append("\n")
    stacked.rstrip()
    return cases, stacked


def _after(report: QualifyReport) -> list[RenderableType]:
    """What follows the cases: the totals, the notes that apply, each failed case's detail, what to try next."""
    parts: list[RenderableType] = []
    scored, host = report.scored, report.host_checks
    host_passed = sum(r.passed for r in host)
    if report.self_check:
        summary = (
            f"suite self-check: {report.passed}/{len(scored)} cases the model decides and {host_passed}/{len(host)} "
            "host-decided cases agree with the contract · no model qualified"
        )
    else:
        summary = (
            f"{report.passed}/{len(scored)} cases as the contract says, scored on what the model's output decides "
            f"· host-decided checks, apart: {host_passed}/{len(host)} · requested format: "
            f"{report.requested_format} · reported tokens in total: {describe_usage(report.usage)}"
        )
    parts.append(Text(summary, "bold"))
    if host:
        parts.append(Text(f"{', '.join(r.case.id for r in host)}: {HOST_DECIDED}", "dim"))
    if any(r.after_timeout for r in report.results):
        parts.append(Text(AFTER_TIMEOUT, "dim"))
    parts += [
        literal(
            f"{r.case.id}: {r.detail or 'got ' + r.outcome + ' with ' + _facts(r.facts)}", "red", limit=MAX_SHOWN_CHARS
        )
        for r in report.results
        if not r.passed
    ]
    if not report.self_check and not report.all_passed:
        parts.append(Text(next_steps(report), "bold yellow"))
    if not report.self_check:
        parts.append(Text(NOTE, "dim"))
    return parts


def fitted_columns(table: Table, width: int) -> bool:
    """Give each of `table`'s columns a width that holds its longest word whole, the room left shared in
    proportion to what each column's longest line wants more; False (the table untouched) when the
    longest words alone, with each column's padding and the rules around it, take more than `width`."""
    columns = table.columns
    lines = [[str(cell) for cell in (column.header, *column.cells)] for column in columns]
    words = [max((cell_len(w) for text in texts for w in text.split()), default=1) for texts in lines]
    wanted = [max(max(cell_len(line) for line in text.splitlines() or [""]) for text in texts) for texts in lines]
    room = width - 3 * len(columns) - 1  # one column of padding each side, the rules between and around
    if sum(words) > room:
        return False
    spare, more = room - sum(words), [max(0, w - m) for w, m in zip(wanted, words, strict=True)]
    total = sum(more)
    for column, least, extra in zip(columns, words, more, strict=True):
        column.width = least + (min(extra, spare * extra // total) if total else 0)
    return True


def _fields(table: Table, row: tuple[Text, ...]) -> Text:
    """A case's cells after its name, each after its column's header: "  decided by: model · expected: ..."."""
    fields = [
        Text.assemble(f"{column.header}: ", cell) for column, cell in zip(table.columns[1:], row[1:], strict=True)
    ]
    return Text.assemble("  ", Text(" · ").join(fields))


def next_steps(report: QualifyReport) -> str:
    """What the user can do when the model does not qualify."""
    others = [
        name
        for name, verdict in report.formats.items()
        if verdict.startswith("accepted") and name != report.results[0].writer_format
    ]
    formats = f" (this server accepts {', '.join(others)})" if others else ""
    return (
        "This model does not qualify as the writer. What to do next: run with --writer host (the host's own "
        f"parse, no writer model; the agents still use --model); or try another --writer-format{formats}; "
        "or a larger model as --writer-model."
    )


def to_json(report: QualifyReport) -> dict[str, Any]:
    def usage(u: Any) -> Any:
        return None if u is None else {"input": u.input_tokens, "output": u.output_tokens}

    return {
        "kind": "suite self-check" if report.self_check else "qualification",
        "qualified": report.qualified,
        "suite": report.suite.name,
        "configured_contract": None if report.configured is None else report.configured.describe(),
        "contract_note": report.contract_note,
        "model": report.model,
        "requested_format": report.requested_format,
        "formats": None if report.self_check else report.formats,
        "passed": report.passed,
        "total": len(report.scored),
        "host_checks": {"passed": sum(r.passed for r in report.host_checks), "total": len(report.host_checks)},
        "next_steps": None if report.self_check or report.all_passed else next_steps(report),
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
                "decided_by": "host" if r.host_decided else "model",
                "model_outcome": r.model_outcome or None,
                "latency_ms": round(r.latency_ms, 1),
                "latency_may_include_previous_case": r.after_timeout,
                "reported_tokens": usage(r.usage),
                "passed": r.passed,
                "detail": clip(r.detail, MAX_SHOWN_CHARS),
            }
            for r in report.results
        ],
    }
