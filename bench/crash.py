"""Crash bench, run on demand: SIGKILL the product at every step of a forget and of a turn's save, then
restart it and check the two promises.

    python bench/crash.py [--scenario forget-key forget-all turn legacy agents-key agents-all] [--random N] [--keep DIR]

Each run is a child process over a fresh data directory (`WORKBENCH_DATA_DIR`) with every memory on
(`--persist --recall --agent-memory extracted`, the built-in scripted model; Mem0 needs a live model and
an embedding model, so it is not run here), assembled as the CLI assembles it (`build_parser`,
`unfinished_forget`, `build_app(...)._start()`, then `complete_pending` as the TUI does before it
connects), driven without Textual. The child declares `database=Oracle`, then
`customer=Contoso-<tag>; module=Billing`, asks `Where is Contoso-<tag>?`, and (by scenario) forgets
`customer` or everything; in the `turn` scenario it is killed while the declaring turn is saved. In
the `legacy` scenario the data directory holds a folder the version before the state database saved
(`memory.json`, `sessions.json`, `history/<id>.jsonl`), and the child is killed while its start moves
it into the database: after the restart every fact and message of it must be there, and no old file.
The `agents-key` and `agents-all` scenarios run the user's agents instead: `examples/agents` (`--persist
examples/agents`, its files under the data directory through `EXAMPLE_AGENTS_DATA`), triage's
FileHistoryProvider and notes' FileMemoryProvider both told the customer (and notes' folder given a
memory file holding the customer beside other facts, as a model writes one), then `customer` or
everything forgotten: a kill cuts the rewrite of their files, and the restart with the same PATH
completes it; (b) then also asks that the other facts of that file and triage's message without the
customer are still there after a forget of the customer.

The child counts the steps of that stretch: each call of an I/O entry point (`os.write`, `os.fsync`,
`os.replace`, `os.rename`, `os.unlink`, `os.remove`, `os.rmdir`, `os.ftruncate`, `os.open` for writing,
`open`/`io.open` for writing, `shutil.rmtree`, `pathlib.Path.write_text`/`write_bytes`/`unlink`), each
SQL statement but a read that the state database runs (BEGIN, each write, COMMIT, the checkpoint), the product's
`StateFile.save`/`erase_residue`, the forget journal's `begin`/`end`, DuckDB's rewrite (`rewrite_file`,
its copy) and the framework's DuckDB deletes and upserts; it SIGKILLs itself just before step N. A dry
run counts the steps K; then N runs 1..K. What SQLite and DuckDB do inside one C call (their own writes
and fsyncs) is not split further: a kill before and after each statement brackets it.

After each kill a fresh child starts the same way (completing the pending forget), reports its facts,
asks a question on both agents and reports every request sent since it started (in the `turn`
scenario it first forgets `customer`). Then:
(a) no byte of any file under the data directory holds the forgotten value (as typed or JSON-escaped),
    and no request sent after the restart holds it;
(b) every fact the killed child reported as admitted and saved (a line after each `ask` that returned
    ok with nothing unsaved) is there after the restart, but the forgotten ones.
A kill before the forget's record was on disk (inside the journal's `begin`) may leave the forget
unapplied, as if it had never been asked: then it must be unapplied everywhere (the fact still shown).

`--random N` kills at N random instants from the parent instead (within the measured span of the forget
or turn), as a cross-check of the instrumented points. Exit status 1 when any point fails.
"""

from __future__ import annotations

import argparse
import asyncio
import builtins
import functools
import inspect
import io
import json
import os
import pathlib
import random
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

OPTIONS = ["--persist", "--recall", "--agent-memory", "extracted"]
SCENARIOS = ("forget-key", "forget-all", "turn", "legacy", "agents-key", "agents-all")
EXAMPLES = Path(__file__).resolve().parent.parent / "examples" / "agents"
YOURS = ["--persist", str(EXAMPLES)]  # the example agents, their files under the data directory (`child`)
PROFILE = ("agents", "notes-memory", "user", "profile.md")  # a memory file of several facts, under the data directory
KEPT = ("module=Billing", "priority=high")  # what a forget of the customer leaves in it
LEGACY_FILES = ("memory.json", "sessions.json", "history")
QUESTION = "Which customer is this for?"
_WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_APPEND


# -- the child: the product, instrumented ------------------------------------------------------


class Steps:
    """Counts the instrumented calls made while armed; kills the process just before step `kill_at`."""

    def __init__(self, kill_at: int) -> None:
        self.kill_at = kill_at
        self.armed = False
        self.labels: list[str] = []
        self._lock = threading.Lock()
        self._inside = threading.local()

    def hit(self, label: str) -> None:
        if not self.armed or self._depth():
            return
        with self._lock:
            self.labels.append(label)
            if len(self.labels) == self.kill_at:
                emit(event="killed", step=self.kill_at, label=label)
                os.kill(os.getpid(), signal.SIGKILL)

    def _depth(self) -> int:
        return int(getattr(self._inside, "depth", 0))

    def wrap(self, owner: Any, name: str, *, inner: bool = True, when: Callable[..., bool] | None = None) -> None:
        """Count each call of `owner.name`; `inner`: the calls it makes count too (else they are one step)."""
        original = getattr(owner, name)
        label = f"{getattr(owner, '__name__', type(owner).__name__)}.{name}"

        def describe(args: tuple[Any, ...]) -> str:
            where = next((a for a in args if isinstance(a, str | os.PathLike)), None)
            return f"{label}({Path(os.fspath(where)).name})" if where is not None else label

        if inspect.iscoroutinefunction(original):

            @functools.wraps(original)
            async def counted_async(*args: Any, **kwargs: Any) -> Any:
                self.hit(describe(args))
                return await original(*args, **kwargs)

            setattr(owner, name, counted_async)
            return

        @functools.wraps(original)
        def counted(*args: Any, **kwargs: Any) -> Any:
            if when is None or when(*args, **kwargs):
                self.hit(describe(args))
                if not inner:
                    self._inside.depth = self._depth() + 1
                    try:
                        return original(*args, **kwargs)
                    finally:
                        self._inside.depth -= 1
            return original(*args, **kwargs)

        setattr(owner, name, counted)


def emit(**event: Any) -> None:
    sys.stdout.write(json.dumps(event) + "\n")
    sys.stdout.flush()


def _writes(file: Any, mode: str = "r", *args: Any, **kwargs: Any) -> bool:
    return any(c in mode for c in "wax+")


def _opens_for_writing(path: Any, flags: int, *args: Any, **kwargs: Any) -> bool:
    return bool(flags & _WRITE_FLAGS)


def instrument(steps: Steps) -> None:
    from workbench.persist import journal, state
    from workbench.recall import duckdb_file, duckdb_search

    for name in ("write", "pwrite", "fsync", "replace", "rename", "unlink", "remove", "rmdir", "ftruncate"):
        steps.wrap(os, name)
    steps.wrap(os, "open", when=_opens_for_writing)
    steps.wrap(shutil, "rmtree")
    open_for_writing = functools.partial(steps.wrap, when=_writes, inner=False)
    open_for_writing(builtins, "open")
    open_for_writing(io, "open")
    for name in ("write_text", "write_bytes", "unlink"):
        steps.wrap(pathlib.Path, name, inner=False)
    steps.wrap(state.StateFile, "save")
    steps.wrap(state.StateFile, "erase_residue")
    steps.wrap(journal.ForgetJournal, "begin")
    steps.wrap(journal.ForgetJournal, "end")
    steps.wrap(duckdb_file, "rewrite_file")
    steps.wrap(duckdb_file, "_copy_live_data")
    steps.wrap(duckdb_search.RecallDuckDBCollection, "_inner_delete")
    steps.wrap(duckdb_search.RecallDuckDBCollection, "_inner_upsert")

    class Counted(sqlite3.Connection):
        """The state database's connection, counting each statement as a step."""

        def execute(self, sql: str, *args: Any) -> sqlite3.Cursor:
            statement(sql)
            return super().execute(sql, *args)

        def executemany(self, sql: str, *args: Any) -> sqlite3.Cursor:
            statement(sql)
            return super().executemany(sql, *args)

    def statement(sql: str) -> None:
        if not sql.lstrip().upper().startswith("SELECT"):  # a read changes nothing a kill could cut
            steps.hit(f"sqlite:{' '.join(sql.split()[:3])}")

    connect = sqlite3.connect
    sqlite3.connect = functools.partial(connect, factory=Counted)  # type: ignore[assignment]


def yours(scenario: str) -> bool:
    return scenario.startswith("agents-")


def agents_of(scenario: str) -> tuple[str, str]:
    """The agent told the customer first, and the other."""
    return ("triage", "notes") if yours(scenario) else ("support", "logs")


_started: list[Callable[[], Any]] = []  # the start holds what it opened (locks), as the TUI keeps it
_sessions: list[Any] = []  # what each start built: `prepare` quits it as the app does


def start_runtime(scenario: str) -> Any:
    """The runtime as the TUI would run it, with the pending forget completed first."""
    from workbench.cli.configs import model_config
    from workbench.cli.parser import parse
    from workbench.cli.start import build_app, load_agents
    from workbench.cli.stores import unfinished_forget

    args = parse(YOURS if yours(scenario) else OPTIONS)
    config = model_config(args)
    if problem := unfinished_forget(args, config):
        emit(event="refused", why=problem)
        sys.exit(3)
    try:
        start: Callable[[], Any] | None = build_app(args, config, load_agents(args))._start
        assert start is not None
        _started.append(start)
        session = start()  # the session the assembly builds, over the runtime
        _sessions.append(session)
        runtime = session.runtime
    except Exception as exc:
        emit(event="refused", why=f"{type(exc).__name__}: {exc}")
        sys.exit(3)
    return runtime


def facts_of(runtime: Any) -> dict[str, str]:
    return {f.key: f.value for f in runtime.memory.facts()}


async def ask(runtime: Any, agent: str, text: str) -> None:
    result = await runtime.ask(agent, text)
    emit(event="asked", ok=result.ok, unsaved=result.unsaved, facts=facts_of(runtime))


async def run_child(scenario: str, tag: str, kill_at: int) -> None:
    steps = Steps(kill_at)
    instrument(steps)
    from workbench.persist.journal import ForgetJournal

    begin = ForgetJournal.begin

    def recorded(journal: ForgetJournal, keys: tuple[str, ...] | None) -> None:
        begin(journal, keys)
        emit(event="recorded")

    ForgetJournal.begin = recorded  # type: ignore[method-assign,assignment]
    steps.armed = scenario == "legacy"  # the move happens as the persisted sessions open
    runtime = start_runtime(scenario)
    if scenario == "legacy":
        steps.armed = False
        emit(event="done", steps=steps.labels)
        return
    await runtime.complete_pending()
    first, other = agents_of(scenario)
    await ask(runtime, other, "database=Oracle")
    if yours(scenario):  # a message of triage's history without the customer: its file is rewritten, not erased
        await ask(runtime, first, "database=Oracle")
    steps.armed = scenario == "turn"
    if scenario == "turn":
        emit(event="span")
    await ask(runtime, first, f"customer=Contoso-{tag}; module=Billing")
    if yours(scenario):  # notes' model writes it to a memory file of its own
        await ask(runtime, other, f"customer=Contoso-{tag}; module=Billing")
    await ask(runtime, first, f"Where is Contoso-{tag}?")
    if yours(scenario):
        profile = Path(os.environ["WORKBENCH_DATA_DIR"]).joinpath(*PROFILE)
        profile.write_text(f"customer=Contoso-{tag}\n" + "\n".join(KEPT) + "\n")
    if scenario != "turn":
        steps.armed = True
        emit(event="forget-asked")
        emit(event="span")
        report = await runtime.forget("customer" if scenario in ("forget-key", "agents-key") else None)
        emit(event="forgot", failures=report.failures)
    steps.armed = False
    emit(event="done", steps=steps.labels)


async def prepare(tag: str) -> None:
    """A run the `legacy` scenario's folder is made of: facts, and messages on both agents."""
    runtime = start_runtime("legacy")
    await ask(runtime, "logs", "database=Oracle")
    await ask(runtime, "support", f"customer=Contoso-{tag}; module=Billing")
    await ask(runtime, "support", f"Where is Contoso-{tag}?")
    _sessions[-1].close()  # a quit, as the app's: a file left marked open without its log is refused


async def run_check(scenario: str) -> None:
    runtime = start_runtime(scenario)
    report = await runtime.complete_pending()
    emit(event="restarted", completed=None if report is None else report.describe(), facts=facts_of(runtime))
    first = len(runtime.calls.records())
    if scenario == "turn":
        await runtime.forget("customer")
    agents = agents_of(scenario)
    histories = {agent: [m.text or "" for m in runtime.history(agent)] for agent in agents}
    for agent in agents:
        await runtime.ask(agent, QUESTION)
    sent = [text for record in runtime.calls.records()[first:] for _, text in (("", record.instructions), *record.sent)]
    emit(event="requests", texts=sent, facts=facts_of(runtime), histories=histories)


# -- the parent: kill, restart, check ---------------------------------------------------------


def child(data: Path, *argv: str) -> subprocess.Popen[str]:
    env = {
        **os.environ,
        "WORKBENCH_DATA_DIR": str(data),
        "EXAMPLE_AGENTS_DATA": str(data / "agents"),
        "PYTHONHASHSEED": "0",
    }
    return subprocess.Popen(
        [sys.executable, __file__, *argv],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def events(output: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in output.splitlines() if line.startswith("{")]


def forms(value: str) -> list[bytes]:
    from workbench.memory.forget import written

    return sorted({form.encode() for form in written(value)} | {form.lower().encode() for form in written(value)})


def files_holding(data: Path, value: str) -> list[str]:
    wanted = forms(value)
    found = []
    for path in sorted(p for p in data.rglob("*") if p.is_file()):
        raw = path.read_bytes().lower()
        if any(form.lower() in raw for form in wanted):
            found.append(str(path.relative_to(data)))
    return found


def legacy_folder(root: Path, tag: str) -> Path:
    """A data directory whose sessions folder is as the version before the state database left it: the
    product saves a run, and its rows are written out as that version's files."""
    from workbench.persist.format import MemoryFile, SessionsFile
    from workbench.persist.sessions import DIRECTORY
    from workbench.persist.state import STATE_FILE, StateFile

    data = root / "legacy-folder"
    run = child(data, "--child", "prepare", tag, "0")
    _, err = run.communicate(timeout=300)
    if run.returncode != 0:
        sys.exit(f"could not prepare the earlier version's folder:\n{err}")
    folder = data / DIRECTORY
    state = StateFile(folder / STATE_FILE)
    memory, (shape, sessions) = state.memory(), state.sessions()
    assert memory is not None
    (folder / "history").mkdir(mode=0o700)
    for session in sessions.values():
        lines = "".join(json.dumps(m) + "\n" for m in state.messages(session["session_id"]))
        (folder / "history" / f"{session['session_id']}.jsonl").write_text(lines)
    state.close()
    for path in folder.glob(f"{STATE_FILE}*"):
        path.unlink()
    (folder / "memory.json").write_text(MemoryFile(memory=memory).model_dump_json())
    (folder / "sessions.json").write_text(SessionsFile(shape=shape, sessions=sessions).model_dump_json())  # type: ignore[arg-type]
    return data


def judge_legacy(data: Path, expected: dict[str, Any]) -> tuple[bool, str]:
    """After a kill during the move: the old folder's facts and messages are all there, and no old file."""
    check = child(data, "--check", "legacy")
    out, err = check.communicate(timeout=300)
    after = events(out)
    if check.returncode != 0 or not any(e["event"] == "requests" for e in after):
        refused = [e["why"] for e in after if e["event"] == "refused"]
        return False, f"restart failed (exit {check.returncode}): {refused or err.strip().splitlines()[-1:]}"
    requests = next(e for e in after if e["event"] == "requests")
    problems = []
    if requests["facts"] != expected["facts"]:
        problems.append(f"facts {requests['facts']} != {expected['facts']}")
    if requests["histories"] != expected["histories"]:
        problems.append("a history differs from the old folder's")
    left = [name for name in LEGACY_FILES if (data / "sessions" / name).exists()]
    if left:
        problems.append(f"old files left: {left}")
    return not problems, "; ".join(problems) or "moved whole"


def judge(scenario: str, tag: str, killed: list[dict[str, Any]], data: Path) -> tuple[bool, str]:
    """Restart over `data` and check both promises; (passed, what was found)."""
    if scenario == "legacy":
        return judge_legacy(data, json.loads((data.parent / "legacy-expected.json").read_text()))
    value = f"Contoso-{tag}"
    check = child(data, "--check", scenario)
    out, err = check.communicate(timeout=300)
    after = events(out)
    refused = [e for e in after if e["event"] == "refused"]
    if refused:
        return False, f"restart refused: {refused[0]['why']}"
    if check.returncode != 0 or not any(e["event"] == "requests" for e in after):
        return False, f"restart failed (exit {check.returncode}): {err.strip().splitlines()[-1:]}"
    restarted = next(e for e in after if e["event"] == "restarted")
    requests = next(e for e in after if e["event"] == "requests")
    problems = []
    forget_asked = any(e["event"] == "forget-asked" for e in killed) or scenario == "turn"
    recorded = any(e["event"] == "recorded" for e in killed) or scenario == "turn"
    saved: dict[str, str] = {}
    for e in killed:
        if e["event"] == "asked" and e["ok"] and not e["unsaved"]:
            saved = e["facts"]
    # A kill inside the record's `begin` may leave it on disk (completed at restart) or not (never asked).
    unapplied = forget_asked and not recorded and restarted["facts"].get("customer") == value
    if scenario in ("forget-all", "agents-all") and forget_asked and not unapplied:
        expected: dict[str, str] = {}
    elif forget_asked and not unapplied:
        expected = {k: v for k, v in saved.items() if k != "customer" and value.lower() not in v.lower()}
    else:
        expected = saved
    now = requests["facts"] if scenario == "turn" else restarted["facts"]
    missing = {k: v for k, v in expected.items() if now.get(k) != v}
    if missing:
        problems.append(f"saved fact(s) missing after restart: {missing}")
    holding = files_holding(data, value)
    in_requests = sum(value.lower() in text.lower() for text in requests["texts"])
    if (holding or in_requests) and not unapplied and forget_asked:
        problems.append(f"forgotten value in {holding or 'no file'}; in {in_requests} request text(s) after restart")
    if not forget_asked and scenario != "turn" and restarted["facts"].get("customer") not in (None, value):
        problems.append("customer changed")
    if scenario == "agents-key":
        problems += lost_by_the_forget(data)
    note = "forget not recorded: unapplied everywhere" if unapplied else ""
    if restarted["completed"]:
        note = "completed at restart"
    return not problems, "; ".join(problems) or note or "ok"


def lost_by_the_forget(data: Path) -> list[str]:
    """What a forget of the customer must leave of the example agents' files, when it is not there."""
    lost = []
    profile = data.joinpath(*PROFILE)
    text = profile.read_text() if profile.exists() else ""
    if missing := [fact for fact in KEPT if fact not in text]:
        lost.append(f"{profile.name} lost {missing}")
    histories = (data / "agents" / "triage-history").glob("*.jsonl")
    if not any("database=Oracle" in path.read_text() for path in histories):
        lost.append("triage's history lost its message without the customer")
    return lost


def fresh(scenario: str, name: str, root: Path) -> Path:
    """A fresh data directory for one run (for `legacy`, a copy of the old version's folder)."""
    data = Path(tempfile.mkdtemp(prefix=f"{scenario}-{name}-", dir=root))
    if scenario == "legacy":
        data.rmdir()
        shutil.copytree(root / "legacy-folder", data)
    return data


def run_point(scenario: str, tag: str, kill_at: int, root: Path) -> tuple[bool, str, str]:
    data = fresh(scenario, str(kill_at), root)
    run = child(data, "--child", scenario, tag, str(kill_at))
    out, err = run.communicate(timeout=300)
    killed = events(out)
    label = next((e["label"] for e in killed if e["event"] == "killed"), "")
    if run.returncode != -signal.SIGKILL:
        return False, label, f"not killed (exit {run.returncode}): {err.strip().splitlines()[-1:]}"
    passed, what = judge(scenario, tag, killed, data)
    if passed:
        shutil.rmtree(data)
    else:
        what += f" (left in {data})"
    return passed, label, what


def dry_run(scenario: str, tag: str, root: Path) -> tuple[list[str], float]:
    if scenario == "legacy":
        legacy_folder(root, tag)
        expected = fresh(scenario, "expected", root)
        check = child(expected, "--check", "legacy")
        found = [line for line in check.communicate()[0].splitlines() if '"requests"' in line]
        (root / "legacy-expected.json").write_text(found[0])
        shutil.rmtree(expected)
    data = fresh(scenario, "dry", root)
    started = time.perf_counter()
    run = child(data, "--child", scenario, tag, "0")
    out, err = run.communicate(timeout=300)
    took = time.perf_counter() - started
    done = [e for e in events(out) if e["event"] == "done"]
    if run.returncode != 0 or not done:
        sys.exit(f"the dry run of {scenario} failed (exit {run.returncode}):\n{err}")
    shutil.rmtree(data)
    return done[0]["steps"], took


def random_point(scenario: str, tag: str, rng: random.Random, root: Path) -> tuple[bool, str, str]:
    """Kill at a random instant after the child says the span (the forget, or the declaring turn) began."""
    data = fresh(scenario, "random", root)
    run = child(data, "--child", scenario, tag, "0")
    assert run.stdout is not None
    lines: list[str] = []
    delay = rng.uniform(0, 0.6)
    for line in run.stdout:
        lines.append(line)
        if '"span"' in line:
            break
    time.sleep(delay)
    run.send_signal(signal.SIGKILL)
    out, _ = run.communicate(timeout=300)
    killed = events("".join(lines) + out)
    if any(e["event"] == "done" for e in killed):
        shutil.rmtree(data)
        return True, f"+{delay * 1000:.0f} ms", "ended before the kill"
    passed, what = judge(scenario, tag, killed, data)
    if passed:
        shutil.rmtree(data)
    else:
        what += f" (left in {data})"
    return passed, f"+{delay * 1000:.0f} ms", what


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--scenario", nargs="+", choices=SCENARIOS, default=list(SCENARIOS))
    parser.add_argument("--random", type=int, metavar="N", help="kill at N random instants per scenario instead")
    parser.add_argument("--keep", type=Path, help="where to leave the data directories of failed points")
    parser.add_argument("--child", nargs=3, metavar=("SCENARIO", "TAG", "KILL_AT"), help=argparse.SUPPRESS)
    parser.add_argument("--check", metavar="SCENARIO", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        scenario, tag, kill_at = args.child
        if scenario == "prepare":
            asyncio.run(prepare(tag))
            return 0
        asyncio.run(run_child(scenario, tag, int(kill_at)))
        return 0
    if args.check:
        asyncio.run(run_check(args.check))
        return 0
    root = args.keep or Path(tempfile.mkdtemp(prefix="workbench-crash-"))
    root.mkdir(parents=True, exist_ok=True)
    rng = random.Random()
    failures = covered = 0
    for scenario in args.scenario:
        tag = f"{rng.getrandbits(32):08x}"
        if args.random:
            print(f"{scenario}: {args.random} random instant(s)", flush=True)
            points = [random_point(scenario, tag, rng, root) for _ in range(args.random)]
            for passed, label, what in points:
                print(f"  {'ok  ' if passed else 'FAIL'} {label}: {what}", flush=True)
        else:
            labels, took = dry_run(scenario, tag, root)
            print(f"{scenario}: {len(labels)} kill point(s) (dry run {took:.1f} s)", flush=True)
            points = []
            for n in range(1, len(labels) + 1):
                passed, label, what = run_point(scenario, tag, n, root)
                points.append((passed, label, what))
                print(f"  {'ok  ' if passed else 'FAIL'} {n:3} before {label or labels[n - 1]}: {what}", flush=True)
        covered += len(points)
        failures += sum(not passed for passed, _, _ in points)
    print(f"{covered} kill point(s), {failures} failure(s); Mem0 not run (it needs a live model)")
    if not failures and not args.keep:
        shutil.rmtree(root, ignore_errors=True)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
