"""Sessions that survive a restart (`workbench --persist`): the runtime's `Histories` on disk, and a
holder of the one forget.

Layout under the directory (user-only: 0700 directories, 0600 files, written so from the first byte):

    memory.json          facts with their provenance, the ledger, epoch and counters (format.py)
    sessions.json        each agent's current `AgentSession.to_dict()` (format.py)
    history/<id>.jsonl   the framework's `FileHistoryProvider` files, one per current session

memory.json is rewritten after every change of memory, sessions.json whenever the agents' sessions
change or a turn ends; the history files are appended to by the framework. A history file whose
session is no longer current (a forget or a switch replaced it) is erased: overwritten, then removed.
After a forget, every file under the directory is scanned for the forgotten values; one that still
holds any makes the forget report this holder as not reached."""

from __future__ import annotations

import asyncio
import os
import threading
from collections.abc import Callable, Iterator, Mapping
from dataclasses import replace
from datetime import datetime
from functools import partial
from pathlib import Path

from agent_framework import Agent, AgentSession, HistoryProvider, Message

from workbench.files import WORK_SUFFIX, erase_file, private_dir, private_file
from workbench.memory import WorkingMemory
from workbench.memory.forget import ForgetPlan, declared_in
from workbench.memory.store import utc_now
from workbench.persist.format import (
    MEMORY_FILE,
    SESSIONS_FILE,
    read_memory,
    read_sessions,
    write_memory,
    write_sessions,
)
from workbench.persist.history import PrivateFileHistory
from workbench.runtime.remembered import HeldItem, history_text
from workbench.runtime.view import Persisted
from workbench.text import clip, json_strings

DIRECTORY = "sessions"  # under the user's data directory
HISTORY = "history"
LOCK_FILE = "lock"  # empty; held locked while a workbench uses the directory
_FAILURE_CHARS = 200
_WHAT = {
    MEMORY_FILE: "the facts with their provenance, the ledger and the counters",
    SESSIONS_FILE: "each agent's session (AgentSession.to_dict)",
    LOCK_FILE: "held locked while a workbench uses the directory; empty",
}


class PersistedSessions:
    """Both agents' sessions, the facts and the ledger, kept in `directory` and resumed from it.

    Give `memory` and the object itself (as `histories`) to the runtime, then register the object
    with the runtime's `forgetting`. A saved file this version cannot read stops start-up with the
    reason and is left as it is. One workbench at a time: a second one on the same directory would
    interleave its writes, and its memory could write back what the other forgot (`InUse`)."""

    name = "persisted sessions"
    unit = "file(s)"

    def __init__(self, directory: Path, *, ledger_capacity: int = 500, clock: Callable[[], datetime] = utc_now) -> None:
        self.directory = private_dir(directory.expanduser().resolve())
        self._lock_descriptor = _lock(self.directory / LOCK_FILE)
        try:
            self._history_dir = private_dir(self.directory / HISTORY)
            for work in self.directory.rglob(f"*{WORK_SUFFIX}"):
                work.unlink()  # a write interrupted before its rename: the file beside it is whole
            saved = read_memory(self._memory_file)
            self._saved_shape, self._saved_sessions = read_sessions(self._sessions_file)
            saved_at = _modified(self._sessions_file)  # before this run writes it
        except BaseException:
            self.close()  # start-up stops here; the directory is free again
            raise
        self._history = PrivateFileHistory(self._history_dir, current=self._is_current)
        self._lock = threading.RLock()
        self._current: frozenset[Path] = frozenset()
        self._erased = 0
        self._failure: str | None = None
        self.memory = (
            WorkingMemory.restored(saved, ledger_capacity=ledger_capacity, clock=clock)
            if saved is not None
            else WorkingMemory(ledger_capacity=ledger_capacity, clock=clock)
        )
        self._resumed = Persisted(
            str(self.directory), facts=len(self.memory.facts()), resumed=saved is not None, saved_at=saved_at
        )
        self.memory.subscribe(lambda _: self._save_memory())

    def close(self) -> None:
        """Let another workbench use the directory (exiting the process does the same)."""
        if self._lock_descriptor is not None:
            os.close(self._lock_descriptor)
            self._lock_descriptor = None

    @property
    def _memory_file(self) -> Path:
        return self.directory / MEMORY_FILE

    @property
    def _sessions_file(self) -> Path:
        return self.directory / SESSIONS_FILE

    # -- the runtime's Histories -------------------------------------------------------------

    @property
    def persisted(self) -> Persisted:
        with self._lock:
            return replace(self._resumed, failure=self._failure)

    def provider(self, agent: str) -> HistoryProvider:
        return self._history

    def first_session(self, agent: str, built: Agent, shape: str) -> AgentSession:
        saved = self._saved_sessions.get(agent)
        if saved is None or shape != self._saved_shape:
            return built.create_session()  # its old file is erased when the runtime says which sessions it keeps
        session = AgentSession.from_dict(saved)
        with self._lock:
            messages = self._resumed.messages + self._history.count(self._history.file(session.session_id))
            self._resumed = replace(self._resumed, messages=messages, resumed=True)
        return session

    def messages(self, agent: str, session: AgentSession) -> list[Message]:
        return self._history.read(self._history.file(session.session_id))

    def kept(self, sessions: Mapping[str, AgentSession], shape: str) -> None:
        """Save the sessions, and erase every history file that belongs to none of them."""
        with self._lock:
            self._current = frozenset(self._history.file(s.session_id) for s in sessions.values())
            dicts = {name: s.to_dict() for name, s in sessions.items()}
            self._saving(lambda: write_sessions(self._sessions_file, shape, dicts))
            for path in self._history_dir.iterdir():
                if path not in self._current:
                    self._saving(partial(erase_file, path))  # a failure is also caught by forget's scan
                    self._erased += 1

    def _is_current(self, session_id: str | None) -> bool:
        with self._lock:
            return self._history.file(session_id) in self._current

    def _save_memory(self) -> None:
        with self._lock:  # the snapshot is taken and written in one step: a later change is never overwritten
            self._saving(lambda: write_memory(self._memory_file, self.memory.saved()))

    def _saving(self, write: Callable[[], object]) -> None:
        """Run `write`; an OSError (disk full, permissions) is shown in the header, not raised into
        the turn or the memory update that caused the write."""
        try:
            write()
        except OSError as exc:
            self._failure = clip(f"{type(exc).__name__}: {exc.strerror or exc}", _FAILURE_CHARS)
        else:
            self._failure = None

    async def held(self, sessions: Mapping[str, AgentSession]) -> list[HeldItem]:
        """Every file under the directory with its size: each history file as the messages it holds
        (naming the agent whose current session it is), the others as written."""
        agents = {self._history.file(s.session_id): name for name, s in sessions.items()}
        return await asyncio.to_thread(self._held, agents)

    def _held(self, agents: Mapping[Path, str]) -> list[HeldItem]:
        held: list[HeldItem] = []
        with self._lock:  # no file is rewritten or erased while it is read
            for path in sorted(p for p in self.directory.rglob("*") if p.is_file()):
                name = path.relative_to(self.directory).as_posix()
                if path.parent == self._history_dir:
                    messages = self._history.read(path)
                    whose = f"the {agents[path]} agent's history" if path in agents else "a history no agent reads"
                    what, content = f"{whose}: {len(messages):,} message(s)", history_text(messages)
                else:
                    what = _WHAT.get(path.name, "")
                    content = path.read_text(encoding="utf-8", errors="replace")
                held.append(HeldItem("file", name, what, content, path.stat().st_size))
        return held

    # -- a holder of the one forget ----------------------------------------------------------

    async def declared(self, keys: frozenset[str]) -> set[str]:
        with self._lock:
            self._erased = 0  # a forget begins with its plan: count the files erased from here on
        return declared_in(self._history_texts(), keys)

    async def forget(self, plan: ForgetPlan) -> int:
        """Runs after memory forgot and the runtime replaced both sessions (which erased their history
        files): rewrite memory.json from memory as it now is, then scan every file. Returns the files this
        forget rewrote or erased; raises when a file still holds a forgotten value."""
        with self._lock:
            self._save_memory()
            done, self._erased = self._erased + 1, 0
            left = self.holding(plan)
        if left:
            names = ", ".join(str(p.relative_to(self.directory)) for p in left[:5])
            raise RuntimeError(f"{len(left)} file(s) under {self.directory} still hold a forgotten value: {names}")
        return done

    def holding(self, plan: ForgetPlan) -> list[Path]:
        """Every file under the directory that holds a forgotten value, as raw text or JSON-escaped."""
        with self._lock:
            return [p for p in sorted(self.directory.rglob("*")) if p.is_file() and _holds(p, plan)]

    def _history_texts(self) -> Iterator[str]:
        for path in sorted(self._history_dir.glob("*.jsonl")):
            yield from (m.text or "" for m in self._history.read(path))


def _modified(path: Path) -> datetime | None:
    """When `path` was last written, in local time; None when it does not exist."""
    return datetime.fromtimestamp(path.stat().st_mtime).astimezone() if path.exists() else None


class InUse(RuntimeError):
    """Another workbench is using the directory."""


def _lock(path: Path) -> int | None:
    """Hold an exclusive lock on `path` for as long as the returned descriptor is open; InUse when
    another process holds it. No lock where the platform has no `fcntl` (Windows)."""
    try:
        import fcntl
    except ImportError:
        return None
    private_file(path)
    descriptor = os.open(path, os.O_RDWR)
    try:
        fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(descriptor)
        raise InUse(f"another workbench --persist is using {path.parent}; quit it first") from None
    return descriptor


def _holds(path: Path, plan: ForgetPlan) -> bool:
    raw = path.read_bytes().decode("utf-8", errors="replace")
    return plan.holds(raw) or any(plan.holds(s) for s in json_strings(raw))
