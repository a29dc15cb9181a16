"""Sessions that survive a restart (`workbench --persist`): the runtime's `Histories` on disk, and a
holder of the one forget.

Layout under the directory (user-only: 0700 directories, 0600 files, written so from the first byte):

    state.sqlite         the facts with their provenance, the ledger and the counters, each agent's
                         `AgentSession.to_dict()`, and every message of the agents' current sessions,
                         and of those saved under another shape (mode, recall), kept, not resumed,
                         until a start with that shape resumes them or a forget removes them
                         (state.py); with SQLite's write-ahead log beside it while it is open
    lock                 held locked while a workbench uses the directory; names its process

When things are saved:
- a turn: its messages, and the facts and ledger it left, in one transaction when the agent's history
  stores the exchange; the sessions when the turn ends, however it ends (with whatever memory changed
  meanwhile: a batch rejected, a cancel after admission);
- anything else memory does outside a turn (a note, an abandoned ticket), at once;
- a forget: memory is written last, once every other holder has applied the plan (the holders run in
  order and this one is registered last), so a forget cut short by a crash can be planned again from
  what memory still holds and completed at the next start (`workbench.persist.journal`).

A save that fails (a full disk, a folder made read-only, an I/O error) changes nothing on disk, is
shown in the header at once and noted in the ledger, and the next save writes everything again: a
turn's, or a retry after a bounded backoff (`RETRY_DELAYS`, on a timer thread) while none comes. The
save that succeeds clears the failure at once, with a note in the ledger. On quit the app tries once
more (`save_again`), and `unsaved` says in one line what is still not on disk. After a
forget every file under the directory is scanned for the forgotten values; one that still holds any
makes the forget report this holder as not reached."""

from __future__ import annotations

import asyncio
import json
import sqlite3
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import replace
from datetime import datetime
from pathlib import Path
from typing import Any

from agent_framework import Agent, AgentSession, HistoryProvider, Message

from workbench.files import WORK_SUFFIX, FolderLock, private_dir
from workbench.memory import SEED, Contract, WorkingMemory
from workbench.memory.forget import ForgetPlan, declared_in
from workbench.memory.outcome import Outcome, Status
from workbench.memory.saved import SavedMemory
from workbench.memory.store import utc_now
from workbench.memory.turns import current_turn
from workbench.persist.directory_files import LOCK_FILE, files_held, files_holding, modified
from workbench.persist.format import SavedFileError
from workbench.persist.legacy import move_into
from workbench.persist.state import STATE_FILE, Saved, StateFile
from workbench.persist.state_history import StateHistory
from workbench.persist.unsaved import unsaved_line
from workbench.runtime.remembered import HeldItem, history_text
from workbench.runtime.view import NOT_SAVED, SAVED_AGAIN, Persisted
from workbench.text import clip, json_strings

DIRECTORY = "sessions"  # under the user's data directory
_FAILURE_CHARS = 200
# Seconds between retries of a failing save, the last repeated until one succeeds: soon after a
# short hiccup, and no more than twice a minute against a disk that stays full.
RETRY_DELAYS = (1.0, 2.0, 5.0, 10.0, 30.0)
RESUMED_BY = "a start with those options resumes it; a forget of a value it holds, or of everything, deletes it"


class PersistedSessions:
    """Both agents' sessions, the facts and the ledger, kept in `directory` and resumed from it.

    Give `memory` and the object itself (as `histories`) to the runtime, then register the object
    with the runtime's `forgetting`, last. A saved file this version cannot read stops start-up with the
    reason and is left as it is. One workbench at a time: a second one on the same directory would
    interleave its writes, and its memory could write back what the other forgot (`InUse`).

    Memory is opened under `contract`, which must admit everything the contract it was saved under did
    (its keys, as many facts, values as long): else start-up stops with one line naming both, and the
    file is left as it is, so no fact and no ledger event of a key the run would not know is hidden, nor
    kept out of reach of a forget of everything. A wider contract opens it, with a note in the ledger.

    `flushed=False` leaves commits unflushed to the disk (`StateFile`): for a directory nothing opens after
    a crash, the drift lab's."""

    name = "persisted sessions"
    unit = "file(s)"

    def __init__(
        self,
        directory: Path,
        *,
        contract: Contract = SEED,
        ledger_capacity: int = 500,
        clock: Callable[[], datetime] = utc_now,
        retry_delays: Sequence[float] = RETRY_DELAYS,
        flushed: bool = True,
    ) -> None:
        self.directory = private_dir(directory.expanduser().resolve())
        self._folder_lock = FolderLock(self.directory / LOCK_FILE, f"the persisted sessions in {self.directory}")
        self._state: StateFile | None = None
        saved, saved_at, saved_shape = self._open(contract, flushed)
        self._history = StateHistory(self)
        self._lock = threading.RLock()
        self._current: dict[str, dict[str, Any]] = {}
        self._shape = saved_shape
        # Once the start's shape is known: the sessions it resumes, by agent, and those saved under another shape
        # (or an earlier set under the same), kept, not resumed, until their shape resumes them or a forget.
        self._resumes: dict[str, dict[str, Any]] | None = None
        self._others: tuple[tuple[str, dict[str, dict[str, Any]]], ...] = ()
        # The kept sessions as last saved: rewritten when they change, not with every turn's messages.
        self._others_saved: tuple[tuple[str, dict[str, dict[str, Any]]], ...] | None = None
        self._start_shape = ""
        # How many messages a session holds where another store keeps them (`RedisHistories`), by agent
        # and session id; None: in the file.
        self._counter: Callable[[str, str], int] | None = None
        self._also_done: str | None = None  # what the last forget deleted of them (`also_done`)
        self._failure: str | None = None
        self._retry_delays = tuple(retry_delays)
        self._retries = 0  # retries since the save began failing
        self._retry: threading.Timer | None = None
        self._unsaved_memory = False  # memory changed since it was last written
        # Turns' messages a failed save did not write, by session: read as part of the history and
        # written by the next save.
        self._unsaved_messages: dict[str, list[dict[str, Any]]] = {}
        # Each session's messages once read, parsed, kept as the file holds them (with what a failed
        # save did not write yet): a turn appends its own, and reads no row back. Reading every row of
        # a session and parsing it again before each turn made every turn slower than the one before.
        # The sessions `current` does not name are dropped with their rows.
        self._histories: dict[str, list[Message]] = {}
        # What the last `current` wrote (sessions, shape, the sessions whose messages the file keeps, the others).
        self._written: tuple[dict[str, dict[str, Any]], str, frozenset[str], tuple[Any, ...]] | None = None
        self._forgetting = False  # a forget is under way: memory is written when it ends, not before
        self.memory = (
            WorkingMemory.restored(saved, contract, ledger_capacity=ledger_capacity, clock=clock)
            if saved is not None
            else WorkingMemory(contract, ledger_capacity=ledger_capacity, clock=clock)
        )
        self._resumed = Persisted(
            str(self.directory), facts=len(self.memory.facts()), resumed=saved is not None, saved_at=saved_at
        )
        self.memory.subscribe(self._memory_changed)
        if saved is not None and saved.contract != contract:
            self.memory.note(  # saved with the memory it notes
                f"opened under a wider contract ({contract.describe()}) than the one it was saved under "
                f"({saved.contract.describe()}): every fact and event is kept",
                origin="persist",
            )

    def _open(self, contract: Contract, flushed: bool) -> tuple[SavedMemory | None, datetime | None, str]:
        """Open the state file and check what it holds before anything else uses it: a saved memory
        `contract` cannot open stops start-up (`SavedFileError`), the file left as it is; only then is it
        marked open (this run's). Any failure closes what was opened (the directory is free again) and
        is raised. Returns the saved memory, when the file was last written, and the saved sessions' shape."""
        try:
            for work in self.directory.rglob(f"*{WORK_SUFFIX}"):
                work.unlink()  # a write of an earlier version interrupted before its rename
            path = self.directory / STATE_FILE
            saved_at = modified(path)  # before this run writes it
            self._state = state = StateFile(path, flushed=flushed)
            move_into(state, self.directory)
            saved = state.memory()
            if saved is not None and (problem := contract.cannot_open(saved.contract)):
                raise SavedFileError(f"{path}: {problem}")
            saved_shape, saved_sessions = state.sessions()
            # Every set of sessions the file holds, oldest first: those kept under another shape by an
            # earlier start, then the current ones. The start's shape says which it resumes (`_started`).
            self._saved = [*state.kept(), *([(saved_shape, saved_sessions)] if saved_sessions else [])]
            state.mark_open()  # everything read back is good: from here on the file is this run's
        except BaseException:
            self.close()  # start-up stops here; the directory is free again
            raise
        return saved, saved_at, saved_shape

    def close(self) -> None:
        """Write everything into the state file alone (`StateFile.close`), and let another workbench use
        the directory (exiting the process frees it too, but leaves the state in SQLite's log)."""
        if (retry := getattr(self, "_retry", None)) is not None:
            retry.cancel()
        if self._state is not None:
            self._state.close()
            self._state = None
        self._folder_lock.release()

    @property
    def state(self) -> StateFile:
        if self._state is None:
            raise RuntimeError(f"the persisted sessions in {self.directory} are closed")
        return self._state

    # -- the runtime's Histories -------------------------------------------------------------

    @property
    def persisted(self) -> Persisted:
        with self._lock:
            return replace(self._resumed, failure=self._failure)

    def provider(self, agent: str) -> HistoryProvider:
        return self._history

    def _started(self, shape: str) -> dict[str, dict[str, Any]]:
        """At the start's first call, with its `shape`: the latest sessions saved under it with
        messages are resumed (else the latest saved under it), and every other set that still has
        messages in the file is kept, not resumed (a session without messages is no history: it goes).
        The sessions it resumes, by agent."""
        with self._lock:
            if self._resumes is None:
                said = [{a: d for a, d in sessions.items() if self._count(a, d)} for _, sessions in self._saved]
                same = [i for i, (s, _) in enumerate(self._saved) if s == shape]
                resumed: int | None = ([i for i in same if said[i]] or same)[-1] if same else None
                others = [(s, said[i]) for i, (s, _) in enumerate(self._saved) if said[i] and i != resumed]
                self._resumes = dict(self._saved[resumed][1]) if resumed is not None else {}
                self._others = tuple(others)
                self._start_shape = shape
                self._counted()
            return self._resumes

    def _counted(self) -> None:
        """The header's count of the messages kept, not resumed, by shape (`Persisted.kept`)."""
        counts: dict[str, int] = {}
        for shape, sessions in self._others:
            counts[shape] = counts.get(shape, 0) + sum(self._count(a, d) for a, d in sessions.items())
        self._resumed = replace(self._resumed, kept=tuple(counts.items()), shape=self._start_shape)

    def _count(self, agent: str, session: Mapping[str, Any]) -> int:
        session_id = str(session["session_id"])
        return self._counter(agent, session_id) if self._counter is not None else self.state.count(session_id)

    def counted_by(self, counter: Callable[[str, str], int]) -> None:
        """The messages of the agents' histories are kept by another store, which counts a session's
        (by agent and session id): asked, before the runtime starts, which sessions saved under another
        shape still have a history to keep."""
        self._counter = counter

    def kept_elsewhere(self) -> list[tuple[str, str]]:
        """The sessions saved under another shape, kept, not resumed: each (agent, session id)."""
        return [(a, s) for a, s, _ in self.kept_shapes()]

    def kept_shapes(self) -> list[tuple[str, str, str]]:
        """The sessions saved under another shape, kept, not resumed: each (agent, session id, shape)."""
        with self._lock:
            return [(a, str(d["session_id"]), shape) for shape, sessions in self._others for a, d in sessions.items()]

    def first_session(self, agent: str, built: Agent, shape: str) -> AgentSession:
        saved = self._started(shape).get(agent)
        if saved is None:
            return built.create_session()
        session = AgentSession.from_dict(saved)
        with self._lock:
            messages = self._resumed.messages + self.state.count(session.session_id)
            self._resumed = replace(self._resumed, messages=messages, resumed=True)
        return session

    def messages(self, agent: str, session: AgentSession) -> list[Message]:
        return self.read(session.session_id)

    def read(self, session_id: str | None) -> list[Message]:
        """A session's messages as saved, oldest first: read from the file the first time, then as kept
        (`_histories`); SavedFileError naming the file when a row is JSON but not a message (hand-edited)."""
        if not session_id:
            return []
        with self._lock:
            history = self._histories.get(session_id)
            if history is None:
                rows = [*self.state.messages(session_id), *self._unsaved_messages.get(session_id, [])]
                history = self._histories[session_id] = self._parsed(session_id, rows)
            return list(history)

    def _parsed(self, session_id: str, rows: Sequence[dict[str, Any]]) -> list[Message]:
        try:
            return [Message.from_dict(m) for m in rows]
        except SavedFileError:
            raise
        except (TypeError, ValueError, KeyError, AttributeError) as exc:
            problem = f"a message of session {session_id} is not a saved message ({type(exc).__name__}: {exc})"
            raise SavedFileError(f"{self.state.path}: {problem}") from None

    def current(self, agent_sessions: Mapping[str, AgentSession], shape: str) -> None:
        """Save the agent sessions (with memory, when it changed), and delete the messages of every session
        that is none of them and none kept under another shape (`_started`). Nothing is written when the
        file holds exactly that already (the same sessions as the last time, everything saved since): a
        turn's end would otherwise be a second transaction after its messages', flushed to the disk.

        A switch of mode or recall in the app starts new sessions, and the messages of those it leaves
        are deleted, as the app says when it switches; only the sessions a start found saved under another
        shape are kept."""
        with self._lock:
            self._started(shape)
            self._current = {name: s.to_dict() for name, s in agent_sessions.items()}
            self._shape = shape
            current = frozenset(s.session_id for s in agent_sessions.values())
            self._unsaved_messages = {s: m for s, m in self._unsaved_messages.items() if s in current}
            self._histories = {s: m for s, m in self._histories.items() if s in current}
            written = (self._current, shape, current, self._others)
            if (
                written == self._written
                and self._failure is None
                and not (self._unsaved_memory or self._unsaved_messages)
            ):
                return
            self._save(Saved(shape=shape, sessions=self._current, keep_only=current | self._other_ids()))
            self._written = written if self._failure is None else None

    def _other_ids(self) -> frozenset[str]:
        return frozenset(str(d["session_id"]) for _, sessions in self._others for d in sessions.values())

    def save_turn(self, session_id: str, messages: list[dict[str, Any]]) -> None:
        """A turn's messages, with the facts and the ledger it left, as one transaction; nothing for a
        session no agent runs any more (a forget replaced it while the turn ran)."""
        with self._lock:
            if any(s["session_id"] == session_id for s in self._current.values()):
                if (history := self._histories.get(session_id)) is not None:
                    # As a read of the rows gives them back: each as the file stores it (JSON), parsed.
                    history += self._parsed(session_id, [json.loads(json.dumps(m)) for m in messages])
                self._unsaved_messages.setdefault(session_id, []).extend(messages)
                self._save(Saved())

    def _memory_changed(self, outcome: Outcome) -> None:
        """Memory settled something. Within a turn it is saved with the turn's messages or when the turn
        ends; during a forget, when the forget ends; otherwise now."""
        with self._lock:
            self._unsaved_memory = True
            if outcome.status is Status.FORGOTTEN:
                self._forgetting = True
            if not (self._forgetting or current_turn.get() is not None):
                self._save(Saved())

    def _save(self, saved: Saved) -> None:
        """Write `saved` (and memory, when it changed and no forget is under way) as one transaction. A
        failure is kept for the header and noted in the ledger once, not raised into the turn or the
        memory update that caused the write; what was not written is written by the next save."""
        with_memory = self._unsaved_memory and not self._forgetting
        if with_memory:
            saved = replace(saved, memory=self.memory.saved())
        if self._unsaved_messages:
            saved = replace(saved, messages=self._unsaved_messages)
        if saved.sessions is None and self._current:
            saved = replace(saved, shape=self._shape, sessions=self._current)  # the sessions go with every save
        if saved.sessions is not None and self._resumes is not None and self._others != self._others_saved:
            saved = replace(saved, kept=self._others)  # and those kept under another shape, when they changed
        try:
            self.state.save(saved)
        except (OSError, sqlite3.Error) as exc:
            failure = clip(f"{type(exc).__name__}: {exc}", _FAILURE_CHARS)
            first = self._failure is None
            self._failure = failure
            self._retry_later()
            if first:
                self.memory.note(
                    f"Not saved: {failure}. Nothing is lost from this run yet; the next save writes everything "
                    "again, and it is retried meanwhile",  # a note's words: the ledger ends the sentence
                    origin=NOT_SAVED,
                )
            return
        if with_memory:
            self._unsaved_memory = False
        if saved.kept is not None:
            self._others_saved = self._others
        self._unsaved_messages = {}
        if self._failure is not None:
            self._failure, self._retries = None, 0
            if self._retry is not None:
                self._retry.cancel()
                self._retry = None
            self.memory.note("Saved again: everything of this run is on disk", origin=SAVED_AGAIN)

    def _retry_later(self) -> None:
        """Retry the failing save after the next delay of the backoff, unless a retry is already due."""
        if self._retry is not None or self._state is None or not self._retry_delays:
            return
        delay = self._retry_delays[min(self._retries, len(self._retry_delays) - 1)]
        self._retries += 1
        self._retry = threading.Timer(delay, self._retried)
        self._retry.daemon = True  # never keeps the process from ending
        self._retry.start()

    def _retried(self) -> None:
        with self._lock:
            self._retry = None
            if self._failure is not None and self._state is not None:
                self._save(Saved())

    def save_again(self) -> str | None:
        """Try once more to write what a failed save did not (a quit asks this); what is still not on
        disk, in one line (`unsaved`), or None when everything is."""
        with self._lock:
            if self._failure is not None and self._state is not None:
                self._save(Saved())
            return self.unsaved()

    def unsaved(self) -> str | None:
        """What this run holds that the state file does not, in one line naming the facts (keys only,
        never a value) and counting the messages, with the reason; None when everything is saved."""
        with self._lock:
            if self._failure is None:
                return None
            return unsaved_line(self.state, self.memory, self._unsaved_memory, self._unsaved_messages, self._failure)

    async def held(self, agent_sessions: Mapping[str, AgentSession]) -> list[HeldItem]:
        """Each agent's history as the messages it holds, a history no agent reads, and every file under
        the directory with its size (the database's memory and sessions as its content)."""
        agents = {s.session_id: name for name, s in agent_sessions.items()}
        return await asyncio.to_thread(self._held, agents)

    def _held(self, agents: Mapping[str, str]) -> list[HeldItem]:
        held: list[HeldItem] = []
        with self._lock:  # nothing is written while it is read
            kept = {str(d["session_id"]): (a, shape) for shape, sessions in self._others for a, d in sessions.items()}
            others = sorted(set(self.state.session_ids()) - set(agents))
            for session_id in [*agents, *others]:  # the agents' in their order, then any no agent reads
                messages = self.read(session_id)
                if session_id in agents:
                    whose, name = f"the {agents[session_id]} agent's history", agents[session_id]
                elif session_id in kept:
                    agent, shape = kept[session_id]
                    whose = f"the {agent} agent's history saved under {shape}, kept, not resumed ({RESUMED_BY})"
                    name = f"{agent} ({shape})"
                else:
                    whose, name = "a history no agent reads", session_id
                held.append(HeldItem("history", name, f"{whose}: {len(messages):,} message(s)", history_text(messages)))
            held += files_held(self.directory, self.state.rows)
        return held

    # -- a holder of the one forget ----------------------------------------------------------

    async def declared(self, keys: frozenset[str]) -> set[str]:
        return declared_in(self._history_texts(), keys)

    async def erase(self, plan: ForgetPlan) -> int:
        """Runs last, after memory forgot and every other holder applied the plan (the runtime's new
        sessions deleted the old ones' messages): write memory as it now is, then checkpoint and truncate
        the write-ahead log, then scan every file. Returns the files written; raises when a file still
        holds a forgotten value."""
        with self._lock:
            self._forgetting = False
            # The sessions kept under another shape go too: all of them in a forget of everything, else
            # each one whose messages (or session) hold a forgotten value, with its messages.
            before = self._other_ids()
            self._others = () if plan.everything else tuple(self._not_holding(plan))
            if self._counter is not None:  # and each whose history the other store deleted (it held a value)
                self._others = tuple(
                    (shape, still)
                    for shape, sessions in self._others
                    if (still := {a: d for a, d in sessions.items() if self._count(a, d)})
                )
            current = frozenset(str(d["session_id"]) for d in self._current.values())
            dropped = sum(self.state.count(s) for s in before - self._other_ids())
            self._also_done = (
                f"{dropped:,} message(s) kept, not resumed, under other options deleted" if dropped else None
            )
            self._save(Saved(keep_only=current | self._other_ids()))
            if self._failure is not None:
                raise OSError(f"the forget could not be saved: {self._failure}")
            self.state.erase_residue()
            self._resumed = replace(self._resumed, messages=0, facts=0, resumed=False)
            self._counted()
            left = self.holding(plan)
        if left:
            names = ", ".join(str(p.relative_to(self.directory)) for p in left[:5])
            raise RuntimeError(f"{len(left)} file(s) under {self.directory} still hold a forgotten value: {names}")
        return 1

    def _not_holding(self, plan: ForgetPlan) -> Iterator[tuple[str, dict[str, dict[str, Any]]]]:
        """The sessions kept under another shape, without each one that holds a forgotten value."""
        for shape, sessions in self._others:
            left = {agent: d for agent, d in sessions.items() if not self._holds_forgotten(d, plan)}
            if left:
                yield shape, left

    def _holds_forgotten(self, session: dict[str, Any], plan: ForgetPlan) -> bool:
        texts = [json.dumps(session), *map(json.dumps, self.state.messages(str(session["session_id"])))]
        return any(plan.holds(text) or any(plan.holds(s) for s in json_strings(text)) for text in texts)

    @property
    def also_done(self) -> str | None:
        """The messages kept under another shape its last forget deleted, said beside the files it wrote
        (`DoesMore`); None when it deleted none."""
        return self._also_done

    def holding(self, plan: ForgetPlan) -> list[Path]:
        """Every file under the directory that holds a forgotten value, as raw text or JSON-escaped."""
        with self._lock:
            return files_holding(self.directory, plan)

    def _history_texts(self) -> Iterator[str]:
        for session_id in self.state.session_ids():
            yield from (m.text or "" for m in self.read(session_id))
