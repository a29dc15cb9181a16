"""A forget is a barrier, at random instants, for longer than the suite runs it: seeded schedules that ask
turns on both agents and forgets (`tests/runtime/forget_schedules.py`), start awaiting them in another
order and yield to the event loop between, in both modes, on the built-in model. Prints how many
schedules and random decisions ran, and every schedule that broke the barrier (a turn that started
before a forget asked before it took effect, or a turn asked after the last forget missing from its
agent's history); exit 1 if any did.

    python3 bench/forget_barrier.py                    # 2,000 schedules
    python3 bench/forget_barrier.py --schedules 10000 --load 2

`--load N` runs N busy processes beside it while it runs (a loaded machine), stopped when it ends.
"""

from __future__ import annotations

import argparse
import asyncio
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.runtime.forget_schedules import run
from workbench.runtime import Mode


async def schedules(count: int, first: int) -> int:
    began = time.perf_counter()
    broken = decisions = 0
    for seed in range(first, first + count):
        done = await run(seed, (Mode.MANUAL, Mode.PROVIDER)[seed % 2])
        decisions += done.decisions
        if done.broken:
            broken += 1
            print(f"seed {seed} ({done.mode}): {'; '.join(done.broken[:3])}", flush=True)
    took = time.perf_counter() - began
    print(f"{count:,} schedules, {decisions:,} random decisions, both modes, {took:.1f} s: {broken} broke the barrier")
    return broken


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--schedules", type=int, default=2_000)
    parser.add_argument("--seed", type=int, default=0, help="the first schedule's seed")
    parser.add_argument("--load", type=int, default=0, help="busy processes to run beside it")
    args = parser.parse_args()
    busy = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(args.load)]
    try:
        broken = asyncio.run(schedules(args.schedules, args.seed))
    finally:
        for process in busy:
            process.kill()
            process.wait()
    return 1 if broken else 0


if __name__ == "__main__":
    sys.exit(main())
