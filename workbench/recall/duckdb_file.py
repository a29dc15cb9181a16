"""The persistent store: agent-framework-duckdb's `DuckDBStore` in one file in the user's data
directory, and a forget that reaches the disk.

DuckDB keeps a deleted row's bytes in the file after DELETE, CHECKPOINT and VACUUM. After a forget
deleted records, the live tables are copied into a fresh file (ATTACH + COPY FROM DATABASE), which
atomically replaces the old one; no write-ahead log is left beside it. The old file's disk blocks
are released to the file system, which this program cannot overwrite (nor backups or snapshots)."""

from __future__ import annotations

import os
from pathlib import Path

import duckdb
from agent_framework import BaseVectorStore
from agent_framework_duckdb import DuckDBStore

from workbench.files import data_dir

FILE_NAME = "recall.duckdb"
_REWRITE_SUFFIX = ".rewrite"
_ATTACHED = "erased_copy"


def default_path() -> Path:
    return data_dir() / FILE_NAME


def companion_files(path: Path) -> list[Path]:
    """The files DuckDB may keep beside the database, and a rewrite's work file."""
    return [path.with_name(path.name + suffix) for suffix in (".wal", _REWRITE_SUFFIX, _REWRITE_SUFFIX + ".wal")]


class DuckDBBackend:
    """One DuckDB database file holding every recall collection."""

    kind = "DuckDB"

    def __init__(self, path: Path | None = None) -> None:
        self.path = (path or default_path()).expanduser().resolve()
        self.location: str | None = str(self.path)

    def open(self) -> BaseVectorStore:
        """The store on the file; a new file is created private to the user (it holds their words)."""
        self.path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        for leftover in companion_files(self.path)[1:]:
            leftover.unlink(missing_ok=True)  # a rewrite interrupted before its atomic rename
        if not self.path.exists():
            duckdb.connect(str(self.path)).close()
            self.path.chmod(0o600)
        return DuckDBStore(connection_string=str(self.path))

    async def erase_deleted(self, store: BaseVectorStore) -> BaseVectorStore:
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
    connection = duckdb.connect(str(path))
    try:
        (database,) = connection.execute("SELECT current_database()").fetchone() or ("",)
        # ATTACH takes no parameters: the path is an escaped SQL string literal.
        connection.execute(f"ATTACH '{_literal(fresh)}' AS {_ATTACHED}")
        connection.execute(f'COPY FROM DATABASE "{database.replace(chr(34), chr(34) * 2)}" TO {_ATTACHED}')
        connection.execute("DETACH " + _ATTACHED)
    finally:
        connection.close()
    fresh.chmod(0o600)
    os.replace(fresh, path)
    path.with_name(path.name + ".wal").unlink(missing_ok=True)


def _literal(path: Path) -> str:
    return str(path).replace("'", "''")
