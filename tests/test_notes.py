"""What the libraries log is said by the workbench, once a line: Agent Framework's warning about a
user's chat client without the function-calling layer was written raw to the terminal (issue 37,
item 11), before the TUI's window and between a command's lines."""

from __future__ import annotations

import logging
import subprocess
import sys
import threading
from pathlib import Path

from workbench.notes import LibraryLog

WARNING = "The provided chat client does not support function invoking, this might limit agent capabilities."
RAW_AGENT = '''
from agent_framework import Agent, BaseChatClient, ChatResponse, Message


class RawClient(BaseChatClient):
    """A chat client without FunctionInvocationLayer, as a user may write one."""

    def _inner_get_response(self, *, messages, stream, options, **kwargs):
        async def answer():
            return ChatResponse(messages=[Message(role="assistant", contents=["ok"])])

        return answer()


agent = Agent(RawClient(), "You answer ok.", name="raw")
'''


def library(name: str, handler: LibraryLog) -> logging.Logger:
    """A logger of the test's own under `name`, logging to `handler` only."""
    logger = logging.getLogger(f"tests.notes.{name}")
    logger.handlers, logger.propagate, logger.level = [handler], False, logging.NOTSET
    return logger


def test_a_command_says_the_frameworks_warning_once_in_its_own_line_and_nothing_raw(tmp_path: Path) -> None:
    folder = tmp_path / "agents"
    folder.mkdir()
    (folder / "raw_agent.py").write_text(RAW_AGENT)
    done = subprocess.run(
        [sys.executable, "-m", "workbench", "remembered", str(folder)],
        capture_output=True,
        text=True,
        env={"WORKBENCH_DATA_DIR": str(tmp_path / "data"), "PATH": "/usr/bin:/bin"},
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert done.stderr.splitlines() == [f"workbench remembered: agent_framework: {WARNING}"]
    assert "function invoking" not in done.stdout


def test_each_line_is_said_once_kept_until_someone_says_them_and_shown_literally() -> None:
    logged = LibraryLog()
    pool, framework = library("psycopg.pool", logged), library("agent_framework", logged)
    for _ in range(2):
        pool.warning("error connecting in 'pool-1': connection is bad\n\tIs the server running?")
    pool.info("adding new connection to the pool")  # below a warning: not said
    said: list[str] = []
    waiting = logged.send_to(said.append)
    assert waiting == ["tests.notes.psycopg.pool: error connecting in 'pool-1': connection is bad"]
    worker = threading.Thread(target=framework.warning, args=(f"{WARNING} \x1b[31m",))
    worker.start()
    worker.join()
    framework.warning(f"{WARNING} \x1b[31m")
    assert said == [f"tests.notes.agent_framework: {WARNING} \\x1b[31m"]
    assert logged.send_to(None) == []
