"""A `FileHistoryProvider` on a loaded agent as a memory the workbench lists and forgets.

The framework's file-backed history keeps one append-only file per session under its storage path
(JSON Lines, or length-prefixed MessagePack records), every message of every session it saw. A
forget replaces the agent's session, but the files of the sessions before stay and are read again
by anything that resumes one: the forget reaches them. It rewrites each session file without the
messages that hold a forgotten value (the others kept byte for byte, written to a private work file,
flushed and renamed over it: a crash leaves the old file or the new one), erases a file left with no
message (and every file for a forget of everything), and erases any work file a crash left beside."""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass
from pathlib import Path

import msgspec
from agent_framework import FileHistoryProvider, Message

from workbench.agentmem.base import OnTheirAgents, line_holds
from workbench.files import WORK_SUFFIX, erase_file, rewrite_private
from workbench.memory.forget import ForgetPlan, declared_in
from workbench.runtime.remembered import HeldItem, history_text

_HEADER_BYTES = 4  # a MessagePack record's length, big-endian, before the record


@dataclass(frozen=True)
class _Record:
    """One stored message as its file holds it (`raw`), and as JSON text (`text`: what a forget
    looks in, with `line_holds`); `message` None when it cannot be read (a write a crash cut off)."""

    raw: bytes
    text: str
    message: Message | None


class FileHistoryMemory(OnTheirAgents):
    """The session files of one `FileHistoryProvider` (an `AgentMemory` whose provider is already on
    the agent: `providers` gives none)."""

    unit = "history file(s) rewritten or erased"

    def __init__(self, provider: FileHistoryProvider, name: str) -> None:
        self.provider = provider
        self.name = name
        self.folder = provider.storage_path.resolve()
        self.msgpack = provider.serialization_format == "msgpack"
        # The provider's own suffix for its session files (private: there is no public name for it).
        self.suffix: str = provider._file_extension

    @property
    def location(self) -> str | None:
        return str(self.folder)

    def _files(self) -> list[Path]:
        if not self.folder.is_dir():
            return []
        return sorted(p for p in self.folder.glob(f"*{self.suffix}") if p.is_file() and not p.is_symlink())

    def describe(self) -> str:
        """For the header: counts the files, reads none (says so when its folder cannot be listed)."""
        encoding = "MessagePack" if self.msgpack else "JSON Lines"
        try:
            files = len(self._files())
        except OSError as exc:
            return f"FileHistoryProvider ({encoding}), its folder cannot be read ({type(exc).__name__}: {exc})"
        return f"FileHistoryProvider ({encoding}), {files} session file(s)"

    def _records(self, path: Path) -> list[_Record]:
        data = path.read_bytes()
        if self.msgpack:
            return _msgpack_records(data)
        return [_json_record(line) for line in data.splitlines(keepends=True)]

    def _read(self) -> list[tuple[Path, int, list[_Record]]]:
        found = []
        for path in self._files():
            try:
                found.append((path, path.stat().st_size, self._records(path)))
            except FileNotFoundError:  # gone since it was listed
                continue
        return found

    async def held(self) -> list[HeldItem]:
        """Each session file: its messages as a person reads them, and any record that cannot be read, raw."""
        return [
            HeldItem(
                "history",
                path.name,
                f"{sum(r.message is not None for r in records):,} message(s) of one session",
                "\n".join(
                    [
                        history_text(r.message for r in records if r.message is not None),
                        *(r.text for r in records if r.message is None and r.text),
                    ]
                ),
                size,
            )
            for path, size, records in await asyncio.to_thread(self._read)
        ]

    async def declared(self, keys: frozenset[str]) -> set[str]:
        """Every value a stored message declares for `keys`, as its text reads (a record that cannot be
        read, as it is: in a JSON record's own text a declaration runs on into the JSON around it)."""
        records = [r for _, _, found in await asyncio.to_thread(self._read) for r in found]
        return declared_in([r.message.text or "" if r.message else r.text for r in records], keys)

    async def erase(self, plan: ForgetPlan) -> int:
        """Rewrite or erase every session file holding a forgotten value; returns the files reached."""
        return await asyncio.to_thread(self._forget, plan)

    def _forget(self, plan: ForgetPlan) -> int:
        for leftover in sorted(self.folder.glob(f"*{WORK_SUFFIX}")) if self.folder.is_dir() else []:
            erase_file(leftover)  # a rewrite a crash cut short: it holds what the file held
        reached = 0
        for path in self._files():
            # The lock the provider's own reads and appends take for this file (private: its only lock).
            with self.provider._session_write_lock(path):
                records = self._records(path)
                kept = [r.raw for r in records if not (plan.everything or line_holds(plan, r.text))]
                if len(kept) == len(records):
                    continue
                reached += 1
                if kept:
                    rewrite_private(path, b"".join(kept))
                else:
                    erase_file(path)
        return reached


def _json_record(line: bytes) -> _Record:
    text = line.decode("utf-8", errors="replace").strip()
    try:
        return _Record(line, text, Message.from_dict(json.loads(text)))
    except (ValueError, TypeError):
        return _Record(line, text, None)


def _msgpack_records(data: bytes) -> list[_Record]:
    """Each length-prefixed record; what follows a record cut short is one unreadable record."""
    records = []
    at = 0
    while at < len(data):
        length = int.from_bytes(data[at : at + _HEADER_BYTES], "big")
        end = at + _HEADER_BYTES + length
        raw = data[at:end]
        try:
            if length <= 0 or end > len(data):
                raise ValueError("a record cut short")
            payload = msgspec.msgpack.decode(raw[_HEADER_BYTES:])
            records.append(_Record(raw, json.dumps(payload, ensure_ascii=False), Message.from_dict(payload)))
        except (ValueError, TypeError, msgspec.DecodeError):
            tail = data[at:]
            records.append(_Record(tail, tail.decode("utf-8", errors="replace"), None))
            break
        at = end
    return records
