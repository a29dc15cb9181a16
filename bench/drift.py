"""Drift lab growth on the built-in model, side by side with another commit's lab, in one run.

    python bench/drift.py [--turns 10 100 1000] [--against REV] [--only full,facts]

For each length: each policy's request size at the last probe, characters sent, calls and lab time
(this checkout) beside its time at REV (default: the previous commit, HEAD~1), then both whole labs'
times and peak resident memory at that length (each lab runs in a process of its own: its
ru_maxrss). REV is extracted with `git archive` and run in a subprocess on the same
machine, interleaved so both see the same load. Both runs hash every agent request each policy
sent; "same requests" names the policies (present in both) whose two labs sent byte-identical
requests, and for any other the first call that differs and whether only the model's earlier
replies differ (the built-in model's wording changed) or what the policy chose to send; "same scores"
names those whose every probe scored the same, answers included (a speed change must keep them). Sizes are
characters of the request as sent; the built-in model reports no tokens, so none are shown.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent

# Run inside a subprocess, with the checkout to measure first on sys.path.
PROBE = r"""
import asyncio, dataclasses, hashlib, json, resource, sys, time
sys.path.insert(0, sys.argv[1])
from workbench.drift import lab, policies, run_drift
from workbench.runtime import ModelConfig, build_models

only = set(sys.argv[3].split(",")) if sys.argv[3] else None
digests, calls, asked = {}, {}, {}
# Older checkouts' labs keep every call in a CallLog; now a LabCallLog keeps the latest few. Either way
# each agent request is hashed as it starts, so the bench itself keeps no request's text.
kept = "LabCallLog" if hasattr(lab, "LabCallLog") else "CallLog"

class Recording(getattr(lab, kept)):
    def start(self, purpose, model, instructions, messages):
        messages = tuple(messages)
        record = super().start(purpose, model, instructions, messages)
        if purpose == "agent":
            sent = [role + ":" + text for role, text in messages]
            text = "\x00".join([instructions, *sent])
            digests.setdefault(record.origin, hashlib.sha256()).update(text.encode() + b"\x01")
            calls.setdefault(record.origin, []).append(hashlib.sha256(text.encode()).hexdigest()[:16])
            # The same request without the model's own earlier replies: what the policy chose to send.
            chosen = "\x00".join([instructions, *(m for m in sent if not m.startswith("assistant:"))])
            asked.setdefault(record.origin, []).append(hashlib.sha256(chosen.encode()).hexdigest()[:16])
        return record

setattr(lab, kept, Recording)
if only:
    # Older checkouts built the policies in drift/policies.py; now drift/catalog.py does.
    build = getattr(policies, "build_policies", None)
    if build is None:
        from workbench.drift.catalog import build_policies as build
    lab.build_policies = lambda models, calls, **options: [
        p for p in build(models, calls, **options) if p.info.name in only
    ]
started = time.perf_counter()
report = asyncio.run(run_drift(build_models(ModelConfig()), turns=int(sys.argv[2])))
seconds = time.perf_counter() - started
last = report.chronology.expectations[-1].probe
print(json.dumps({
    "seconds": seconds,
    "peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
    "digests": {k: v.hexdigest() for k, v in digests.items()},
    # Every score of every probe (what each request held, the answer and its score), as the report's JSON
    # gives them: the lab's verdicts, which a speed change must leave as they were.
    "scores": {
        name: hashlib.sha256(json.dumps(
            {probe: dataclasses.asdict(score) for probe, score in sorted(cells.items())}, sort_keys=True, default=str
        ).encode()).hexdigest()
        for name, cells in report.scores.items()
    },
    "calls": calls,
    "asked": asked,
    "policies": {
        name: {
            "last_probe_chars": report.scores[name][last].request_chars if last in report.scores[name] else None,
            "chars_sent": cost.request_chars,
            "calls": sum(cost.calls.values()),
            "seconds": getattr(cost, "seconds", None),
            "framework_seconds": getattr(cost, "framework_seconds", None),
        }
        for name, cost in report.accounting.items()
    },
}))
"""


def checkout(rev: str, into: Path) -> Path:
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", rev, "workbench"], check=True, capture_output=True)
    path = into / "archive.tar"
    path.write_bytes(archive.stdout)
    with tarfile.open(path) as tar:
        tar.extractall(into, filter="data")
    return into


def measure(tree: Path, turns: int, only: str) -> dict[str, Any]:
    out = subprocess.run(
        [sys.executable, "-c", PROBE, str(tree), str(turns), only], check=True, capture_output=True, text=True
    )
    measured: dict[str, Any] = json.loads(out.stdout)
    return measured


def compare_requests(now: dict[str, Any], before: dict[str, Any]) -> list[str]:
    """Whether both labs sent byte-identical requests, per policy present in both; where not, the
    first call that differs, and whether they differ only in the model's earlier replies (the
    built-in model's wording changed), the policy having sent the same instructions and user text."""
    shared = sorted(set(now["digests"]) & set(before["digests"]))
    same = [name for name in shared if now["digests"][name] == before["digests"][name]]
    scored = sorted(set(now["scores"]) & set(before.get("scores", {})))
    differ = [name for name in scored if now["scores"][name] != before["scores"][name]]
    lines = [
        f"same scores (every probe's score and answer): {', '.join(n for n in scored if n not in differ) or 'none'}",
        *(f"DIFFERENT scores for {name}" for name in differ),
        f"same requests: {', '.join(same) or 'none'}",
    ]
    for name in (n for n in shared if n not in same):
        first = next(
            (i for i, (a, b) in enumerate(zip(now["calls"][name], before["calls"][name], strict=False), 1) if a != b),
            min(len(now["calls"][name]), len(before["calls"][name])) + 1,
        )
        if now["asked"][name] == before["asked"][name]:
            why = "the same instructions and user text in every call; only the model's earlier replies differ"
        else:
            why = "what the policy sent differs"
        lines.append(f"DIFFERENT requests for {name} from call {first}: {why}")
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--turns", type=int, nargs="+", default=[10, 100, 1000])
    parser.add_argument("--against", default="HEAD~1", help="the revision to compare with (default: HEAD~1)")
    parser.add_argument("--only", default="", help="comma-separated policy names to run (default: all)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        previous = checkout(args.against, Path(tmp))
        rev = args.against[:10]
        print(
            f"{'turns':>6} {'policy':<14} {'last probe':>11} {'chars sent':>12} {'calls':>6} {'lab s':>8} "
            f"{'s at ' + rev:>16}"
        )
        for turns in args.turns:
            now = measure(ROOT, turns, args.only)
            before = measure(previous, turns, args.only)
            for name, cell in now["policies"].items():
                size = f"{cell['last_probe_chars']:,}" if cell["last_probe_chars"] is not None else "-"
                then = (before["policies"].get(name) or {}).get("seconds")
                print(
                    f"{turns:>6} {name:<14} {size:>11} {cell['chars_sent']:>12,} {cell['calls']:>6} "
                    f"{cell['seconds']:>8.2f} {'-' if then is None else f'{then:.2f}':>16}"
                )
            ratio = before["seconds"] / now["seconds"] if now["seconds"] else float("nan")
            print(
                f"{turns:>6} whole lab: {now['seconds']:.2f} s here, {before['seconds']:.2f} s at {args.against} "
                f"({ratio:.2f}x)"
            )
            print(
                f"{turns:>6} peak resident memory: {now['peak_mb']:,.0f} MB here, {before['peak_mb']:,.0f} MB at "
                f"{args.against}"
            )
            framework = {n: c["framework_seconds"] for n, c in now["policies"].items() if c["framework_seconds"]}
            if framework:
                shares = ", ".join(f"{n} {s:.2f} s" for n, s in framework.items())
                print(
                    f"{turns:>6}   in the framework's providers (FileHistoryProvider, MemoryContextProvider): {shares}"
                )
            only_here = sorted(set(now["policies"]) - set(before["policies"]))
            if only_here:
                print(f"{turns:>6}   (the lab here also runs {', '.join(only_here)}: --only compares the same ones)")
            for line in compare_requests(now, before):
                print(f"{turns:>6}   {line}")


if __name__ == "__main__":
    main()
