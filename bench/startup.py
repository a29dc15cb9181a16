"""Start-up against the apps people already run (issue 28), in a real pseudo-terminal. Run on demand:

    python bench/startup.py [--runs 11] [--warmup 1] [--apps workbench harlequin elia] [--json [FILE]]

Each app lives in its own virtual environment under a cache folder (--cache), made here on the first
run: the workbench installed from this tree with `pip install .` as the README says (again at every
run, so the figures are this tree's), harlequin and elia from PyPI at the releases pinned below (a
bench-only setup: neither is a dependency of the project). Each start is a new process in a new
pseudo-terminal of 120x36 (TERM=xterm-256color), with a fresh, empty HOME and XDG folders, nothing
else from this environment, and nothing that needs the network: harlequin on DuckDB in memory (its
default), elia on its first-run screen (it needs no key to start). The apps alternate run by run,
the order turning each run, so a busy moment on a shared machine weighs on all of them alike; the
first --warmup starts of each are not counted (they fill the page cache and write bytecode).

Everything the app writes is timestamped as it is read (a reader thread) and read into a terminal
emulator (pyte). Times are from the fork to the read that completed:
- first frame: every row of the screen drawn since the app switched to the alternate screen, its
  first-screen text among them: Textual's first full paint, loading indicators included;
- whole screen: the footer's key bindings drawn: the first screen with the parts an app
  loads after its first frame (harlequin's editor, elia's welcome, the workbench's runtime);
- ready (the workbench): the header's "starting" gone, the agents ready to answer.
The app is then killed: closing is not timed. Targets (issue 28): the workbench's first frame at most
0.5x the fastest peer's first frame, its ready at most 0.75x of it.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import datetime
import fcntl
import json
import os
import pty
import queue
import shutil
import signal
import statistics
import struct
import subprocess
import sys
import tempfile
import termios
import threading
import time
import venv
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pyte

ROOT = Path(__file__).resolve().parent.parent
ROWS, COLUMNS = 36, 120
ALTERNATE_SCREEN = 1049  # DEC private mode: the full-screen buffer every Textual app switches to
FIRST_FRAME_TARGET, READY_TARGET = 0.5, 0.75


@dataclasses.dataclass(frozen=True)
class Subject:
    """An app to start, and the texts that say how far its start has gone."""

    name: str
    requirement: str  # what pip installs into the app's own environment
    distribution: str  # its name for importlib.metadata
    argv: tuple[str, ...]  # the command (in the environment's bin/) and its arguments
    first_screen: str  # a text its first frame shows
    footer: str  # a text of its footer, shown once its first screen is whole
    runtime: bool = False  # its header says "starting" until its agents are ready
    env: Mapping[str, str] = dataclasses.field(default_factory=dict)


SUBJECTS = (
    Subject("workbench", str(ROOT), "workbench", ("workbench",), "workbench", "^q Quit", runtime=True),
    # --locale C: without it, on a machine whose locale is C, harlequin prints a warning box first.
    Subject("harlequin", "harlequin==2.17.0", "harlequin", ("harlequin", "--locale", "C"), "Data Catalog", "^q Quit"),
    # litellm fetches its price list when imported unless told not to; elia does not import it before
    # its first screen (no connect() under strace), and this keeps any start offline.
    Subject(
        "elia",
        "elia-chat==1.10.0",
        "elia-chat",
        ("elia",),
        "Elia",
        "esc Quit",
        env={"LITELLM_LOCAL_MODEL_COST_MAP": "True"},
    ),
)


class Screen(pyte.Screen):
    """pyte's screen, keeping which rows were drawn since the switch to the alternate screen."""

    def __init__(self) -> None:
        super().__init__(COLUMNS, ROWS)
        self.alternate = False
        self.drawn: set[int] = set()

    def set_mode(self, *modes: int, **kwargs: Any) -> None:
        if kwargs.get("private") and ALTERNATE_SCREEN in modes:
            self.alternate = True
            self.drawn.clear()
        super().set_mode(*modes, **kwargs)

    def draw(self, data: str) -> None:
        self.drawn.add(self.cursor.y)
        super().draw(data)

    def row(self, y: int) -> str:
        line = self.buffer[y]
        return "".join(line[x].data for x in range(self.columns))

    def text(self) -> str:
        return "\n".join(self.row(y) for y in range(self.lines))


class StartFailed(Exception):
    """A start that did not reach its point; says what was on the screen."""

    def __init__(self, why: str, screen: Screen) -> None:
        shown = "\n".join(line.rstrip() for line in screen.text().splitlines() if line.strip())
        super().__init__(f"{why}; the screen showed:\n{shown[-3000:]}" if shown else f"{why}; the screen was blank")


@dataclasses.dataclass(frozen=True)
class Start:
    """Milliseconds from the fork to each point of one start."""

    first_frame: float
    whole_screen: float
    ready: float | None
    bench_cpu: float = 0.0  # CPU this process spent meanwhile, reading and parsing (the app's rival for a core)


def read_all(fd: int, chunks: queue.Queue[tuple[float, bytes] | None]) -> None:
    """Everything the app writes, each read stamped when it returned; None once the terminal closes."""
    while True:
        try:
            data = os.read(fd, 65536)
        except OSError:  # EIO: every process holding the terminal has ended
            data = b""
        if not data:
            chunks.put(None)
            return
        chunks.put((time.monotonic(), data))


def watch(subject: Subject, chunks: queue.Queue[tuple[float, bytes] | None], start: float, timeout: float) -> Start:
    """Reads the app's output into the screen until each of its points is reached."""
    screen = Screen()
    stream = pyte.ByteStream(screen)
    first = whole = ready = None
    deadline = start + timeout
    while True:
        try:
            item = chunks.get(timeout=max(0.0, deadline - time.monotonic()))
        except queue.Empty:
            raise StartFailed(f"{subject.name} had not got there after {timeout:g} s", screen) from None
        if item is None:
            raise StartFailed(f"{subject.name} ended before it got there", screen)
        at, data = item
        stream.feed(data)
        ms = (at - start) * 1000
        if first is None:
            if screen.alternate and len(screen.drawn) == ROWS and subject.first_screen in screen.text():
                first = ms
            else:
                continue
        if whole is None and subject.footer in screen.text():
            whole = ms
        if subject.runtime and ready is None:
            header = screen.row(0)
            if "could not start" in header:
                raise StartFailed(f"{subject.name} could not start", screen)
            if "starting" not in header:
                ready = ms
        if whole is not None and (ready is not None or not subject.runtime):
            return Start(first, whole, ready)


def start_once(subject: Subject, environment: Path, timeout: float) -> Start:
    """One start in a new pseudo-terminal (the app's controlling terminal) with a fresh HOME."""
    home = Path(tempfile.mkdtemp(prefix=f"startup-bench-{subject.name}-"))
    env = {
        "HOME": str(home),
        "XDG_CONFIG_HOME": str(home / ".config"),
        "XDG_DATA_HOME": str(home / ".local" / "share"),
        "XDG_STATE_HOME": str(home / ".local" / "state"),
        "XDG_CACHE_HOME": str(home / ".cache"),
        "PATH": f"{environment / 'bin'}{os.pathsep}{os.defpath}",
        "TERM": "xterm-256color",
        "COLORTERM": "truecolor",
        "LANG": "C.UTF-8",
        **subject.env,
    }
    argv = [str(environment / "bin" / subject.argv[0]), *subject.argv[1:]]
    chunks: queue.Queue[tuple[float, bytes] | None] = queue.Queue()
    cpu = time.process_time()
    start = time.monotonic()
    pid, fd = pty.fork()
    if pid == 0:  # the child: the size is set before the app can ask for it
        try:
            fcntl.ioctl(0, termios.TIOCSWINSZ, struct.pack("HHHH", ROWS, COLUMNS, 0, 0))
            os.chdir(home)
            os.execve(argv[0], argv, env)
        finally:
            os._exit(127)
    reader = threading.Thread(target=read_all, args=(fd, chunks), daemon=True)
    reader.start()
    try:
        reached = watch(subject, chunks, start, timeout)
        return dataclasses.replace(reached, bench_cpu=(time.process_time() - cpu) * 1000)
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(pid, signal.SIGKILL)  # closing is not timed: nobody waits for it
        os.waitpid(pid, 0)
        reader.join(timeout=10)
        os.close(fd)
        shutil.rmtree(home, ignore_errors=True)


def pip(environment: Path, *args: str) -> None:
    python = environment / "bin" / "python"
    done = subprocess.run([str(python), "-m", "pip", *args], capture_output=True, text=True)
    if done.returncode:
        tail = "\n".join((done.stdout + done.stderr).strip().splitlines()[-15:])
        raise RuntimeError(f"pip {' '.join(args)} failed in {environment}:\n{tail}")


def versions(environment: Path, subject: Subject) -> dict[str, str]:
    """The versions the environment holds of the app, Textual and Python ("" for one not installed)."""
    code = (
        "import importlib.metadata as m, json, platform\n"
        "def v(name):\n"
        "    try:\n"
        "        return m.version(name)\n"
        "    except m.PackageNotFoundError:\n"
        "        return ''\n"
        f"print(json.dumps({{'app': v({subject.distribution!r}), 'textual': v('textual'),"
        " 'python': platform.python_version()}))"
    )
    python = environment / "bin" / "python"
    done = subprocess.run([str(python), "-c", code], capture_output=True, text=True, check=True)
    found: dict[str, str] = json.loads(done.stdout)
    return found


def prepare(cache: Path, subject: Subject) -> tuple[Path, dict[str, str]]:
    """The app's own environment, made and installed if need be; the workbench is installed anew."""
    environment = cache / subject.name
    if not (environment / "bin" / "python").exists():
        venv.EnvBuilder(with_pip=True, clear=True).create(environment)
    pinned = subject.requirement.partition("==")[2]
    if subject.name == "workbench" or versions(environment, subject)["app"] != pinned:
        pip(environment, "install", "--quiet", subject.requirement)
    return environment, versions(environment, subject)


def median(values: Sequence[float | None]) -> float | None:
    known = [value for value in values if value is not None]
    return statistics.median(known) if known else None


def summary(starts: Sequence[Start]) -> dict[str, Any]:
    points: dict[str, list[float | None]] = {
        "first_frame": [s.first_frame for s in starts],
        "whole_screen": [s.whole_screen for s in starts],
        "ready": [s.ready for s in starts],
        "bench_cpu": [s.bench_cpu for s in starts],
    }
    rounded = {name: [None if v is None else round(v, 1) for v in values] for name, values in points.items()}
    return {name: {"median_ms": median(values), "runs_ms": values} for name, values in rounded.items()}


def ratios(results: Mapping[str, Mapping[str, Any]]) -> dict[str, Any]:
    """The workbench's first frame and ready over the fastest peer's first frame: the ratio of the
    medians (the target's), and the median of each run's own ratio (the apps of one run shared its
    moment of the machine's load)."""
    peers = {name: r["first_frame"]["median_ms"] for name, r in results.items() if name != "workbench"}
    if "workbench" not in results or not peers:
        return {}
    fastest = min(peers, key=lambda name: peers[name])
    theirs = results[fastest]["first_frame"]["runs_ms"]
    found: dict[str, Any] = {"fastest_peer": fastest}
    for point, target in (("first_frame", FIRST_FRAME_TARGET), ("ready", READY_TARGET)):
        ours = results["workbench"][point]
        ratio = ours["median_ms"] / peers[fastest]
        paired = statistics.median(a / b for a, b in zip(ours["runs_ms"], theirs, strict=True))
        found[point] = {"ratio": round(ratio, 3), "paired": round(paired, 3), "target": target, "met": ratio <= target}
    return found


def cell(point: Mapping[str, Any]) -> str:
    known = [v for v in point["runs_ms"] if v is not None]
    if not known:
        return "-"
    return f"{point['median_ms']:.0f} ({min(known):.0f}-{max(known):.0f})"


def table(report: Mapping[str, Any]) -> str:
    lines = [
        f"{report['date']}  {report['command']}",
        f"pty {COLUMNS}x{ROWS}, fresh HOME each start, {report['runs']} runs per app after {report['warmup']} "
        f"warm-up, alternating; {report['cpus']} CPUs; load average (1/5/15 min) before "
        + " ".join(f"{v:.2f}" for v in report["load_before"])
        + ", after "
        + " ".join(f"{v:.2f}" for v in report["load_after"]),
        "",
        "ms from the fork, median (min-max); bench CPU: the median CPU this process spent reading and parsing",
        f"{'app':<11}{'version':<10}{'textual':<10}{'python':<9}{'first frame':>18}{'whole screen':>18}{'ready':>18}"
        f"{'bench CPU':>11}",
    ]
    for name, result in report["apps"].items():
        found = result["versions"]
        ready = cell(result["ready"]) if name == "workbench" else "- (no runtime)"
        lines.append(
            f"{name:<11}{found['app']:<10}{found['textual']:<10}{found['python']:<9}{cell(result['first_frame']):>18}"
            f"{cell(result['whole_screen']):>18}{ready:>18}{result['bench_cpu']['median_ms']:>11.0f}"
        )
    for name, why in report["not_measured"].items():
        lines.append(f"{name:<11}not measured: {why}")
    found_ratios = report["ratios"]
    if found_ratios:
        fastest = found_ratios["fastest_peer"]
        for key, what in (("first_frame", "first frame"), ("ready", "ready")):
            r = found_ratios[key]
            lines.append(
                f"workbench {what} / {fastest}'s first frame: {r['ratio']:.3f}x "
                f"(target <= {r['target']}x: {'met' if r['met'] else 'not met'}); "
                f"median of each run's own ratio {r['paired']:.3f}x"
            )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=11)
    parser.add_argument("--warmup", type=int, default=1, help="starts of each app not counted, first")
    parser.add_argument("--timeout", type=float, default=120.0, help="seconds one start may take")
    parser.add_argument("--apps", nargs="+", choices=[s.name for s in SUBJECTS], default=[s.name for s in SUBJECTS])
    cache_home = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    parser.add_argument("--cache", type=Path, default=cache_home / "workbench-bench" / "startup")
    parser.add_argument(
        "--json",
        nargs="?",
        const="-",
        metavar="FILE",
        help="the report as JSON: alone, printed instead of the table; with FILE, written there besides the table",
    )
    args = parser.parse_args()

    began = datetime.datetime.now(datetime.UTC)
    # The reader thread stamps each read as it returns; it waits for the GIL while the screen is parsed.
    sys.setswitchinterval(0.001)
    subjects = [s for s in SUBJECTS if s.name in args.apps]
    environments: dict[str, Path] = {}
    found: dict[str, dict[str, str]] = {}
    not_measured: dict[str, str] = {}
    for subject in subjects:
        print(f"preparing {subject.name} in {args.cache / subject.name} ...", file=sys.stderr)
        try:
            environments[subject.name], found[subject.name] = prepare(args.cache, subject)
        except (OSError, RuntimeError, subprocess.CalledProcessError) as exc:
            not_measured[subject.name] = f"could not be installed: {exc}"
    starts: dict[str, list[Start]] = {name: [] for name in environments}
    load_before = os.getloadavg()
    for run in range(args.warmup + args.runs):
        names = list(starts)
        if not names:
            break
        for name in names[run % len(names) :] + names[: run % len(names)]:
            subject = next(s for s in subjects if s.name == name)
            try:
                start = start_once(subject, environments[name], args.timeout)
            except StartFailed as exc:
                not_measured[name] = f"could not be started: {exc}"
                del starts[name]
                continue
            if run >= args.warmup:
                starts[name].append(start)
        done = "warm-up" if run < args.warmup else f"run {run + 1 - args.warmup} of {args.runs}"
        print(f"{done} done", file=sys.stderr)
    load_after = os.getloadavg()
    apps = {name: {"versions": found[name], **summary(s)} for name, s in starts.items()}
    report = {
        "date": began.strftime("%Y-%m-%d %H:%M UTC"),
        "command": "python bench/startup.py " + " ".join(sys.argv[1:]),
        "size": [COLUMNS, ROWS],
        "runs": args.runs,
        "warmup": args.warmup,
        "cpus": os.cpu_count(),
        "load_before": [round(v, 2) for v in load_before],
        "load_after": [round(v, 2) for v in load_after],
        "apps": apps,
        "not_measured": not_measured,
        "ratios": ratios(apps),
    }
    if args.json is not None and args.json != "-":
        Path(args.json).write_text(json.dumps(report, indent=2) + "\n")
    print(json.dumps(report, indent=2) if args.json == "-" else table(report))


if __name__ == "__main__":
    main()
