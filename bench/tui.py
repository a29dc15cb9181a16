"""TUI speed: appending to a long conversation, and start-up against a bare Textual app. Run on demand:

    python bench/tui.py [--runs 15]

Everything runs headless in one process and reports medians; compare the ratios, not the
absolute times (shared machines are noisy). Targets (issue 17): the append to a 1,000-message
pane within 1.1x of the append to a 10-message pane; start-up within 1.25x of a bare app, a target
issue 28 replaced with one against the apps people already run (bench/startup.py).
"""

from __future__ import annotations

import argparse
import asyncio
import compileall
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from textual.app import App, ComposeResult
from textual.widgets import Footer, Header, Static

import workbench
from workbench.memory import MemoryTurn
from workbench.runtime import ModelConfig, TurnResult, build_models
from workbench.session.assemble import assemble
from workbench.session.controller import TurnOutcome
from workbench.ui.app import WorkbenchApp
from workbench.ui.messages import Streamed, TurnEnded

REPLY = "**support** (scripted) on: a question\n- Working memory: empty.\n- History: none.\n- Next step: check."
SIZE = (140, 40)


def make_app() -> WorkbenchApp:
    return WorkbenchApp(assemble(build_models(ModelConfig())))


class BareApp(App[None]):
    def compose(self) -> ComposeResult:
        yield Header()
        yield Static("bare")
        yield Footer()


async def append_ms(history: int, runs: int) -> list[float]:
    """Milliseconds to show one more exchange (a user message, its streamed reply, the finished
    answer) in a pane that already holds `history` messages, until the screen has refreshed."""
    app = make_app()
    samples = []
    async with app.run_test(size=SIZE) as pilot:
        pane = app.pane("support")
        outcome = TurnOutcome(TurnResult("support", MemoryTurn(0, 0, ""), reply=REPLY))

        async def exchange(question: str) -> None:
            """One turn as the pane's worker draws it, to the end."""
            turns = pane.turns
            await pane.begin(question)
            for message in (Streamed(REPLY), TurnEnded("support", outcome)):
                pane.post_message(message)
            while pane.turns == turns or pane.busy:
                await asyncio.sleep(0.001)
            await app.workers.wait_for_complete()

        for i in range(history // 2):
            await exchange(f"question {i}")
        await pilot.pause()
        for i in range(runs):
            start = time.perf_counter()
            await exchange(f"one more question {i}")
            await pilot.pause()
            samples.append((time.perf_counter() - start) * 1000)
    return samples


async def startup_ms(factory: Callable[[], App[Any]], runs: int) -> list[float]:
    """Milliseconds from constructing the app, in this process, to its first frame."""
    samples = []
    for _ in range(runs):
        start = time.perf_counter()
        async with factory().run_test(size=SIZE):
            samples.append((time.perf_counter() - start) * 1000)
    return samples


BARE_APP = """
from textual.app import App
from textual.widgets import Footer, Header, Static

class BareApp(App):
    def compose(self):
        yield Header()
        yield Static("bare")
        yield Footer()

app = BareApp()
"""
# The Textual widgets the workbench's first frame shows, in the same places, with no workbench code:
# what Textual alone costs for them, so the ratio to it is what the workbench itself adds.
SKELETON_APP = """
from textual.app import App
from textual.containers import Container, Horizontal, Vertical, VerticalScroll
from textual.widgets import Button, DataTable, Footer, Header, Static, TextArea

class SkeletonApp(App):
    def compose(self):
        yield Header()
        with Horizontal():
            with Container():
                for agent in ("support", "logs"):
                    with Vertical(id=agent):
                        with VerticalScroll():
                            yield Static("hint")
                        yield Static("working")
                        yield TextArea()
            with Vertical():
                yield DataTable()
                yield Static("evidence")
                with VerticalScroll():
                    yield Static("latest change")
                yield Button("Forget all")
                with VerticalScroll():
                    yield Static("ledger")
        yield Footer()

app = SkeletonApp()
"""
# The `workbench` command's first step (`workbench.command`), then the app as its CLI builds it.
HOLD = """
from workbench.heap import hold_collections
hold_collections()
"""
WORKBENCH_APP = """
from workbench.cli.configs import model_config
from workbench.cli.parser import build_parser
from workbench.cli.start import build_app

args = build_parser().parse_args([])
app = build_app(args, model_config(args))
"""
FIRST_FRAME = """
import time

display = app._display  # Textual's hand-off of each frame to the terminal (private: no public hook)

def first_display(screen, renderable):
    display(screen, renderable)
    if renderable is not None and not app._batch_count:  # a frame, not one held back inside a batch
        print("first frame", time.monotonic(), flush=True)
        app._display = display
        app.exit()

app._display = first_display
app.run(headless=True, size={size!r})
"""
RUNTIME_READY = """
import asyncio

async def leave(pilot):
    while not pilot.app.ready:
        await asyncio.sleep(0.01)
    pilot.app.exit()

app.run(headless=True, size={size!r}, auto_pilot=leave)
"""


def process_startup_ms(codes: dict[str, str], runs: int) -> dict[str, list[float]]:
    """Milliseconds from starting a whole process (Python, imports, compose) to a point: its first
    frame (the moment Textual hands it to the terminal, which the child reports on the system-wide
    monotonic clock), or the agents ready (the process exits then). Shutting down is not counted for
    the first frame: nobody waits for it. The variants alternate run by run, so a busy moment on a
    shared machine weighs on all of them alike. The workbench is built exactly as `workbench` builds
    it (the CLI's own build_app)."""
    samples: dict[str, list[float]] = {name: [] for name in codes}
    for _ in range(runs):
        for name, code in codes.items():
            start = time.monotonic()
            done = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True)
            reported = [line.split()[-1] for line in done.stdout.splitlines() if line.startswith("first frame ")]
            end = float(reported[0]) if reported else time.monotonic()
            samples[name].append((end - start) * 1000)
    return samples


async def main(runs: int) -> None:
    # Textual's modules are installed compiled; the workbench's may not be (an editable install with
    # PYTHONDONTWRITEBYTECODE): compile them once so each start compares like with like, as a user's does.
    compileall.compile_dir(Path(workbench.__file__).parent, quiet=1)
    rows = []
    short = statistics.median(await append_ms(10, runs))
    long = statistics.median(await append_ms(1000, runs))
    rows.append(("append one exchange, pane holding 10 messages", short))
    rows.append(("append one exchange, pane holding 1,000 messages", long))
    starts = process_startup_ms(
        {
            "bare": BARE_APP + FIRST_FRAME.format(size=SIZE),
            "skeleton": SKELETON_APP + FIRST_FRAME.format(size=SIZE),
            "ours": HOLD + WORKBENCH_APP + FIRST_FRAME.format(size=SIZE),
            "unheld": WORKBENCH_APP + FIRST_FRAME.format(size=SIZE),
            "ready": HOLD + WORKBENCH_APP + RUNTIME_READY.format(size=SIZE),
        },
        runs,
    )
    bare, skeleton, ours, unheld, ready = (
        statistics.median(starts[k]) for k in ("bare", "skeleton", "ours", "unheld", "ready")
    )
    rows.append(("process start to first frame, bare Textual app", bare))
    rows.append(("process start to first frame, the same widgets alone", skeleton))
    rows.append(("process start to first frame, workbench", ours))
    rows.append(("the same, without holding the collector", unheld))
    rows.append(("process start to agents ready, workbench", ready))
    bare_in = statistics.median(await startup_ms(BareApp, runs))
    ours_in = statistics.median(await startup_ms(make_app, runs))
    rows.append(("in-process construct to first frame, bare app", bare_in))
    rows.append(("in-process construct to first frame, workbench", ours_in))
    print(f"{'measure (median of ' + str(runs) + ' runs)':<56}{'ms':>10}")
    for name, value in rows:
        print(f"{name:<56}{value:>10.1f}")
    print(f"append ratio 1,000 / 10 messages:        {long / short:.2f}x (target <= 1.1x)")
    print(f"process start-up ratio workbench / bare: {ours / bare:.2f}x (issue 17's target <= 1.25x, replaced)")
    print(f"the same, without holding the collector: {unheld / bare:.2f}x")
    print(f"the same widgets alone / bare:           {skeleton / bare:.2f}x (Textual's share)")
    print(f"workbench / the same widgets alone:      {ours / skeleton:.2f}x (the workbench's own share)")
    print(f"in-process first-frame ratio:            {ours_in / bare_in:.2f}x (more widgets to lay out and draw)")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=15)
    asyncio.run(main(parser.parse_args().runs))
