"""Agent modules that misbehave while they load: a module that exits is a load error, never a silent
end of the workbench (a `workbench forget ... --yes` that ended with status 0 having forgotten
nothing), and what a module prints goes to stderr, so `workbench remembered --json` stays JSON."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.test_startup import HANG

AGENT = """
from agent_framework import Agent
from workbench import ScriptedChatClient
agent = Agent(ScriptedChatClient(), "You help.", name="mine")
"""


def workbench(tmp_path: Path, *words: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "WORKBENCH_DATA_DIR": str(tmp_path / "data")}
    return subprocess.run(
        [sys.executable, "-m", "workbench", *words],
        env=env,
        cwd=tmp_path,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=HANG,
    )


@pytest.mark.parametrize("status", ["0", "'bye'"])
def test_a_module_that_exits_while_it_loads_is_a_load_error_naming_it(tmp_path, status):
    folder = tmp_path / "agents"
    folder.mkdir()
    (folder / "leaving.py").write_text(f"import sys\nsys.exit({status})\nagent = None\n")
    result = workbench(tmp_path, "forget", "customer", str(folder), "--yes")
    assert (result.returncode, result.stdout) == (2, ""), result.stderr
    assert result.stderr == (
        f"workbench: not loaded: {folder / 'leaving.py'}: SystemExit: {status.strip(chr(39))}\n"
        f"workbench: {folder}: nothing loaded: 1 entry could not be loaded (each said above)\n"
    )


def test_a_factory_that_exits_is_a_load_error_too(tmp_path):
    (tmp_path / "made.py").write_text("import sys\ndef agents():\n    sys.exit(0)\n")
    result = workbench(tmp_path, "remembered", "--agents", "made:agents")
    assert (result.returncode, result.stdout) == (2, ""), result.stderr
    assert result.stderr == "workbench: made:agents: SystemExit: 0\n"


def test_what_a_module_prints_while_it_loads_goes_to_stderr_and_the_json_report_stays_json(tmp_path):
    folder = tmp_path / "agents"
    folder.mkdir()
    (folder / "loud.py").write_text('print("\\x1b[2Jloaded!")' + AGENT)
    (tmp_path / "louder.py").write_text('print("imported!")' + AGENT.replace('"mine"', '"other"'))
    result = workbench(tmp_path, "remembered", "--json", str(folder), "--agents", "louder:agent")
    assert result.returncode == 0, result.stderr
    assert "mine" in json.dumps(json.loads(result.stdout))  # the report, whole
    assert result.stderr.splitlines()[:2] == ["\x1b[2Jloaded!", "imported!"]  # the user's own output, as it is
