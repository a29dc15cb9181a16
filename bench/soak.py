"""Soak: many turns alternating both agents on the built-in model, with a forget every few turns.
Run on demand:

    python bench/soak.py [--turns 1000] [--forget-every 50] [--mode manual|provider]

Reports turns per second and the process's peak resident memory (ru_maxrss) at checkpoints
(100 and 1,000 turns among them), beside how full the bounded logs are (call log, ledger). Once the
bounded logs are full and forgets keep histories short, the peak must stop growing with turns: the
last column says how much it grew since the previous checkpoint. Not a test: nothing asserts speed.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import resource
import time

from workbench.runtime import AGENT_NAMES, Mode, ModelConfig, build_models
from workbench.session.assemble import assemble

CHECKPOINTS = (100, 250, 500, 750, 1000)


def message(i: int) -> str:
    """Declarations with values that differ every turn, some questions, some rejected batches."""
    kinds = (
        f"module=Module {i}; database=SQL Server {2000 + i % 30}",
        f"log=/var/log/app/{i}.log\nenvironment=staging-{i % 7}",
        "Where can I find logs, and what should I check first?",
        f"priority=p{i % 4}; symptom=exports time out after {i % 90} s; customer=Customer {i}",
        f"colour=red; module=Rejected {i}",  # an unknown key: the whole batch is rejected
    )
    return kinds[i % len(kinds)]


def peak_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux


async def soak(turns: int, forget_every: int, mode: Mode) -> None:
    runtime = assemble(build_models(ModelConfig()), mode=mode).runtime
    checkpoints = sorted({c for c in CHECKPOINTS if c <= turns} | {turns})
    print(f"soak: {turns} turns, {mode} mode, both agents in turn, a forget every {forget_every} turns")
    header = (
        f"{'turns':>6}{'turns/s (segment)':>19}{'turns/s (all)':>15}{'peak MiB':>10}"
        f"{'growth MiB':>12}{'call log':>10}{'ledger':>8}{'history':>9}"
    )
    print(header)
    failures = 0
    started = segment_start = time.perf_counter()
    done_before, peak_before = 0, peak_mib()
    for i in range(1, turns + 1):
        result = await runtime.ask(AGENT_NAMES[i % 2], message(i))
        failures += not result.ok
        if i % forget_every == 0:
            await runtime.forget(None if i % (2 * forget_every) == 0 else "module")
        if i in checkpoints:
            now = time.perf_counter()
            gc.collect()
            peak = peak_mib()
            history = sum(len(runtime.history(name)) for name in AGENT_NAMES)
            print(
                f"{i:>6}{(i - done_before) / (now - segment_start):>19.1f}{i / (now - started):>15.1f}"
                f"{peak:>10.1f}{peak - peak_before:>+12.1f}{len(runtime.calls.records()):>10}"
                f"{len(runtime.memory.ledger.latest()):>8}{history:>9}"
            )
            done_before, peak_before, segment_start = i, peak, time.perf_counter()
    print(f"failed turns: {failures}; open tickets at the end: {len(runtime.memory.open_tickets())}")
    print(f"the call log keeps the last {runtime.calls.capacity} calls; the ledger column stops at its bound")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--turns", type=int, default=1000)
    parser.add_argument("--forget-every", type=int, default=50)
    parser.add_argument("--mode", choices=[m.value for m in Mode], default=Mode.MANUAL.value)
    args = parser.parse_args()
    asyncio.run(soak(args.turns, args.forget_every, Mode(args.mode)))


if __name__ == "__main__":
    main()
