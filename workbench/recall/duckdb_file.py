"""The persistent store: agent-framework-duckdb's `DuckDBStore` in one file in the user's data
directory, and a forget that reaches the disk.

DuckDB keeps a deleted row's bytes in the file after DELETE, CHECKPOINT and VACUUM. After a forget
deleted records, the live tables are copied into a fresh file (ATTACH + COPY FROM DATABASE), which
atomically replaces the old one; no write-ahead log is left beside it. The old file's disk blocks
are released to the file system, which this program cannot overwrite (nor backups or snapshots).

Every file DuckDB writes (the database, its write-ahead log, a rewrite's work file, spilled
temporary files) is created readable by the user only: see `PrivateFiles`."""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import duckdb
from agent_framework import BaseVectorStore

from workbench.files import data_dir
from workbench.recall.duckdb_search import RecallDuckDBStore, threads_for

FILE_NAME = "recall.duckdb"
_REWRITE_SUFFIX = ".rewrite"
_ATTACHED = "erased_copy"


def default_path() -> Path:
    return data_dir() / FILE_NAME


def companion_files(path: Path) -> list[Path]:
    """The files DuckDB may keep beside the database, and a rewrite's work file."""
    return [path.with_name(path.name + suffix) for suffix in (".wal", _REWRITE_SUFFIX, _REWRITE_SUFFIX + ".wal")]


class PrivateFiles:
    """Keeps the process umask at least as strict as 0o077 while any holder needs it.

    DuckDB creates its write-ahead log on the first write after each checkpoint and deletes it at
    the checkpoint (a log made ahead with mode 0600 is deleted and created anew with the default
    mode), on whichever thread commits, and has no setting for its mode or place; its spill files
    are the same. The umask is the one control of the mode such a file is created with. POSIX keeps
    it per process, so while a DuckDB store is open every file this process creates is user-only:
    the product's rule for every file it writes anyway. The umask is only ever tightened, never
    loosened, and restored when the last holder lets go; nothing else in workbench changes it."""

    _lock = threading.Lock()
    _holders = 0
    _saved = 0

    @classmethod
    def acquire(cls) -> None:
        with cls._lock:
            if cls._holders == 0:
                cls._saved = os.umask(0o077)
                os.umask(cls._saved | 0o077)
            cls._holders += 1

    @classmethod
    def release(cls) -> None:
        with cls._lock:
            cls._holders -= 1
            if cls._holders == 0:
                os.umask(cls._saved)

    @classmethod
    @contextmanager
    def held(cls) -> Iterator[None]:
        cls.acquire()
        try:
            yield
        finally:
            cls.release()


class PrivateDuckDBStore(RecallDuckDBStore):
    """The recall DuckDB store, holding `PrivateFiles` from its creation until it is closed."""

    def __init__(self, **options: Any) -> None:
        PrivateFiles.acquire()
        self._private = True
        try:
            super().__init__(**options)
        except BaseException:
            self._release()
            raise

    def _release(self) -> None:
        if self._private:
            self._private = False
            PrivateFiles.release()

    async def aclose(self) -> None:
        try:
            await super().aclose()
        finally:
            self._release()


class DuckDBBackend:
    """One DuckDB database file holding every recall collection."""

    kind = "DuckDB"
    vector_index = "default"  # exact search: agent-framework-duckdb has no vector index
    erases: str | None = "rewrote its file"

    def __init__(self, path: Path | None = None) -> None:
        self.path = (path or default_path()).expanduser().resolve()
        self.location: str | None = str(self.path)

    def open(self) -> BaseVectorStore:
        """The store on the file; a new file is created private to the user (it holds their words)."""
        self.path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        for leftover in companion_files(self.path)[1:]:
            leftover.unlink(missing_ok=True)  # a rewrite interrupted before its atomic rename
        if not self.path.exists():
            with PrivateFiles.held():
                duckdb.connect(str(self.path)).close()
            self.path.chmod(0o600)
        return PrivateDuckDBStore(connection_string=str(self.path))

    async def erase_deleted(self, store: BaseVectorStore, collections: list[str]) -> BaseVectorStore:
        """Close the store, copy its live tables into a fresh file that replaces the old one, reopen."""
        await store.__aexit__(None, None, None)
        rewrite_file(self.path)
        return self.open()

    def exists(self) -> bool:
        return self.path.exists()

    def size_on_disk(self) -> int | None:
        return sum(p.stat().st_size for p in (self.path, *companion_files(self.path)) if p.exists())


def rewrite_file(path: Path) -> None:
    """Replace the database file at `path` with a copy of its live data only (no deleted rows, no WAL)."""
    fresh = path.with_name(path.name + _REWRITE_SUFFIX)
    fresh.unlink(missing_ok=True)
    with PrivateFiles.held():
        _copy_live_data(path, fresh)
    fresh.chmod(0o600)
    os.replace(fresh, path)
    path.with_name(path.name + ".wal").unlink(missing_ok=True)


def _copy_live_data(path: Path, fresh: Path) -> None:
    connection = duckdb.connect(str(path))
    try:
        (database, rows) = connection.execute(
            "SELECT current_database(), coalesce(max(estimated_size), 0) FROM duckdb_tables() "
            "WHERE database_name = current_database()"
        ).fetchone() or ("", 0)
        connection.execute(f"SET threads = {threads_for(int(rows))}")
        # ATTACH takes no parameters: the path is an escaped SQL string literal.
        connection.execute(f"ATTACH '{_literal(fresh)}' AS {_ATTACHED}")
        connection.execute(f'COPY FROM DATABASE "{database.replace(chr(34), chr(34) * 2)}" TO {_ATTACHED}')
        connection.execute("DETACH " + _ATTACHED)
    finally:
        connection.close()


def _literal(path: Path) -> str:
    return str(path).replace("'", "''")
