"""The same story stretched to several lengths, run one after another: how each policy grows."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from workbench.agentmem.mem0_config import Mem0Config
from workbench.chronology import MAX_TURNS, Chronology, load_chronology
from workbench.drift.lab import DriftReport, Progress, run_drift
from workbench.loading import LoadedAgent
from workbench.memory.shown import quoted
from workbench.runtime.models import ModelSet


@dataclass
class Sweep:
    chronology: Chronology
    lengths: tuple[int, ...]
    reports: list[DriftReport] = field(default_factory=list)

    @property
    def stopped(self) -> DriftReport | None:
        """The run that stopped (the sweep goes no further), if any."""
        return next((r for r in self.reports if r.partial), None)

    @property
    def failed(self) -> list[str]:
        """The policies that failed in some run (the others went on), in order."""
        return [name for report in self.reports for name in report.failures]

    @property
    def model(self) -> str:
        """The lab's model, as its first run named it ("?" before any run)."""
        return self.reports[0].model if self.reports else "?"


def parse_lengths(text: str) -> tuple[int, ...]:
    """`10,100,1000` as lengths, ascending and distinct, each at most MAX_TURNS; ValueError says what
    is wrong."""
    parts = text.split(",")
    if not all(part.strip().isascii() and part.strip().isdigit() for part in parts):
        raise ValueError(f"takes turn counts separated by commas, like 10,100,1000; not {quoted(text, 40)}")
    lengths = tuple(int(part) for part in parts)
    if any(n < 1 for n in lengths) or list(lengths) != sorted(set(lengths)):
        raise ValueError("lengths must be positive and ascending, each once, like 10,100,1000")
    if lengths[-1] > MAX_TURNS:
        raise ValueError(f"at most {MAX_TURNS:,} turns; {lengths[-1]:,} asked")
    return lengths


async def run_sweep(
    models: ModelSet,
    lengths: tuple[int, ...],
    *,
    chronology: Chronology | None = None,
    progress: Progress | None = None,
    mem0: Mem0Config | None = None,
    agents: Sequence[LoadedAgent] = (),
    policies: Sequence[str] | None = None,
    allow_your_stores: bool = False,
) -> Sweep:
    """Each length in turn; a stop ends the sweep and keeps the partial run. `agents`: the user's own,
    beside the built-in policies; `policies`: the only ones to run, `allow_your_stores` (`run_drift`'s)."""
    story = chronology or load_chronology()
    for turns in lengths:
        story.check_length(turns)  # every length is checked before anything runs
    sweep = Sweep(story, lengths)
    for turns in lengths:
        report = await run_drift(
            models,
            chronology=story.stretched(turns),
            progress=progress,
            mem0=mem0,
            agents=agents,
            policies=policies,
            allow_your_stores=allow_your_stores,
        )
        sweep.reports.append(report)
        if report.partial:
            break
    return sweep
