"""Drift lab growth on the built-in model, side by side with another commit's lab, in one run.

    python bench/drift.py [--turns 10 100 1000] [--against REV] [--only full,facts]

For each length: each policy's request size at the last probe, characters sent, calls and lab time
(this checkout), then the whole lab's time at that length for REV (default: the previous commit,
HEAD~1), extracted with `git archive` and run in a subprocess on the same machine, interleaved so
both see the same load. Both runs hash every agent request each policy sent; "same requests"
says whether the two labs sent byte-identical requests (policies present in both). Sizes are
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

ROOT = Path(__file__).resolve().parent.parent

# Run inside a subprocess, with the checkout to measure first on sys.path.
PROBE = r"""
import asyncio, hashlib, json, sys, time
sys.path.insert(0, sys.argv[1])
from workbench.drift import lab, policies, run_drift
from workbench.runtime import ModelConfig, build_models
from workbench.runtime.calls import CallLog

only = set(sys.argv[3].split(",")) if sys.argv[3] else None
logs = []

class Recording(CallLog):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        logs.append(self)

lab.CallLog = Recording
if only:
    build = policies.build_policies
    lab.build_policies = lambda models, calls: [p for p in build(models, calls) if p.info.name in only]
started = time.perf_counter()
report = asyncio.run(run_drift(build_models(ModelConfig()), turns=int(sys.argv[2])))
seconds = time.perf_counter() - started
digests = {}
for call in logs[0].records(purpose="agent"):
    text = "\x00".join([call.instructions, *(m.role + ":" + m.text for m in call.messages)])
    digests.setdefault(call.origin, hashlib.sha256()).update(text.encode() + b"\x01")
last = report.chronology.expectations[-1].probe
print(json.dumps({
    "seconds": seconds,
    "digests": {k: v.hexdigest() for k, v in digests.items()},
    "policies": {
        name: {
            "last_probe_chars": report.scores[name][last].request_chars if last in report.scores[name] else None,
            "chars_sent": cost.request_chars,
            "calls": sum(cost.calls.values()),
            "seconds": getattr(cost, "seconds", None),
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


def measure(tree: Path, turns: int, only: str) -> dict:
    out = subprocess.run(
        [sys.executable, "-c", PROBE, str(tree), str(turns), only], check=True, capture_output=True, text=True
    )
    return json.loads(out.stdout)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--turns", type=int, nargs="+", default=[10, 100, 1000])
    parser.add_argument("--against", default="HEAD~1", help="the revision to compare with (default: HEAD~1)")
    parser.add_argument("--only", default="", help="comma-separated policy names to run (default: all)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        previous = checkout(args.against, Path(tmp))
        print(f"{'turns':>6} {'policy':<14} {'last probe':>11} {'chars sent':>12} {'calls':>6} {'lab s':>8}")
        for turns in args.turns:
            now = measure(ROOT, turns, args.only)
            before = measure(previous, turns, args.only)
            for name, cell in now["policies"].items():
                size = f"{cell['last_probe_chars']:,}" if cell["last_probe_chars"] is not None else "-"
                print(
                    f"{turns:>6} {name:<14} {size:>11} {cell['chars_sent']:>12,} {cell['calls']:>6} "
                    f"{cell['seconds']:>8.2f}"
                )
            shared = set(now["digests"]) & set(before["digests"])
            same = all(now["digests"][k] == before["digests"][k] for k in shared)
            ratio = before["seconds"] / now["seconds"] if now["seconds"] else float("nan")
            print(
                f"{turns:>6} whole lab: {now['seconds']:.2f} s here, {before['seconds']:.2f} s at {args.against} "
                f"({ratio:.2f}x); same requests for {', '.join(sorted(shared))}: {'yes' if same else 'NO'}"
            )


if __name__ == "__main__":
    main()
