"""`workbench --persist redis://…` as a user runs it: a server that cannot be reached stops the start
with one line and exit status 1 before any TUI, within the connect check's time, and never prints the
URL's password; a URL that is none is a usage error."""

from __future__ import annotations

import socket
import subprocess
import sys
import time

from tests.test_startup import _env, refused, start
from workbench.agentmem.redis_server import CONNECT_TIMEOUT, display_url
from workbench.cli.configs import model_config
from workbench.cli.parser import build_parser
from workbench.cli.stores import stores_on_disk


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_a_server_that_refuses_stops_the_start_in_one_line_without_the_password(tmp_path):
    url = f"redis://ops:hunter2-secret@127.0.0.1:{closed_port()}/0"
    line = refused(start(tmp_path / "data", "--persist", url))
    assert line.startswith("workbench: the Redis server could not be opened: Redis at redis://ops:***@127.0.0.1:")
    assert "Connection refused" in line and "hunter2" not in line
    assert not (tmp_path / "data" / "sessions").exists()  # nothing was opened before the check


def test_a_server_that_never_answers_stops_the_start_after_the_connect_check(tmp_path):
    with socket.socket() as silent:  # accepts connections (the kernel does) and never answers a PING
        silent.bind(("127.0.0.1", 0))
        silent.listen()
        began = time.monotonic()
        line = refused(start(tmp_path / "data", "--persist", f"redis://127.0.0.1:{silent.getsockname()[1]}"))
    assert "the Redis server could not be opened" in line and "Timeout" in line
    assert CONNECT_TIMEOUT <= time.monotonic() - began < CONNECT_TIMEOUT + 30


def test_a_persist_value_that_is_no_redis_url_is_a_usage_error_and_a_folder_after_it_is_the_agents(tmp_path):
    """`--persist FOLDER` is the agents' folder and --persist (a missing one here: exit 2 naming it)."""
    for value, said in (("redis://host:port", "--persist"), (str(tmp_path / "no-agents"), "no-agents: no such folder")):
        result = subprocess.run(
            [sys.executable, "-m", "workbench", "--persist", value],
            env=_env(tmp_path),
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert result.returncode == 2 and len(result.stderr.splitlines()) == 1, result.stderr
        assert said in result.stderr


def test_the_journal_names_the_server_without_its_password():
    args = build_parser().parse_args(["--persist", "redis://:hunter2@cache:6380/1"])
    config = model_config(args)
    assert stores_on_disk(args, config)[0] == "--persist redis://:***@cache:6380/1"
    assert stores_on_disk(build_parser().parse_args(["--persist"]), config)[0] == "--persist"
    assert display_url("unix:///run/redis.sock?db=2&password=hunter2") == "unix:///run/redis.sock?db=2&password=***"


def test_without_redis_the_start_loads_no_redis_client():
    probe = (
        "import sys, workbench.cli, workbench.build.opening, workbench.session.assemble; "
        "print(' '.join(m for m in ('redis', 'agent_framework_redis') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout
    assert out.split() == []
