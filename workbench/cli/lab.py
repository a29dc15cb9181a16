"""`workbench qualify` and `workbench drift`: the contract suite and the drift lab, run from the command
line, their reports printed, their exit statuses."""

from __future__ import annotations

import argparse
import asyncio
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from workbench.cli.output import print_report, say, stopped
from workbench.runtime.config import ConfigError, ModelConfig

if TYPE_CHECKING:
    from workbench.agentmem.mem0_config import Mem0Config
    from workbench.build.config import StartConfig
    from workbench.chronology import Chronology
    from workbench.drift.copies import Refused
    from workbench.drift.lab import DriftReport
    from workbench.drift.sweep import Sweep
    from workbench.loading import LoadedAgent


# `workbench qualify` without --model checked the suite, not a model: never exit 0, so no CI job reads it
# as a qualification.
NOT_QUALIFIED = 4


def run_qualify_command(args: argparse.Namespace, start: StartConfig) -> int:
    from workbench.progress import stderr_progress
    from workbench.qualify import QualifyStopped, run_qualify
    from workbench.qualify.report import render, to_json
    from workbench.runtime import build_models

    try:
        with stderr_progress(wanted=not getattr(args, "json", False)) as progress:
            models = build_models(start.model)
            report = asyncio.run(
                run_qualify(models, timeout=start.model.timeout, progress=progress, configured=start.contract)
            )
    except QualifyStopped as exc:
        stopped("qualify", exc)
        return 1
    print_report(args, to_json(report), render(report))
    if not report.all_passed:
        return 3
    return NOT_QUALIFIED if report.self_check else 0


def _drift_mem0(args: argparse.Namespace, config: ModelConfig) -> Mem0Config | None:
    """Mem0's model and embedder for the lab's Mem0 policy, when this run can give them (a live model
    and --embedding-model); else None, and the report says what that policy needs."""
    embedding_model = getattr(args, "embedding_model", None)
    if not config.is_live or not embedding_model:
        return None
    from workbench.agentmem.mem0_config import Mem0Config

    return Mem0Config.from_options(
        config, embedding_model=embedding_model, embedding_base_url=getattr(args, "embedding_base_url", None)
    )


def _your_stores_lines(stores: Sequence[str], refused: Sequence[Refused], *, allowed: bool) -> list[str]:
    """What the lab does with the user's agents' stores, before it runs: on stores of its own (`stores`,
    the kinds `lab_stores` names, said only when there is one), and each memory it cannot redirect, in a
    line (not run without the option; with it, run where it writes)."""
    from workbench.drift.copies import ALLOW_OPTION

    lines = []
    if stores:
        but = " but for those named below" if refused and allowed else ""
        lines.append(
            f"your agents' memories run on stores of the lab's own ({' and '.join(stores)}), removed afterwards; "
            f"your own stores are not written{but}"
        )
    for cannot in refused:
        if allowed:
            lines.append(f"{cannot.describe()}: run as it is ({ALLOW_OPTION}): the story is written into your store")
        else:
            lines.append(f"{cannot.describe()}: its agent's rows are not run (give {ALLOW_OPTION} to run them there)")
    return lines


@dataclass(frozen=True)
class LabAsked:
    """What `workbench drift` was asked to run, checked before anything runs."""

    story: Chronology
    lengths: tuple[int, ...] | None  # --sweep
    turns: int | None  # --turns
    policies: tuple[str, ...] | None  # --policies
    chosen: frozenset[str] | None  # the policies that will run (None: all)
    mem0: Mem0Config | None
    allowed: bool  # --lab-writes-to-your-stores


def run_drift_command(args: argparse.Namespace, start: StartConfig, loaded: Sequence[LoadedAgent] = ()) -> int:
    """The report, whole or partial; a stop adds one line on stderr and exits 1. A usage error or a
    chronology that is not valid exits 2 before anything runs. A chronology file is read under the run's
    contract; the built-in one is the seed's story and runs on the seed's (a line says so when the run
    declares another)."""
    from workbench.build.opening import StartFailed, check_agents_folders

    asked = _lab_asked(args, start, loaded)
    if isinstance(asked, int):
        return asked
    _say_your_stores(asked, loaded)
    try:
        check_agents_folders([item.agent for item in loaded])
    except StartFailed as exc:
        say("drift", str(exc))
        return 1
    return _reported(args, _run_lab(args, start.model, asked, loaded))


def _lab_asked(args: argparse.Namespace, start: StartConfig, loaded: Sequence[LoadedAgent]) -> LabAsked | int:
    """The run the options ask for, or the exit status of a usage error (said in one line)."""
    from workbench.drift import ChronologyError, load_chronology, load_chronology_file
    from workbench.drift.catalog import UnknownPolicy, chosen_policies

    contract = start.contract
    path = getattr(args, "chronology", None)
    lengths: tuple[int, ...] | None = getattr(args, "sweep", None)
    turns: int | None = getattr(args, "turns", None)
    if lengths is not None and turns is not None:
        say("drift", "--sweep and --turns cannot be combined: --sweep gives the lengths (see --help)")
        return 2
    policies: tuple[str, ...] | None = getattr(args, "policies", None)
    try:
        chosen = chosen_policies(policies, loaded)
    except UnknownPolicy as exc:
        say("drift", f"argument --policies: {exc} (see --help)")
        return 2
    try:
        story = load_chronology_file(path, contract) if path else load_chronology()
        for length in lengths or ((turns,) if turns is not None else ()):
            story.check_length(length)
        mem0 = _drift_mem0(args, start.model)
    except (ChronologyError, ConfigError) as exc:
        say("drift", str(exc))
        return 2
    except ValueError as exc:
        option = "--sweep" if lengths is not None else "--turns"
        say("drift", f"argument {option}: {exc} (see --help)")
        return 2
    if not path and not contract.is_seed:
        say(
            "drift",
            "the built-in chronology is the seed's story: it runs on the seed's contract, not this run's "
            f"({contract.describe()}); give your own with --chronology FILE",
        )
    allowed = getattr(args, "lab_writes_to_your_stores", False)
    return LabAsked(story, lengths, turns, policies, chosen, mem0, allowed)


def _say_your_stores(asked: LabAsked, loaded: Sequence[LoadedAgent]) -> None:
    """Where the user's agents' memories run, when any of their rows runs."""
    from workbench.drift.yours_policy import PREFIX

    if loaded and (asked.chosen is None or any(name.startswith(PREFIX) for name in asked.chosen)):
        from workbench.drift.copies import lab_stores, refused

        agents = [item.agent for item in loaded]
        for line in _your_stores_lines(lab_stores(agents), refused(agents), allowed=asked.allowed):
            say("drift", line)


def _run_lab(
    args: argparse.Namespace, config: ModelConfig, asked: LabAsked, loaded: Sequence[LoadedAgent]
) -> DriftReport | Sweep:
    """The lab's run (a sweep with --sweep), with a progress display on stderr unless --json. The report
    is printed once the display is gone: printed while it is live, the two share the terminal and the
    display's clearing leaves a line, or a bar, behind."""
    from workbench.drift import run_drift
    from workbench.drift.sweep import run_sweep
    from workbench.progress import stderr_progress
    from workbench.runtime import build_models

    with stderr_progress(wanted=not getattr(args, "json", False)) as progress:

        def show(policy: str, turn: int, total: int) -> None:
            assert progress is not None
            progress(f"{policy} · {total:,} turns", turn, total)

        sink = show if progress else None
        # With a live model the memory-files policy's agents call the file_memory_* functions.
        models = build_models(config, function_calls=config.is_live)
        if asked.lengths is not None:
            return asyncio.run(
                run_sweep(
                    models,
                    asked.lengths,
                    chronology=asked.story,
                    progress=sink,
                    mem0=asked.mem0,
                    agents=loaded,
                    policies=asked.policies,
                    allow_your_stores=asked.allowed,
                )
            )
        return asyncio.run(
            run_drift(
                models,
                turns=asked.turns,
                chronology=asked.story,
                progress=sink,
                mem0=asked.mem0,
                agents=loaded,
                policies=asked.policies,
                allow_your_stores=asked.allowed,
            )
        )


def _reported(args: argparse.Namespace, outcome: DriftReport | Sweep) -> int:
    """`outcome` printed, what it left behind or where it stopped said on stderr; the exit status."""
    from workbench.drift.report import render, render_sweep, stop_line
    from workbench.drift.report_json import sweep_json, to_json
    from workbench.drift.sweep import Sweep

    if isinstance(outcome, Sweep):
        reports, stopped, failed = outcome.reports, outcome.stopped, outcome.failed
        print_report(args, sweep_json(outcome), render_sweep(outcome))
    else:
        reports, stopped, failed = [outcome], outcome if outcome.partial else None, list(outcome.failures)
        print_report(args, to_json(outcome), render(outcome))
    left = [(name, removal) for run in reports for name, removal in run.left_behind]
    for name, removal in left:
        say("drift", f"{name}: left behind: {removal.line}")
    if stopped is not None:
        say("drift", f"{stop_line(stopped)} (the report above is partial)")
        return 1
    if left:
        return 1
    titles = reports[-1].titles if reports else {}
    if failed:
        names = ", ".join(dict.fromkeys(titles.get(name, name) for name in failed))
        others = ", the other policies went on" if set(titles) - set(failed) else ""  # --policies may name one
        say("drift", f"{names}: failed{others} (the report above marks the cells)")
    return 0
