"""A forget that rewrites a user's agent's history file on a full disk: the failure is in its report,
the file is left whole (nothing lost), and the forget asked again once there is room completes it.
On a real small file system (a 64 KiB tmpfs, mounted as root)."""

from __future__ import annotations

import asyncio
import errno
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from agent_framework import Agent, FileHistoryProvider

from tests.agentmem.test_recognise import say, session_over, traces
from workbench import ScriptedChatClient

HOLDER = "triage: FileHistoryProvider"


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    disk = tmp_path / "disk"
    disk.mkdir()
    mounted = os.geteuid() == 0 and (
        subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(disk)], capture_output=True).returncode
        == 0
    )
    if not mounted:
        pytest.skip("mounting a small tmpfs needs root")
    try:
        yield disk
    finally:
        subprocess.run(["umount", str(disk)], check=True)


def fill(disk: Path) -> Path:
    """A file taking every free byte of `disk`."""
    filler = disk / "filler"
    with filler.open("wb", buffering=0) as file:
        try:
            while file.write(bytes(512)):
                pass
        except OSError as exc:
            assert exc.errno == errno.ENOSPC
    return filler


def test_a_forget_on_a_full_disk_says_so_keeps_the_file_whole_and_completes_once_there_is_room(small_disk):
    history = FileHistoryProvider(small_disk / "history")
    triage = Agent(ScriptedChatClient(), "You sort problems.", name="triage", context_providers=[history])
    runtime = session_over(triage).runtime

    async def story() -> None:
        await say(runtime, "triage", "database=Oracle", "customer=Contoso; module=Billing")
        (session_file,) = (small_disk / "history").glob("*.jsonl")
        before = session_file.read_bytes()
        filler = fill(small_disk)

        report = await runtime.forget("customer")
        assert "No space left on device" in report.failures[HOLDER]
        assert HOLDER in report.describe() and session_file.read_bytes() == before  # said, and nothing lost

        filler.unlink()
        report = await runtime.forget("customer")
        assert report.removed[HOLDER] == 1 and not report.failures
        assert traces(small_disk, "Contoso") == [] and "database=Oracle" in session_file.read_text()
        assert sorted(p.name for p in (small_disk / "history").iterdir()) == [session_file.name]  # no work file

    asyncio.run(story())
