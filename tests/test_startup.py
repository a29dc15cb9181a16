"""A start that cannot open what it was asked to open says why in one line on stderr and exits 1, before
any TUI: `workbench` runs as a user runs it, in its own process, and a second one is refused by the
first that holds a folder or file."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import duckdb
import pytest

from workbench.agentmem.mem0_config import mem0_installed

# A bound on a start that should end at once (or, for a silent server, after its connect timeout):
# reached, the start hung, and the test fails.
HANG = 60
AS_USER = "-dac_override,-dac_read_search"  # root's capabilities that skip a file's mode (setpriv)
HOLD = """
import sys
from workbench.cli.configs import model_config
from workbench.cli.parser import build_parser, parse
from workbench.cli.start import build_app, load_agents
args = parse(sys.argv[1:])
app = build_app(args, model_config(args), load_agents(args))
print("open", flush=True)
sys.stdin.read()
"""


def _env(data: Path) -> dict[str, str]:
    return {**os.environ, "WORKBENCH_DATA_DIR": str(data), "TERM": "xterm-256color"}


def start(data: Path, *options: str, as_user: bool = False) -> subprocess.CompletedProcess[str]:
    """`workbench OPTIONS` with `data` as its data directory, in a process of its own. `as_user`: without
    root's power to read and write whatever a file's mode says (when the tests run as root)."""
    command = [sys.executable, "-m", "workbench", *options]
    if as_user and os.geteuid() == 0:
        command = [shutil.which("setpriv") or "setpriv", f"--inh-caps={AS_USER}", f"--bounding-set={AS_USER}", *command]
    return subprocess.run(
        command, env=_env(data), stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=HANG
    )


def refused(result: subprocess.CompletedProcess[str]) -> str:
    """The one line a refused start printed: exit status 1, nothing on stdout (no TUI drew there)."""
    assert (result.returncode, result.stdout) == (1, ""), result.stderr
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("workbench: "), result.stderr
    return lines[0]


@contextmanager
def holding(data: Path, *options: str, env: dict[str, str] | None = None) -> Iterator[int]:
    """Another process that opened what `workbench OPTIONS` opens (as the CLI does) and keeps it open;
    yields its PID. It exits when the block ends. `env`: its environment, if not the one `_env` makes."""
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLD, *options],
        env=env or _env(data),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline() == "open\n", holder.communicate()[1]
        yield holder.pid
    finally:
        holder.communicate(timeout=HANG)


MEM0 = ("--model", "m", "--base-url", "http://127.0.0.1:9/v1", "--embedding-model", "e")


@pytest.mark.parametrize(
    ("options", "where"),
    [
        (("--agent-memory", "files"), "agent-memory/files"),
        (("--agent-memory", "extracted"), "agent-memory/extracted"),
        pytest.param(
            (*MEM0, "--agent-memory", "mem0"),
            "agent-memory/mem0",
            marks=pytest.mark.skipif(not mem0_installed(), reason="the mem0 extra is not installed"),
        ),
        (("--recall",), "recall.duckdb"),
    ],
    ids=["memory files", "extracted memory", "Mem0", "DuckDB recall file"],
)
def test_a_second_workbench_on_a_folder_in_use_is_refused_naming_the_first_ones_pid(tmp_path, options, where):
    data = tmp_path / "data"
    with holding(data, *options) as pid:
        line = refused(start(data, *options))
        assert f"another workbench (PID {pid}) is using {data / where}" in line
    with holding(data, *options):  # the first one quit: the folder is free again
        pass


def test_a_second_persist_is_refused_in_one_line(tmp_path):
    data = tmp_path / "data"
    with holding(data, "--persist"):
        line = refused(start(data, "--persist"))
    assert "another workbench" in line and str(data / "sessions") in line


def test_a_recall_file_another_program_holds_is_refused_naming_that_program(tmp_path):
    path = tmp_path / "held.duckdb"
    program = "import duckdb, sys; c = duckdb.connect(sys.argv[1]); print('open', flush=True); sys.stdin.read()"
    other = subprocess.Popen(
        [sys.executable, "-c", program, str(path)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    try:
        assert other.stdout is not None and other.stdout.readline() == "open\n"
        line = refused(start(tmp_path / "data", "--recall", "--recall-store", str(path)))
    finally:
        other.communicate(timeout=HANG)
    assert "Could not set lock on file" in line and f"(PID {other.pid})" in line


def recall_file(path: Path) -> Path:
    """A DuckDB recall file with one table of rows, as an earlier run leaves one."""
    connection = duckdb.connect(str(path))
    connection.execute("CREATE TABLE t AS SELECT range AS i, repeat('x', 200) AS s FROM range(20000)")
    connection.close()
    return path


def test_a_corrupt_recall_file_is_refused_and_left_as_it_is(tmp_path):
    path = tmp_path / "recall.duckdb"
    path.write_bytes(b"not a database\n" * 1000)
    line = refused(start(tmp_path / "data", "--recall", "--recall-store", str(path)))
    assert "the recall store could not be opened" in line and "not a valid DuckDB database file" in line
    assert path.read_bytes() == b"not a database\n" * 1000


@pytest.mark.parametrize("cut", [4096, "half"])
def test_a_truncated_recall_file_is_refused_at_start_not_at_the_first_turn(tmp_path, cut):
    """Cut short by a page, DuckDB opens the file and fails only at the query that reaches the missing
    block: the start compares the file with the blocks its header counts. Cut by half, DuckDB says so."""
    path = recall_file(tmp_path / "recall.duckdb")
    whole = path.stat().st_size
    left = whole // 2 if cut == "half" else whole - 4096
    os.truncate(path, left)
    line = refused(start(tmp_path / "data", "--recall", "--recall-store", str(path)))
    assert "the recall store could not be opened: " in line
    if cut == "half":
        assert f'Could not read enough bytes from file "{path}"' in line
    else:
        assert f"{path} is truncated: {left:,} bytes, where its blocks take {whole:,}" in line
    assert path.stat().st_size == left


def test_an_unreadable_recall_file_is_refused(tmp_path):
    path = recall_file(tmp_path / "recall.duckdb")
    path.chmod(0)
    line = refused(start(tmp_path / "data", "--recall", "--recall-store", str(path), as_user=True))
    assert "the recall store could not be opened" in line and "Permission denied" in line


def test_a_folder_the_user_made_read_only_is_refused_and_left_read_only(tmp_path):
    sessions = tmp_path / "data" / "sessions"
    sessions.mkdir(parents=True)
    sessions.chmod(0o500)
    line = refused(start(tmp_path / "data", "--persist"))
    assert line.endswith(
        f"{sessions} is read-only (mode 0500) and workbench writes there; it was left as it is: "
        "make it writable (chmod u+rwx) or choose another folder"
    )
    assert sessions.stat().st_mode & 0o777 == 0o500 and list(sessions.iterdir()) == []


def closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def test_a_postgresql_server_that_refuses_fails_the_start_with_the_drivers_reason_and_no_password(tmp_path):
    url = f"postgresql://me:s3cret-pw@127.0.0.1:{closed_port()}/recall"
    result = start(tmp_path / "data", "--recall", "--recall-store", url)
    line = refused(result)
    assert "Connection refused" in line and "postgresql://me:***@127.0.0.1" in line
    assert "s3cret-pw" not in result.stderr


def test_a_postgresql_server_that_never_answers_fails_the_start_after_the_connect_timeout(tmp_path):
    """A loopback port that accepts connections into its backlog and never answers them."""
    with socket.socket() as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen(0)
        url = f"postgresql://me:s3cret-pw@127.0.0.1:{silent.getsockname()[1]}/recall"
        result = start(tmp_path / "data", "--recall", "--recall-store", url)
    line = refused(result)
    assert line.endswith("connection timeout expired") and "s3cret-pw" not in result.stderr


async def test_the_recall_file_opened_and_locked_before_the_window_is_the_one_the_agents_store_in(tmp_path):
    from workbench.cli.configs import model_config
    from workbench.cli.parser import build_parser
    from workbench.cli.start import build_app

    path = tmp_path / "recall.duckdb"
    args = build_parser().parse_args(["--recall", "--recall-store", str(path)])
    app = build_app(args, model_config(args))
    assert path.exists() and path.with_name("recall.duckdb.lock").read_text() == f"{os.getpid():>10}\n"
    assert app._start is not None
    session = app._start()
    runtime = session.runtime
    assert (await runtime.ask("support", "customer=Contoso")).ok
    assert runtime.recall is not None
    (stored,) = await runtime.recall.held()
    assert "customer=Contoso" in stored.content and stored.description.startswith("2 stored message(s)")
    await session.aclose()  # the quit: the file closed, then its lock let go (the suite checks PrivateFiles)
