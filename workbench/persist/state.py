"""The one owner of the persisted state's file: one SQLite database holding the facts with their
provenance, the ledger and the counters, each agent's session, and every message of the agents'
current sessions, and of the sessions saved under another shape (mode, recall), kept, not resumed.

One file, so that what belongs together is written together: a turn's messages, the facts and the
ledger it left, and the sessions go to disk in one transaction, and after a crash at any instant the
file holds the turn entirely or not at all (SQLite's write-ahead log, `synchronous=FULL`: a commit
is on disk when it returns). `secure_delete` overwrites deleted rows with zeros, and after a forget
the write-ahead log is checkpointed into the database and truncated (`erase_residue`), so no byte of
the file or its log keeps a value that was deleted. Text is stored as SQLite stores it (UTF-8), and
each row's JSON as pydantic writes it: a raw scan of the files finds a value as typed or as JSON
escapes it.

Whenever no workbench runs, `state.sqlite` alone holds everything: `close` writes the log into it and
truncates the log (SQLite's own close does the same; a process that ends without closing, killed, leaves
the log, which the next start reads). WAL rather than a rollback journal keeps what crash safety was
built on: a commit is one append to the log, on disk when it returns, and a folder made read-only while
the app runs is still written through the log SQLite holds open (a rollback journal is a new file in
the folder at every commit).

A new file is created whole (its schema committed in a work file, then renamed), so a `state.sqlite`
without the tables is never the workbench's own: it is refused, log or no log, as a copy made without
its log or a file cut short. A file this version cannot read (not a database, damaged, another app's,
a newer format, a row that does not parse, memory that breaks the contract) is refused with its name
and why, checked through a read-only connection before anything is written to it."""

from __future__ import annotations

import json
import sqlite3
import threading
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from workbench.files import WORK_SUFFIX, private_file, put_in_place
from workbench.memory.rules import stored_problem
from workbench.memory.saved import SavedMemory
from workbench.persist.format import MemoryFile, SavedFileError, SessionFile, SessionsFile

STATE_FILE = "state.sqlite"
FORMAT = 1
LOG_SUFFIX = "-wal"  # SQLite's write-ahead log beside the database
# The meta rows of sessions saved under another shape (mode, recall) than the current one, kept, not resumed,
# with their messages: "kept:1", "kept:2", ..., oldest first, each a `SessionsFile` (its shape and sessions).
_KEPT = "kept:"
_SCHEMA = """
CREATE TABLE meta (name TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE memory (id INTEGER PRIMARY KEY CHECK (id = 1), saved TEXT NOT NULL);
CREATE TABLE sessions (agent TEXT PRIMARY KEY, session TEXT NOT NULL);
CREATE TABLE messages (
    session_id TEXT NOT NULL, seq INTEGER NOT NULL, message TEXT NOT NULL, PRIMARY KEY (session_id, seq)
);
"""
TABLES = frozenset({"meta", "memory", "sessions", "messages"})


@dataclass(frozen=True)
class Saved:
    """What one transaction writes: any of memory, the sessions (with their shape), the sessions kept
    under other shapes (`kept`: each its shape and sessions; they replace those saved before), sessions'
    new messages (by session id), which sessions' messages are kept (the others' are deleted), and whether
    this is the move of an earlier version's files (`legacy.py`)."""

    memory: SavedMemory | None = None
    shape: str | None = None
    sessions: Mapping[str, dict[str, Any]] | None = None
    kept: Sequence[tuple[str, Mapping[str, dict[str, Any]]]] | None = None
    messages: Mapping[str, Sequence[dict[str, Any]]] = field(default_factory=dict)
    keep_only: frozenset[str] | None = None
    moved: bool = False


class StateFile:
    """The database at `path`, opened (created user-only if missing) and checked. Thread-safe: every
    read and write takes one lock, and each `save` is one transaction. `flushed=False`: a commit is not
    flushed to the disk (SQLite's `synchronous=OFF`), for a file nothing reads after a crash (the drift
    lab's, deleted when the lab ends): what is read back while the machine runs is the same."""

    def __init__(self, path: Path, *, flushed: bool = True) -> None:
        self.path = path
        self._flushed = flushed
        self._lock = threading.RLock()
        self._marked = False  # marked open by this process (`mark_open`)
        if not path.exists():
            _create(path)
        else:
            _check(path)  # the workbench's, whole: known before SQLite writes a byte to it
        try:
            self._db = sqlite3.connect(path, check_same_thread=False, isolation_level=None)
        except sqlite3.Error as exc:
            raise _refused(path, exc) from None
        try:
            self._open()
        except BaseException:
            self._db.close()
            raise

    def _open(self) -> None:
        try:
            mode = self._db.execute("PRAGMA journal_mode=WAL").fetchone()
            if mode is None or str(mode[0]).lower() != "wal":
                raise SavedFileError(f"{self.path}: SQLite could not use its write-ahead log here ({mode})")
            self._db.execute(f"PRAGMA synchronous={'FULL' if self._flushed else 'OFF'}")
            self._db.execute("PRAGMA secure_delete=ON")
        except sqlite3.Error as exc:
            raise _refused(self.path, exc) from None

    def mark_open(self) -> None:
        """Once everything read back was found good (the caller's checks too, so a file refused is left
        as it is): record in the database itself, written through, that a workbench has it open. While one
        does the file alone may lack what its log holds, so a copy of it alone, or the file after its log
        was lost, is refused (`_check`); `close` marks it closed again. Best effort: on a full disk the
        mark stays as it was."""
        try:
            with self._transaction():
                self._db.execute("INSERT OR REPLACE INTO meta VALUES ('open', '1')")
            self._db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        except sqlite3.Error:
            return
        self._marked = True

    def close(self) -> bool:
        """Write the log into the database, truncate it, and close: `state.sqlite` alone then holds
        everything (a copy of it resumes all of it). False when the log could not be written into it
        (a full disk): the log keeps what the database lacks, and the next start reads both.

        The log is written in first, so that the mark of a closed file has the room the log took. A file
        that still could not be marked closed (the disk full to the last byte) is left with a log beside
        it, empty when SQLite wrote the log into the file as it closed, as a kill leaves one: the next
        start opens it. Without it, a quit without saving on a full disk left a file marked open and no
        log, which the next start refused as a copy taken while a workbench ran, with what it had saved."""
        with self._lock:
            open_marked = self._marked
            try:
                self._db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
                if self._marked:
                    with self._transaction():
                        self._db.execute("INSERT OR REPLACE INTO meta VALUES ('open', '0')")
                    open_marked = False
                busy, _, _ = self._db.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
            except sqlite3.Error:
                busy = 1
            self._db.close()
            self._marked = False  # closed: a second close has nothing to mark
            if open_marked:
                private_file(self.path.with_name(self.path.name + LOG_SUFFIX))
        return not busy

    @contextmanager
    def _transaction(self) -> Iterator[None]:
        with self._lock:
            self._db.execute("BEGIN IMMEDIATE")
            try:
                yield
            except BaseException:
                if self._db.in_transaction:  # SQLite ended it itself when its COMMIT failed (a full disk)
                    self._db.execute("ROLLBACK")
                raise
            self._db.execute("COMMIT")

    # -- reading ---------------------------------------------------------------------------------

    def memory(self) -> SavedMemory | None:
        """Memory as last saved, checked by the rules that admitted it; None when none was saved."""
        row = self._one("SELECT saved FROM memory WHERE id = 1")
        if row is None:
            return None
        try:
            saved = MemoryFile.model_validate_json(row).memory
        except ValidationError as exc:
            raise SavedFileError(f"{self.path}: the saved memory does not parse ({_first(exc)})") from None
        if problem := stored_problem(saved.facts, saved.contract):
            raise SavedFileError(f"{self.path}: the saved memory breaks the contract: {problem}")
        return saved

    def sessions(self) -> tuple[str, dict[str, dict[str, Any]]]:
        """The shape the sessions were saved under, and each agent's session dict."""
        shape = self._one("SELECT value FROM meta WHERE name = 'shape'") or ""
        with self._lock:
            rows = self._db.execute("SELECT agent, session FROM sessions").fetchall()
        sessions: dict[str, dict[str, Any]] = {}
        for agent, text in rows:
            try:
                sessions[agent] = SessionFile.model_validate_json(text).model_dump()
            except ValidationError as exc:
                problem = f"the {agent} agent's saved session does not parse ({_first(exc)})"
                raise SavedFileError(f"{self.path}: {problem}") from None
        return shape, sessions

    def kept(self) -> list[tuple[str, dict[str, dict[str, Any]]]]:
        """The sessions saved under another shape than the current sessions', kept, not resumed (their
        messages are in the file too), oldest first: each its shape and each agent's session dict."""
        with self._lock:
            rows = self._db.execute(
                f"SELECT name, value FROM meta WHERE substr(name, 1, {len(_KEPT)}) = ?", (_KEPT,)
            ).fetchall()
        kept = []
        for name, text in sorted(rows, key=lambda row: _kept_number(str(row[0]))):
            try:
                saved = SessionsFile.model_validate_json(text)
            except ValidationError as exc:
                problem = f"the sessions kept under another shape ({name}) do not parse ({_first(exc)})"
                raise SavedFileError(f"{self.path}: {problem}") from None
            kept.append((saved.shape, {agent: s.model_dump() for agent, s in saved.sessions.items()}))
        return kept

    def messages(self, session_id: str) -> list[dict[str, Any]]:
        """A session's messages as `Message.to_dict()` wrote them, oldest first."""
        with self._lock:
            rows = self._db.execute(
                "SELECT message FROM messages WHERE session_id = ? ORDER BY seq", (session_id,)
            ).fetchall()
        try:
            return [json.loads(text) for (text,) in rows]
        except ValueError as exc:
            raise SavedFileError(f"{self.path}: a message of session {session_id} does not parse ({exc})") from None

    def count(self, session_id: str) -> int:
        with self._lock:
            (n,) = self._db.execute("SELECT count(*) FROM messages WHERE session_id = ?", (session_id,)).fetchone()
        return int(n)

    def session_ids(self) -> list[str]:
        """Every session whose messages the file holds."""
        with self._lock:
            return [s for (s,) in self._db.execute("SELECT DISTINCT session_id FROM messages ORDER BY session_id")]

    def rows(self) -> list[str]:
        """Every row's text, as stored: memory, then each agent's session, then the sessions kept under
        another shape, then the messages as saved."""
        with self._lock:
            memory = self._db.execute("SELECT saved FROM memory").fetchall()
            sessions = self._db.execute("SELECT session FROM sessions ORDER BY agent").fetchall()
            kept = self._db.execute(
                f"SELECT value FROM meta WHERE substr(name, 1, {len(_KEPT)}) = ? ORDER BY name", (_KEPT,)
            ).fetchall()
            messages = self._db.execute("SELECT message FROM messages ORDER BY rowid").fetchall()
        return [text for (text,) in (*memory, *sessions, *kept, *messages)]

    def moved(self) -> bool:
        """Whether an earlier version's files were moved into this database (`legacy.py`)."""
        return self._one("SELECT value FROM meta WHERE name = 'moved'") == "1"

    def _one(self, sql: str) -> str | None:
        with self._lock:
            row = self._db.execute(sql).fetchone()
        return None if row is None else str(row[0])

    # -- writing ---------------------------------------------------------------------------------

    def save(self, saved: Saved) -> None:
        """Everything `saved` holds, as one transaction: on disk entirely when this returns, or not at
        all (the error is raised: sqlite3.Error, or OSError). Messages it deletes leave no earlier copy
        in the log either (`erase_residue`)."""
        deleted = 0
        with self._transaction():
            if saved.memory is not None:
                text = MemoryFile(memory=saved.memory).model_dump_json()
                self._db.execute("INSERT OR REPLACE INTO memory VALUES (1, ?)", (text,))
            if saved.sessions is not None:
                self._db.execute("DELETE FROM sessions")
                for agent, session in saved.sessions.items():
                    text = SessionFile.model_validate(session).model_dump_json()
                    self._db.execute("INSERT INTO sessions VALUES (?, ?)", (agent, text))
                self._db.execute("INSERT OR REPLACE INTO meta VALUES ('shape', ?)", (saved.shape or "",))
            if saved.kept is not None:
                self._db.execute(f"DELETE FROM meta WHERE substr(name, 1, {len(_KEPT)}) = ?", (_KEPT,))
                for number, (shape, sessions) in enumerate(saved.kept, 1):
                    text = SessionsFile.model_validate({"shape": shape, "sessions": sessions}).model_dump_json()
                    self._db.execute("INSERT INTO meta VALUES (?, ?)", (f"{_KEPT}{number}", text))
            for session_id, messages in saved.messages.items():
                (last,) = self._db.execute(
                    "SELECT coalesce(max(seq), 0) FROM messages WHERE session_id = ?", (session_id,)
                ).fetchone()
                rows = [(session_id, last + i, json.dumps(m)) for i, m in enumerate(messages, 1)]
                self._db.executemany("INSERT INTO messages VALUES (?, ?, ?)", rows)
            if saved.keep_only is not None:
                kept = sorted(saved.keep_only)
                marks = ",".join("?" * len(kept))
                deleted = self._db.execute(f"DELETE FROM messages WHERE session_id NOT IN ({marks})", kept).rowcount
            if saved.moved:
                self._db.execute("INSERT OR REPLACE INTO meta VALUES ('moved', '1')")
        if deleted:
            self.erase_residue()

    def erase_residue(self) -> None:
        """Write the log into the database and truncate it, so no earlier version of a deleted row is
        left in either file (deleted rows themselves were overwritten: `secure_delete`)."""
        with self._lock:
            busy, _, _ = self._db.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
        if busy:
            raise sqlite3.OperationalError(f"{self.path}: the write-ahead log could not be checkpointed")


def _create(path: Path) -> None:
    """A new state file at `path`, whole before it has its name: the schema and its format written into
    a private work file beside it, which is then flushed and renamed. A start killed meanwhile leaves
    only the work file, which the next start removes; a `state.sqlite` is never a shell without tables."""
    log = path.with_name(path.name + LOG_SUFFIX)
    if log.exists() and log.stat().st_size > 0:
        raise SavedFileError(
            f"{log} is the write-ahead log of a state file that is not beside it ({path.name} is missing): "
            f"put {path.name} back beside it, or move the log away to start afresh"
        )
    work = path.with_name(path.name + WORK_SUFFIX)
    for left in path.parent.glob(f"{work.name}*"):  # a creation killed before its rename, and its journal
        left.unlink()
    private_file(work)  # user-only from its first byte; SQLite keeps the mode for its companions
    db = sqlite3.connect(work, isolation_level=None)
    try:
        db.execute("BEGIN IMMEDIATE")
        for statement in _SCHEMA.split(";"):
            if statement.strip():
                db.execute(statement)
        db.execute("INSERT INTO meta VALUES ('format', ?)", (str(FORMAT),))
        db.execute("COMMIT")
        db.execute("PRAGMA journal_mode=WAL")  # recorded in the file's header
    finally:
        db.close()
    put_in_place(work, path)


def _check(path: Path) -> None:
    """Refuse, in one line, a file at `path` that is not a whole state file of this format, before
    anything is written to it: read through a read-only connection (one that does not even look for a
    log when none is beside it). A file with none of the tables is refused too, log or no log: a copy
    of the file made without its write-ahead log, or a file cut short, would otherwise start empty."""
    log = path.with_name(path.name + LOG_SUFFIX)
    has_log = log.exists() and log.stat().st_size > 0
    uri = f"{path.resolve().as_uri()}?mode=ro{'' if has_log else '&immutable=1'}"
    try:
        db = sqlite3.connect(uri, uri=True)
        try:
            try:
                (check,) = db.execute("PRAGMA quick_check").fetchone()
            except sqlite3.DatabaseError as exc:  # damage the check cannot read past: "malformed"
                check = str(exc)
            if check != "ok":
                raise SavedFileError(f"{path} is damaged ({_first_problem(check)}); move it away to start afresh")
            tables = {name for (name,) in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
            found = db.execute("SELECT value FROM meta WHERE name = 'format'").fetchone() if "meta" in tables else None
            running = "meta" in tables and db.execute("SELECT value FROM meta WHERE name = 'open'").fetchone() == ("1",)
        finally:
            db.close()
    except sqlite3.Error as exc:
        raise _refused(path, exc) from None
    if not tables:
        why = (
            f"the log beside it, {log.name}, is not its own or is damaged"
            if has_log
            else f"its log {log.name} is not beside it: copied alone while a workbench ran, or cut short"
        )
        raise SavedFileError(
            f"{path} holds no saved state (no table; {why}); move it away to start afresh, or put its own log back"
        )
    if not TABLES <= tables or found is None:
        theirs = ", ".join(sorted(tables)[:5])
        raise SavedFileError(
            f"{path} is not a workbench state file (its tables: {theirs}); move it away to start afresh"
        )
    if found[0] != str(FORMAT):
        raise SavedFileError(
            f"{path} is not a saved workbench state this version can read "
            f"(format {found[0]}, this version reads {FORMAT}); open it with the version that wrote it, or move "
            "it away to start afresh"
        )
    if running and not log.exists():  # a kill leaves the log beside it, even empty; a quit marks it closed
        raise SavedFileError(
            f"{path} was copied while a workbench had it open, or its log {log.name} was lost: the latest turns "
            f"may be missing from it; put its log back beside it, or copy it again after the workbench quits"
        )


def _kept_number(name: str) -> int:
    number = name.removeprefix(_KEPT)
    return int(number) if number.isdigit() else 0


def _first_problem(check: str) -> str:
    """SQLite's quick_check report in one line: its first problem and how many more (the report opens
    with a "*** in database main ***" line; a line of it alone was all the refusal said)."""
    problems = [line.strip() for line in check.splitlines() if line.strip() and not line.startswith("***")]
    more = f", and {len(problems) - 1:,} other problem(s)" if len(problems) > 1 else ""
    return f"{problems[0]}{more}" if problems else check.strip()


def _refused(path: Path, exc: sqlite3.Error) -> SavedFileError:
    return SavedFileError(f"{path} cannot be read as a saved workbench state ({exc}); move it away to start afresh")


def _first(exc: ValidationError) -> str:
    error = exc.errors()[0]
    return f"{'.'.join(map(str, error['loc'])) or 'row'}: {error['msg']}"
