"""The drift report as tables a person reads, or as JSON for machines. No winner is named."""

from __future__ import annotations

from typing import Any

from rich.console import Group
from rich.table import Table
from rich.text import Text

from workbench.drift.lab import DriftReport, ProbeScore
from workbench.drift.policies import POLICIES
from workbench.runtime.usage import describe_usage
from workbench.tables import titled_table

TITLES = {p.name: p.title for p in POLICIES}
NOTE = (
    "Cells say what each request contained, checked by exact text: no model judged them and no policy "
    "is ranked. Only bounded facts, and retrieved history purged by the product's forget, can forget "
    "one key; the other policies received the user's request to forget as words. Retrieved history here "
    "uses the built-in lexical embedder (word overlap, not meaning). A characters/4 estimate is not a "
    "bill; reported tokens are the provider's own, "
    'summed over every call the policy made, or "unknown" when any call reported none.'
)


def _mark(present: bool | None, *, good: bool) -> Text:
    if present is None:
        return Text("n/a", "dim")
    return Text("yes" if present else "no", "green" if present == good else "bold red")


def _held(found: dict[str, bool]) -> Text:
    """The values a request still held (a risk here), or "none"; readable without colour."""
    if not found:
        return Text("none declared", "dim")
    held = [value for value, present in found.items() if present]
    return Text(", ".join(held), "bold red") if held else Text("none", "green")


MATRIX_COLUMNS = (
    "policy",
    "current values held",
    "superseded held (drift risk)",
    "prohibition held",
    "forgotten held (resurrection)",
    "request chars",
)
COST_COLUMNS = (
    "policy",
    "agent calls",
    "writer calls",
    "summarizer calls",
    "embeddings calls",
    "request chars sent",
    "estimate (chars/4)",
    "reported tokens",
    "retained history",
)


def matrix_tables(report: DriftReport) -> list[Table]:
    tables = []
    for expected in report.chronology.expectations:
        table = titled_table(f"probe {expected.probe!r}: {expected.question}", MATRIX_COLUMNS)
        for name, probes in report.scores.items():
            cell: ProbeScore = probes[expected.probe]
            held = sum(cell.current.values())
            missing = f" (missing: {', '.join(cell.current_missing)})" if cell.current_missing else ""
            table.add_row(
                TITLES[name],
                Text(f"{held}/{len(cell.current)}{missing}", "green" if not missing else "yellow"),
                _held(cell.superseded),
                _mark(cell.prohibition, good=True),
                _held(cell.forgotten),
                f"{cell.request_chars:,}",
            )
        tables.append(table)
    return tables


def accountingtitled_table(report: DriftReport) -> Table:
    table = titled_table(f"cost over {report.chronology.turns} turns · model: {report.model}", COST_COLUMNS)
    for name, cost in report.accounting.items():
        kept = report.retained[name]
        table.add_row(
            TITLES[name],
            str(cost.calls["agent"]),
            str(cost.calls["writer"]),
            str(cost.calls["summarizer"]),
            str(cost.calls["embeddings"]),
            f"{cost.request_chars:,}",
            f"~{cost.estimate:,}",
            describe_usage(cost.reported),
            f"{kept.messages} message{'' if kept.messages == 1 else 's'}, {kept.chars:,} chars",
        )
    return table


def answerstitled_table(report: DriftReport) -> Table:
    probes = tuple(e.probe for e in report.chronology.expectations)
    table = titled_table(f"answers of {report.model} (that model's answers, not a verdict)", ("policy", *probes))
    for name, scores in report.scores.items():
        table.add_row(TITLES[name], *(Text(scores[e.probe].answer) for e in report.chronology.expectations))
    return table


def render(report: DriftReport, *, timing: bool = True) -> Group:
    took = f" · {report.seconds:.2f} s" if timing else ""
    parts: list[Any] = [
        Text(f"drift lab · {report.chronology.name} · {report.chronology.turns} turns{took}", "bold"),
        *matrix_tables(report),
        accountingtitled_table(report),
    ]
    if report.live:
        parts.append(answerstitled_table(report))
    parts.append(Text(NOTE, "dim"))
    return Group(*parts)


def to_json(report: DriftReport) -> dict[str, Any]:
    return {
        "chronology": report.chronology.name,
        "turns": report.chronology.turns,
        "model": report.model,
        "live": report.live,
        "seconds": round(report.seconds, 3),
        "policies": [{"name": p.name, "title": p.title, "keeps": p.keeps} for p in POLICIES],
        "probes": [
            {
                "id": e.probe,
                "question": e.question,
                "current": e.current,
                "superseded": e.superseded,
                "prohibition": e.prohibition,
                "forgotten": e.forgotten,
            }
            for e in report.chronology.expectations
        ],
        "matrix": {
            name: {
                probe: {
                    "request_chars": cell.request_chars,
                    "current": cell.current,
                    "superseded": cell.superseded,
                    "prohibition": cell.prohibition,
                    "forgotten": cell.forgotten,
                    **({"answer": cell.answer} if report.live else {}),
                }
                for probe, cell in probes.items()
            }
            for name, probes in report.scores.items()
        },
        "accounting": {
            name: {
                "calls": cost.calls,
                "request_chars": cost.request_chars,
                "estimated_tokens": cost.estimate,
                "reported_tokens": None
                if cost.reported is None
                else {"input": cost.reported.input_tokens, "output": cost.reported.output_tokens},
                "retained_history": {"messages": report.retained[name].messages, "chars": report.retained[name].chars},
            }
            for name, cost in report.accounting.items()
        },
    }
