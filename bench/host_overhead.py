"""One turn's host overhead: parse, verify, admit, record events. Run on demand:

    python bench/host_overhead.py [--turns 2000]

Reports medians in microseconds over many turns in one process, beside one whole turn on the
built-in model (agent call, writer call, admission) for scale. Not a test: nothing asserts speed.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import time

from workbench.memory import Extraction, WorkingMemory, declared_candidates
from workbench.runtime import ModelConfig, build_models
from workbench.session.assemble import assemble

MESSAGES = [
    "module=Reporting; database=PostgreSQL",
    "module=Billing; database=SQL Server 2022",
    "constraint=no downtime during business hours; customer=Contoso; priority=high",
    "Where can I find logs?",
    "version=12.4.1\nenvironment=production\nsymptom=exports time out after 30 s",
]


def host_turn_us(turns: int) -> list[float]:
    """Per turn: the writer's JSON parsed into candidates, then the host check and store update."""
    memory = WorkingMemory()
    replies = [Extraction(facts=declared_candidates(m)).model_dump_json() for m in MESSAGES]
    samples = []
    for i in range(turns):
        text, reply = MESSAGES[i % len(MESSAGES)], replies[i % len(MESSAGES)]
        start = time.perf_counter_ns()
        turn = memory.begin_turn(text, "support")
        candidates = Extraction.model_validate_json(reply).facts
        memory.admit(turn, candidates)
        samples.append((time.perf_counter_ns() - start) / 1000)
    return samples


async def scripted_turn_us(turns: int) -> list[float]:
    runtime = assemble(build_models(ModelConfig())).runtime
    samples = []
    for i in range(turns):
        start = time.perf_counter_ns()
        await runtime.ask("support" if i % 2 else "logs", MESSAGES[i % len(MESSAGES)])
        samples.append((time.perf_counter_ns() - start) / 1000)
        if i % 20 == 19:
            await runtime.forget()  # keep histories short: measure a turn, not history growth
    return samples


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--turns", type=int, default=2000)
    args = parser.parse_args()
    host = host_turn_us(args.turns)
    whole = asyncio.run(scripted_turn_us(max(50, args.turns // 10)))
    print(f"{'measure':<52}{'median us':>12}{'p90 us':>12}")
    for name, samples in (
        ("host overhead per turn (parse, verify, admit, event)", host),
        ("whole turn on the built-in model (2 model calls)", whole),
    ):
        p90 = statistics.quantiles(samples, n=10)[-1]
        print(f"{name:<52}{statistics.median(samples):>12.1f}{p90:>12.1f}")
    print(f"host share of a built-in turn: {statistics.median(host) / statistics.median(whole):.1%}")


if __name__ == "__main__":
    main()
