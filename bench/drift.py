"""Drift lab growth on the built-in model: each policy's request at the last probe, and the lab's run
time, for 10, 100 and 1,000 turns. Run on demand:

    python bench/drift.py [--turns 10 100 1000]

Sizes are characters of the request as sent (instructions plus messages); the built-in model reports
no tokens, so none are shown. Times are wall-clock for the whole lab (five policies, every turn).
"""

from __future__ import annotations

import argparse
import asyncio

from workbench.drift import POLICIES, run_drift
from workbench.runtime import ModelConfig, build_models


async def main(sizes: list[int]) -> None:
    models = build_models(ModelConfig())
    rows = []
    for turns in sizes:
        report = await run_drift(models, turns=turns)
        last = report.chronology.expectations[-1].probe
        rows.append((turns, report.seconds, {p.name: report.scores[p.name][last].request_chars for p in POLICIES}))
    names = [p.name for p in POLICIES]
    print(f"{'turns':>6} {'lab s':>8} " + " ".join(f"{n:>11}" for n in names) + "   (request chars at the last probe)")
    for turns, seconds, sizes_by_policy in rows:
        print(f"{turns:>6} {seconds:>8.2f} " + " ".join(f"{sizes_by_policy[n]:>11,}" for n in names))


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--turns", type=int, nargs="+", default=[10, 100, 1000])
    asyncio.run(main(parser.parse_args().turns))
