"""A forget killed while it rewrites a memory file (FileMemoryProvider's, the workbench's own or on a
user's agent) leaves the file whole: its other facts are not lost, and the forget completed at the next
start leaves no byte of the value. `bench/crash.py --scenario agents-key` kills at every step; this is
the step that lost the file's other facts (the file was truncated in place, then written)."""

from __future__ import annotations

import asyncio
import subprocess
import sys

from tests.agentmem.helpers import files_holding
from tests.test_startup import HANG
from workbench.agentmem.files import FileMemory
from workbench.memory.forget import ForgetPlan

KEPT = "module=Billing\npriority=high\n"
# The forget, in a process of its own, killed as it opens the rewrite of profile.md for writing (the
# file itself, or the work file beside it).
KILLED = """
import asyncio, os, signal, sys
from pathlib import Path
from workbench.agentmem.files import FileMemory
from workbench.memory.forget import ForgetPlan
memory = FileMemory(Path(sys.argv[1]))
profile = str((memory.folder / "profile.md").resolve())
fdopen = os.fdopen
def killing(descriptor, *args, **kwargs):
    if os.path.realpath(f"/proc/self/fd/{descriptor}").startswith(profile):
        os.kill(os.getpid(), signal.SIGKILL)
    return fdopen(descriptor, *args, **kwargs)
os.fdopen = killing
asyncio.run(memory.erase(ForgetPlan(("customer",), frozenset({"customer"}), frozenset({"Contoso"}))))
"""


def test_a_forget_killed_in_a_rewrite_loses_no_other_fact_and_completes_at_the_next_start(tmp_path):
    memory = FileMemory(tmp_path)
    memory.folder.mkdir(parents=True)
    profile = memory.folder / "profile.md"
    profile.write_text("customer=Contoso\n" + KEPT)

    killed = subprocess.run([sys.executable, "-c", KILLED, str(tmp_path)], capture_output=True, timeout=HANG)
    assert killed.returncode == -9, killed.stderr
    assert profile.read_text() == "customer=Contoso\n" + KEPT  # whole: the old file, not half of a new one

    plan = ForgetPlan(("customer",), frozenset({"customer"}), frozenset({"Contoso"}), completing=True)
    assert asyncio.run(memory.erase(plan)) == 1  # the next start completes it
    assert KEPT in profile.read_text() and files_holding(tmp_path, "Contoso") == []
    assert sorted(p.name for p in memory.folder.iterdir()) == ["memories.md", "profile.md"]  # no work file left
