"""Extracted memory's transcripts: the append that reads back only the file's last lines writes what the
framework's own append writes, byte for byte, and a turn no longer reads the whole transcript back."""

import asyncio
from pathlib import Path

import pytest
from agent_framework import FileHistoryProvider, Message
from hypothesis import example, given, settings
from hypothesis import strategies as st

from tests.agentmem.helpers import say, scripted_runtime
from workbench.agentmem import extracted
from workbench.agentmem.extracted import ExtractedMemory, TailCheckedTranscript, last_lines

# A small pool, so that batches repeat the file's end as a replay would: with and without ids, both roles.
POOL = [
    Message(role="user", contents=["module=Billing"], message_id="u1"),
    Message(role="assistant", contents=["noted: module=Billing"], message_id="a1"),
    Message(role="user", contents=["again"]),
    Message(role="assistant", contents=["again, said once more"]),
    Message(role="user", contents=["naïve — ünïcode ✓ " * 40], message_id="u2"),
]


def saved(folder: Path, provider: type[FileHistoryProvider], batches: list[list[int]]) -> bytes:
    history = provider(folder)

    async def save() -> None:  # one event loop for the example's batches, each saved after the one before
        for batch in batches:
            await history.save_messages("s", [POOL[i] for i in batch])

    asyncio.run(save())
    path = next(folder.glob("*.jsonl"), None)
    return path.read_bytes() if path else b""


@settings(max_examples=200, deadline=None)
@given(st.lists(st.lists(st.integers(0, len(POOL) - 1), max_size=5), max_size=8))
@example(batches=[[0, 1], [4, 1], [0, 1]])  # the file's last message alone repeats the batch's: no overlap
def test_an_append_writes_what_the_frameworks_append_writes(tmp_path_factory, batches):
    ours = saved(tmp_path_factory.mktemp("tail"), TailCheckedTranscript, batches)
    theirs = saved(tmp_path_factory.mktemp("framework"), FileHistoryProvider, batches)
    assert ours == theirs


@pytest.mark.parametrize("ending", ["\n", "\r\n", "\r"])
def test_last_lines_across_blocks_and_line_endings(tmp_path, monkeypatch, ending):
    monkeypatch.setattr(extracted, "_TAIL_BLOCK", 7)  # every line crosses a block boundary
    lines = [f"{n}: ünïcode ✓ x{'x' * n}" for n in range(30)]
    path = tmp_path / "t.jsonl"
    path.write_bytes((ending.join(lines) + ending + ending).encode())  # a blank line at the end
    assert last_lines(path, 3) == lines[-3:]
    assert last_lines(path, 100) == lines
    with path.open(encoding="utf-8") as text:  # as the framework reads it
        assert [line.strip() for line in text if line.strip()][-5:] == last_lines(path, 5)


def test_a_turn_reads_no_whole_transcript_back(tmp_path, monkeypatch):
    whole_reads: list[Path] = []
    original = FileHistoryProvider._read_json_messages

    def counted(self, file_path):
        if getattr(self, "_tail", None) is None:
            whole_reads.append(file_path)
        return original(self, file_path)

    monkeypatch.setattr(FileHistoryProvider, "_read_json_messages", counted)
    memory = ExtractedMemory(tmp_path)
    runtime = scripted_runtime(memory)
    asyncio.run(say(runtime, "module=Reporting", "module=Billing", "database=PostgreSQL"))
    transcripts = [f for f in memory.files() if f.kind == "transcript"]
    assert len(transcripts) == 1 and transcripts[0].content.count("\n") == 6  # three turns, appended
    assert whole_reads == []
