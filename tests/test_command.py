"""The `workbench` command holds Python's cyclic collector off while it starts (`workbench.heap`):
the window's start-up settles it, every other command releases it before it runs."""

import gc

import pytest

from workbench import command
from workbench.cli import dispatch


@pytest.fixture(autouse=True)
def _collections_back():
    yield
    gc.enable()


class Window:
    """The window as the command runs it: it ends with Textual's return code and says whether the agents
    started."""

    def __init__(self, return_code: int | None = 0, start_failed: bool = False) -> None:
        self.return_code, self.start_failed = return_code, start_failed
        self.not_saved = None
        self.seen: list[bool] = []

    def run(self) -> None:
        self.seen.append(gc.isenabled())


def test_the_window_starts_with_the_collector_held_and_it_runs_again_however_the_window_ended(monkeypatch):
    """Closed before its heap was settled (Ctrl+Q at once), the window leaves the collector off: a
    program that called `workbench.serve` goes on with it running again."""
    window = Window()
    monkeypatch.setattr(dispatch, "build_app", lambda args, config, loaded, **options: window)
    assert command.main([]) == 0
    assert window.seen == [False], "the TUI settles the heap itself once its runtime has loaded"
    assert gc.isenabled()


def test_a_start_that_fails_before_the_window_leaves_the_collector_on():
    assert command.main(["--persist", "/proc/no-such-folder/sessions"]) != 0
    assert gc.isenabled()


@pytest.mark.parametrize(
    ("window", "status"),
    [(Window(), 0), (Window(return_code=1), 1), (Window(start_failed=True), 1), (Window(return_code=None), 0)],
)
def test_the_exit_status_says_a_window_that_crashed_or_whose_agents_never_started(monkeypatch, window, status):
    monkeypatch.setattr(dispatch, "build_app", lambda args, config, loaded, **options: window)
    assert command.main([]) == status


@pytest.mark.parametrize("name", ["drift", "qualify"])
def test_a_command_without_a_window_runs_with_the_collector_on(monkeypatch, name):
    seen = []

    def run(args: object, config: object, *loaded: object) -> int:
        seen.append(gc.isenabled())
        return 0

    monkeypatch.setattr(dispatch, f"run_{name}_command", run)
    assert command.main([name]) == 0
    assert seen == [True]


def test_output_whose_reader_went_away_ends_quietly_as_a_unix_tool_does():
    """`workbench drift --json | head -c 10`: the reader is gone before the report is written."""
    import subprocess
    import sys

    with subprocess.Popen(
        [sys.executable, "-m", "workbench", "drift", "--json", "--policies", "facts"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    ) as drift:  # its pipes closed at the end
        assert drift.stdout is not None and drift.stderr is not None
        drift.stdout.close()  # as head does once it has its 10 bytes, here before the report is written
        stderr = drift.stderr.read()
        assert (drift.wait(), stderr) == (command.READER_GONE, b"")


def test_ctrl_c_while_your_agents_import_is_one_line_and_status_130(tmp_path):
    """`workbench PATH` whose module takes its time to import: SIGINT then printed a 24-line traceback."""
    import signal
    import subprocess
    import sys

    module = "import sys, time\nsys.__stdout__.write('importing\\n')\nsys.__stdout__.flush()\ntime.sleep(600)\nagent = None\n"
    (tmp_path / "slow.py").write_text(module)  # its own prints go to stderr (`workbench.loading`): not this
    with subprocess.Popen(
        [sys.executable, "-m", "workbench", str(tmp_path)],
        cwd=tmp_path,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    ) as started:
        assert started.stdout is not None
        assert started.stdout.readline() == "importing\n"  # in the module's import now
        started.send_signal(signal.SIGINT)
        out, err = started.communicate(timeout=60)
    assert (started.returncode, out, err) == (command.INTERRUPTED, "", "workbench: interrupted (Ctrl+C)\n")


def test_a_recall_file_in_a_folder_that_does_not_exist_is_refused_in_one_line_and_nothing_is_created(tmp_path, capsys):
    """`--recall-store /nonexistent/dir/recall.duckdb` made the whole tree of folders without a word."""
    store = tmp_path / "no" / "such" / "recall.duckdb"
    for command_words in ([], ["remembered"], ["drift"]):
        assert command.main(["--recall", "--recall-store", str(store), *command_words]) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and f'--recall-store: the folder "{store.parent}" does not exist' in err
    assert not (tmp_path / "no").exists()
