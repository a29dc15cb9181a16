"""The `workbench` command holds Python's cyclic collector off while it starts (`workbench.heap`):
the window's start-up settles it, every other command releases it before it runs."""

import gc

import pytest

from workbench import cli, command


@pytest.fixture(autouse=True)
def _collections_back():
    yield
    gc.enable()


def test_the_window_starts_with_the_collector_held(monkeypatch):
    seen = []

    class Window:
        def run(self) -> None:
            seen.append(gc.isenabled())

    monkeypatch.setattr(cli, "build_app", lambda args, config, loaded: Window())
    assert command.main([]) == 0
    assert seen == [False], "the TUI settles the heap itself once its runtime has loaded"


@pytest.mark.parametrize("name", ["drift", "qualify"])
def test_a_command_without_a_window_runs_with_the_collector_on(monkeypatch, name):
    seen = []

    def run(args: object, config: object, *loaded: object) -> int:
        seen.append(gc.isenabled())
        return 0

    monkeypatch.setattr(cli, f"run_{name}_command", run)
    assert command.main([name]) == 0
    assert seen == [True]


def test_output_whose_reader_went_away_ends_quietly_as_a_unix_tool_does():
    """`workbench drift --json | head -c 10`: the reader is gone before the report is written."""
    import subprocess
    import sys

    drift = subprocess.Popen(
        [sys.executable, "-m", "workbench", "drift", "--json", "--policies", "facts"], stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    assert drift.stdout is not None and drift.stderr is not None
    drift.stdout.close()  # as head does once it has its 10 bytes, here before the report is written
    stderr = drift.stderr.read()
    assert (drift.wait(), stderr) == (command.READER_GONE, b"")
