import gc
import os
import sys
import tempfile
from pathlib import Path

import pytest
import pytest_textual_snapshot
from hypothesis import settings

from tests.support.azure_server import LoopbackAzure
from tests.support.openai_server import LoopbackOpenAI
from workbench.heap import hold_collections

SNAPSHOTS = Path(__file__).resolve().parent.parent / "snapshots"

# With PYTHONDONTWRITEBYTECODE set (as on the project's machine), every worker and every `workbench`
# a test starts compiled the same modules again: about 30 s of a run's CPU on two cores. The suite
# caches them in __pycache__ (ignored by git), as Python does by default.
sys.dont_write_bytecode = False

# Hypothesis fails an example that takes over 200 ms by default: a timed assertion, which a loaded
# machine fails at random (test_text_reference did, once, in a full run on two busy cores). The
# properties are about results; speed is measured by bench/.
settings.register_profile("workbench", deadline=None)
settings.load_profile("workbench")

# mem0 reads MEM0_TELEMETRY and MEM0_DIR once, when first imported, and writes MEM0_DIR/config.json then.
# Whichever test of a worker imports it first (a user's agent importing agent_framework_mem0, the
# private-name check), it must neither send telemetry nor write to the home directory: otherwise the
# workbench's own Mem0 tests later in that worker (rightly) refuse to run.
os.environ["MEM0_TELEMETRY"] = "false"
os.environ["MEM0_DIR"] = tempfile.mkdtemp(prefix="workbench-tests-mem0-")


def pytest_collection_finish(session: pytest.Session) -> None:
    """Once the tests are collected (every test module imported, with the workbench, Textual, Agent
    Framework and the servers' clients), freeze what the worker holds, as the TUI freezes its start-up
    heap (`workbench.heap.settle`). Each forget's `release_garbage` and each drift policy's collection
    is a full collection, and without this one walked all of it: about 0.5 s in a full run's worker.
    Frozen objects are still freed by reference counting."""
    gc.collect()
    gc.freeze()


def pytest_xdist_auto_num_workers(config: pytest.Config) -> int:
    """`-n auto`: two workers a core. A test waits about half its time (Textual's timers, the
    processes and servers it starts), so one worker a core left the cores idle that long."""
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    return 2 * cores


class _TopLevelSVGExtension(pytest_textual_snapshot.SVGImageExtension):
    """Snapshot SVGs live in the top-level snapshots/ folder, one sub-folder per test module."""

    @classmethod
    def dirname(cls, *, test_location) -> str:
        return str(SNAPSHOTS / Path(test_location.filepath).stem)


pytest_textual_snapshot.SVGImageExtension = _TopLevelSVGExtension


@pytest.fixture
def loopback():
    with LoopbackOpenAI() as server:
        yield server


@pytest.fixture
def azure():
    with LoopbackAzure() as server:
        yield server


@pytest.fixture
def held_collections():
    """The collector held off, as the `workbench` command's first step holds it; Python's setting
    again after the test, whatever it did (the tests share a process)."""
    hold_collections()
    yield
    gc.enable()


@pytest.fixture(autouse=True)
def frozen_heap():
    """What the worker holds from earlier tests (modules, collected tests, their caches) frozen before
    each test runs, as the TUI freezes its start-up heap (`workbench.heap.settle`): a forget's
    `release_garbage`, the drift lab's collection after each policy and Python's own full collections
    then walk the objects of the test's own runtime, not the whole worker's heap. In a full run a
    worker's heap made each of a forget's collections about 0.5 s, and the tests that forget hundreds
    of times spent minutes in them; a drift lab run in a worker after the UI tests spent 10 to 23 s
    of its 13 collections walking the earlier tests' 400,000 to 600,000 objects (1.3 s for the
    whole lab alone). The earlier tests' garbage is collected first, so only what is still held is
    frozen. Frozen objects are still freed by reference counting. They stay frozen, as after every
    TUI test's `settle` (unfreezing them would also unfreeze what `pytest_collection_finish` froze)."""
    gc.collect()
    gc.freeze()


@pytest.fixture(autouse=True)
def _no_ambient_openai_settings(monkeypatch):
    """Tests never see the developer's own OpenAI, Azure OpenAI or Azure sign-in settings."""
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "OPENAI_MODEL", "OPENAI_CHAT_COMPLETION_MODEL"):
        monkeypatch.delenv(name, raising=False)
    for name in list(os.environ):
        if name.startswith(("AZURE_", "IDENTITY_", "MSI_")):
            monkeypatch.delenv(name)
    # Were DefaultAzureCredential ever built without a test's own identity endpoint, its managed
    # identity would ask a closed loopback port, never the cloud's metadata address.
    monkeypatch.setenv("IDENTITY_ENDPOINT", "http://127.0.0.1:9/msi/token")
    monkeypatch.setenv("IDENTITY_HEADER", "tests-never-leave-loopback")


@pytest.fixture(autouse=True)
def _state_files_closed(monkeypatch):
    """Every state file a test opened is closed when the test ends, as a quit closes it. A runtime a test
    drops would otherwise leave its SQLite connection to the garbage collector, which Python 3.13 reports
    as a ResourceWarning in whichever test runs then (the suite fails on warnings). The product's own
    close at quit is tested by tests/runtime/test_state_file.py."""
    from workbench.persist.state import StateFile

    opened: list[StateFile] = []
    open_state = StateFile.__init__

    def tracked(self: StateFile, path: Path, **options: bool) -> None:
        open_state(self, path, **options)
        opened.append(self)

    monkeypatch.setattr(StateFile, "__init__", tracked)
    yield
    for state in opened:
        state.close()


@pytest.fixture(autouse=True)
def _private_files_let_go():
    """Every `PrivateFiles` hold a test took (a recall store, a lock on an agents' folder) is let go when
    it ends, as a quit lets go. One left to the garbage collector kept the process umask tight for the
    tests after it in its worker, and a test that set a loose umask of its own to check its files are
    user-only anyway then passed or failed with the tests before it (a store in a reference cycle is
    finalised only by a full collection, which may not come for many tests). The test that leaves one
    held fails, by name."""
    from workbench.files import PrivateFiles

    before = PrivateFiles._holders
    yield
    left = PrivateFiles._holders - before
    assert left == 0, f"the test left PrivateFiles held {left} more time(s): close what it opened"
