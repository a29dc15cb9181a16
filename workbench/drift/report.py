"""The drift report as tables a person reads, or as JSON for machines. No winner is named."""

from __future__ import annotations

from collections import Counter
from typing import Any

from rich.console import Console, ConsoleOptions, Group, RenderResult
from rich.table import Table
from rich.text import Text

from workbench.drift.chart import chart_text
from workbench.drift.lab import DriftReport, ProbeScore
from workbench.drift.sweep import Sweep
from workbench.drift.yours_policy import PREFIX as YOURS
from workbench.memory.shown import quoted
from workbench.runtime.usage import describe_usage
from workbench.tables import MAX_SHOWN_CHARS, literal, titled_table
from workbench.text import visible

NOTE = (
    "Cells say what each request contained and what each answer said, checked by exact text under one rule "
    "for both (case, whitespace and Unicode forms folded; a value counts only whole: docs/scoring.md): no "
    "model judged them and no policy is ranked. Only bounded facts, retrieved history purged by the product's "
    "forget, and Agent Framework's memories (the product's forget rewrites their files) can forget one "
    "key; the other policies received the user's request to forget as "
    "words. Retrieved history here uses the built-in lexical embedder (word overlap, not meaning). A "
    "characters/4 estimate is not a bill; reported tokens are the provider's own, "
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
    return Text(visible(", ".join(held)), "bold red") if held else Text("none", "green")


MATRIX_COLUMNS = (
    "policy",
    "current values held",
    "superseded held (drift risk)",
    "prohibition held",
    "forgotten held (resurrection)",
    "request chars",
)
ANSWER_COLUMNS = (
    "policy",
    "expected texts in the answer",
    "any of these (one counts)",
    "forbidden texts revived",
    "answer",
)
COST_COLUMNS = (
    "policy",
    "agent calls",
    "writer calls",
    "summarizer calls",
    "memory calls",
    "embeddings calls",
    "request chars sent",
    "estimate (chars/4)",
    "reported tokens",
    "retained history",
    "lab time",
)


NOT_MEASURED = Text("not measured (the comparison stopped)", "dim")


def _cell(report: DriftReport, name: str, probe: str) -> ProbeScore | None:
    return report.scores.get(name, {}).get(probe)


def _missing(report: DriftReport, name: str) -> Text:
    """Why a policy has no cell: it cannot run with this model, it failed (its cells from that turn on),
    or the comparison stopped first."""
    if name in report.unavailable:
        return Text(report.unavailable[name], "dim")
    failure = report.failures.get(name)
    if failure is None:
        return NOT_MEASURED
    return literal(f"failed at turn {failure.turn:,}: {failure.reason}", "bold red", limit=MAX_SHOWN_CHARS)


def _policy(report: DriftReport, name: str, title: str) -> Text:
    """A row's policy cell: its title, and why its memory's cells are empty when it received nothing."""
    intake = report.intake.get(name)
    if intake is None or not intake.received_nothing or name in report.failures:
        return Text(title)
    cell = Text(title + "\n")
    cell.append_text(literal(intake.describe(), "yellow", limit=MAX_SHOWN_CHARS))
    return cell


def matrix_tables(report: DriftReport) -> list[Table]:
    """Per probe: what each policy's request contained (the request matrix)."""
    tables = []
    for expected in report.chronology.expectations:
        agent = f" [{expected.agent} agent]" if expected.agent != "support" else ""
        table = titled_table(f"probe {quoted(expected.probe)}{agent}: {expected.question}", MATRIX_COLUMNS)
        for policy in report.policies:
            cell = _cell(report, policy.name, expected.probe)
            title = _policy(report, policy.name, policy.title)
            if cell is None:
                table.add_row(title, _missing(report, policy.name))
                continue
            held = sum(cell.current.values())
            missing = f" (missing: {', '.join(cell.current_missing)})" if cell.current_missing else ""
            table.add_row(
                title,
                Text(f"{held}/{len(cell.current)}{missing}", "green" if not missing else "yellow"),
                _held(cell.superseded),
                _mark(cell.prohibition, good=True),
                _held(cell.forgotten),
                f"{cell.request_chars:,}",
            )
        tables.append(table)
    return tables


def _found(found: dict[str, bool], *, wanted: bool) -> Text:
    if not found:
        return Text("none to check", "dim")
    hits = [text for text, present in found.items() if present]
    listed = visible(", ".join(hits)) if hits else "none"
    good = len(hits) == len(found) if wanted else not hits
    return Text(f"{len(hits)}/{len(found)}: {listed}", "green" if good else "bold red")


def _any(found: dict[str, bool]) -> Text:
    """Whether the answer holds any one of the probe's `expect_any` texts, and which."""
    if not found:
        return Text("none to check", "dim")
    hits = [text for text, present in found.items() if present]
    if not hits:
        return Text(f"none of {len(found)}", "bold red")
    return Text(f"yes: {visible(', '.join(hits))}", "green")


def _texts(texts: tuple[str, ...]) -> str:
    """Check texts as typed: `"SQL Server 2022", "Billing"`, or `nothing`."""
    return ", ".join(quoted(t) for t in texts) if texts else "nothing"


def _answered_by(report: DriftReport) -> str:
    """Who answered, as a title says it: the lab's model, or each row's (the user's agents on their own)."""
    if report.one_model:
        return report.model
    return f"each row's model (the lab's: {report.model}; your agents': their own, in the table of your agents)"


def _shows_answers(report: DriftReport) -> bool:
    """Whether the answers table has its answer column: some answer came from a model (the built-in
    one's answers are its script's)."""
    return report.live or report.any_live


BUILT_IN_ANSWER = Text("(the built-in model's: not shown)", "dim")


def answer_tables(report: DriftReport, *, answer_chars: int = 160) -> list[Table]:
    """Per probe: what came back, checked by exact text against expect/forbid (the answer matrix)."""
    tables = []
    shown = _shows_answers(report)
    for expected in report.chronology.expectations:
        source = (
            (
                "derived from the prohibition and the keys the question names"
                if expected.about_prohibition
                else "derived from the keys the question names"
            )
            if expected.derived
            else "given in the chronology"
        )
        any_of = f" · any of {_texts(expected.expect_any)}" if expected.expect_any else ""
        table = titled_table(
            f"probe {quoted(expected.probe)}: what {_answered_by(report)} answered (that model's answers, not a "
            "verdict) · "
            f"expect {_texts(expected.expect)}{any_of} · forbid {_texts(expected.forbid)} ({source}). "
            f"Why: {visible(expected.why)}",
            ANSWER_COLUMNS if shown else ANSWER_COLUMNS[:-1],
        )
        for policy in report.policies:
            cell = _cell(report, policy.name, expected.probe)
            title = _policy(report, policy.name, policy.title)
            if cell is None:
                table.add_row(title, _missing(report, policy.name))
                continue
            table.add_row(
                title,
                _found(cell.answer_score.expected, wanted=True),
                _any(cell.answer_score.expected_any),
                _found(cell.answer_score.forbidden, wanted=False),
                *(
                    [literal(cell.answer, limit=answer_chars) if report.answered_live(policy.name) else BUILT_IN_ANSWER]
                    if shown
                    else []
                ),
            )
        tables.append(table)
    return tables


def accounting_table(report: DriftReport, *, timing: bool = True) -> Table:
    partial = " (partial: up to the stop)" if report.partial else ""
    columns = COST_COLUMNS if timing else COST_COLUMNS[:-1]
    table = titled_table(f"cost over {report.chronology.turns} turns{partial} · model: {_answered_by(report)}", columns)
    for policy in report.policies:
        name = policy.name
        cost = report.accounting.get(name)
        if cost is None:
            table.add_row(policy.title, _missing(report, name))
            continue
        kept = report.retained[name]
        failure = report.failures.get(name)
        table.add_row(
            Text(f"{policy.title} (failed at turn {failure.turn:,})")
            if failure
            else _policy(report, name, policy.title),
            str(cost.calls["agent"]),
            str(cost.calls["writer"]),
            str(cost.calls["summarizer"]),
            str(cost.calls["memory"]),
            str(cost.calls["embeddings"]),
            f"{cost.request_chars:,}",
            f"~{cost.estimate:,}",
            describe_usage(cost.reported),
            f"{kept.messages} message{'' if kept.messages == 1 else 's'}, {kept.chars:,} chars"
            + ("" if kept.on_disk is None else f"; {kept.on_disk:,} bytes on disk"),
            *([_lab_time(cost.seconds, cost.framework_seconds)] if timing else []),
        )
    return table


YOURS_COLUMNS = ("policy", "agent", "client (class and model)", "answered", "its memories in this run", "afterwards")


def _answered(report: DriftReport, name: str, agent: str) -> Text:
    """How many of the agent's calls were answered in the row, by what, and whether a model answered."""
    by = Counter[str]()
    for (who, label), count in report.answered.get(name, {}).items():
        if who == agent:
            by[label] += count
    if not by:
        return Text("no call answered", "dim")
    said = "; ".join(f"{count:,} call(s) by {label}" for label, count in by.items())
    live = report.answered_live(name, agent)
    return literal(f"{said}: {'a model answered (live)' if live else 'the built-in model, no model (not live)'}")


def yours_table(report: DriftReport) -> Table | None:
    """The user's agents' rows: each agent's own client and model, what answered it, each of its memories
    with where this run kept it (the lab's copies, its keys), and what the lab removed afterwards; a row
    not run says why. None when the run has none of them."""
    rows = [p for p in report.policies if p.agents or (p.withheld and p.name.startswith(YOURS))]
    if not rows:
        return None
    table = titled_table("your agents: their clients, what answered and where their memories were kept", YOURS_COLUMNS)
    for policy in rows:
        if not policy.agents:
            table.add_row(policy.title, literal(policy.withheld, "yellow", limit=MAX_SHOWN_CHARS))
            continue
        removals = report.removed.get(policy.name, [])
        removed = "\n".join(f"{'' if r.done else 'LEFT: '}{r.line}" for r in removals) or "not closed yet"
        left = any(not r.done for r in removals)
        for number, agent in enumerate(policy.agents):
            first = number == 0
            table.add_row(
                policy.title if first else "",
                literal(agent.name),
                literal(agent.client),
                _answered(report, policy.name, agent.name),
                literal("\n".join(agent.memories), limit=MAX_SHOWN_CHARS),
                literal(removed, "bold red" if left else "", limit=MAX_SHOWN_CHARS) if first else "",
            )
    return table


def _lab_time(seconds: float, framework: float) -> str:
    """A policy's time, with the framework's share where it is most of it."""
    if framework > seconds / 2:
        return f"{seconds:.2f} s ({framework:.2f} s in the framework's providers)"
    return f"{seconds:.2f} s"


def stop_line(report: DriftReport) -> str | None:
    """The one line that says why the comparison stopped, or None."""
    if report.stop is None:
        return None
    where = f"{report.titles.get(report.stop.policy, report.stop.policy)}, turn {report.stop.turn:,}"
    return f"stopped at {where} ({report.stop.cause}): {visible(report.stop.reason)}"


def failure_lines(report: DriftReport) -> list[str]:
    """One line per policy that failed while the others went on (the stop has its own line)."""
    stopped = report.stop.policy if report.stop else None
    return [
        f"{report.titles.get(name, name)} failed at turn {failure.turn:,}: {visible(failure.reason)}; its cells from "
        "that turn on are not measured"
        for name, failure in report.failures.items()
        if name != stopped
    ]


def warning_lines(report: DriftReport) -> list[str]:
    """What the libraries warned during each policy's run, one line per kind of warning, with its count."""
    return [
        f"{report.titles.get(name, name)}: the library warned {w.count:,} time{'' if w.count == 1 else 's'}"
        f"{'' if w.first_turn is None else f' (first at turn {w.first_turn:,})'}: {w.message}"
        for name, warned in report.warnings.items()
        for w in warned.values()
    ]


# A chart wider than this is no easier to read (and piped output has no width of its own).
MAX_CHART_WIDTH = 160


class SizeChart:
    """The per-turn request sizes as a chart as wide as the console it is printed on, up to
    MAX_CHART_WIDTH columns."""

    def __init__(self, report: DriftReport, *, height: int = 22) -> None:
        self.report = report
        self.height = height

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        story = self.report.chronology
        # The name is the user's text; plotext draws it and the chart is read back as ANSI.
        title = f"request size at every turn · {visible(story.name)} · {story.turns:,} turns"
        yield Text.from_ansi(
            chart_text(
                self.report.sizes,
                self.report.titles,
                title,
                width=min(options.max_width, MAX_CHART_WIDTH),
                height=self.height,
            )
        )


def size_chart(report: DriftReport) -> SizeChart:
    return SizeChart(report)


def chosen_note(report: DriftReport) -> str:
    """` · 2 of 11 policies chosen` when the run was asked for some policies only, else empty: a policy
    missing from the tables was left out, not lost."""
    if not report.left_out:
        return ""
    return f" · {len(report.policies)} of {len(report.policies) + len(report.left_out)} policies chosen"


def render(report: DriftReport, *, timing: bool = True, chart: bool = True) -> Group:
    took = f" · {report.seconds:.2f} s" if timing else ""
    partial = " · PARTIAL" if report.partial else ""
    head = f"drift lab · {report.chronology.name} · {report.chronology.turns} turns{chosen_note(report)}{took}{partial}"
    parts: list[Any] = [Text(visible(head), "bold")]
    if line := stop_line(report):
        parts.append(Text(line, "bold red"))
    parts += [literal(line, "red", limit=MAX_SHOWN_CHARS) for line in failure_lines(report)]
    parts += [literal(line, "yellow", limit=MAX_SHOWN_CHARS) for line in warning_lines(report)]
    parts += [*matrix_tables(report), *answer_tables(report), accounting_table(report, timing=timing)]
    if (yours := yours_table(report)) is not None:
        parts.append(yours)
    if chart:
        parts.append(size_chart(report))
    parts.append(Text(NOTE, "dim"))
    return Group(*parts)


SWEEP_COLUMNS = ("turns", "policy", "request chars at the last probe", "chars sent (all calls)", "calls", "lab time")


def sweep_table(sweep: Sweep) -> Table:
    chosen = chosen_note(sweep.reports[0]) if sweep.reports else ""
    table = titled_table(f"sweep · {sweep.chronology.name}{chosen} · model: {sweep.model}", SWEEP_COLUMNS)
    for report in sweep.reports:
        for policy in report.policies:
            cost = report.accounting.get(policy.name)
            if cost is None:
                table.add_row(f"{report.chronology.turns:,}", policy.title, _missing(report, policy.name))
                continue
            size = report.last_probe_chars(policy.name)
            table.add_row(
                f"{report.chronology.turns:,}",
                policy.title,
                f"{size:,}"
                if size is not None
                else _missing(report, policy.name)
                if policy.name in report.failures
                else Text("not reached", "dim"),
                f"{cost.request_chars:,}",
                str(sum(cost.calls.values())),
                f"{cost.seconds:.2f} s",
            )
        table.add_section()
    return table


def render_sweep(sweep: Sweep) -> Group:
    parts: list[Any] = [sweep_table(sweep)]
    if sweep.reports:
        parts.append(size_chart(sweep.reports[-1]))
    for report in sweep.reports:
        turns = f"{report.chronology.turns:,} turns: "
        parts += [literal(turns + line, "red", limit=MAX_SHOWN_CHARS) for line in failure_lines(report)]
    if sweep.stopped and (line := stop_line(sweep.stopped)):
        parts.append(Text(f"{sweep.stopped.chronology.turns:,} turns: {line} (partial)", "bold red"))
    parts.append(Text(NOTE, "dim"))
    return Group(*parts)
