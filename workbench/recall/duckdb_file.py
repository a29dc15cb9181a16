"""The persistent store: agent-framework-duckdb's `DuckDBStore` in one file in the user's data
directory, and a forget that reaches the disk.

DuckDB keeps a deleted row's bytes in the file after DELETE, CHECKPOINT and VACUUM. After a forget
deleted records, the live tables are copied into a fresh file (ATTACH + COPY FROM DATABASE), which
atomically replaces the old one; no write-ahead log is left beside it. The old file's disk blocks
are released to the file system, which this program cannot overwrite (nor backups or snapshots).

The store's connection is the product's own (`connect`): the file is attached with small row groups,
so that a search and a rewrite share a table between cores, and vectors are written uncompressed.
A file whose vectors were stored as doubles (before issue 19) is rewritten once when the store opens,
its vectors converted to the records' 4-byte floats.

Every file DuckDB writes (the database, its write-ahead log, a rewrite's work file, spilled
temporary files) is created readable by the user only: see `PrivateFiles`."""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path
from typing import TYPE_CHECKING

from workbench.files import PRIVATE, PrivateFiles, private_dir
from workbench.recall.paths import default_path

if TYPE_CHECKING:
    import duckdb
    from agent_framework import BaseVectorStore

# DuckDB, the framework and the search are imported when a file is opened, not with this module: every
# start builds the recall store (a forget reaches a file an earlier run left) and most open none.

DATABASE = "recall"  # the file's name inside the product's connection
_REWRITE_SUFFIX = ".rewrite"
_ATTACHED = "erased_copy"
_VECTOR = "vector"  # the records' vector column (records.py)
# DuckDB 1.5 stores FLOAT columns with ALP, ALPRD or RLE when they make them smaller, and decoding them
# costs a search more than the bytes save: one thread's ranking of 100,000 vectors of 256 floats took
# 99 ms of CPU with ALP (32 MiB), 138 ms with RLE and 59 ms uncompressed (98 MiB). The setting holds
# for every column the connection writes: none but the vectors is a FLOAT, and the integers that RLE
# would otherwise suit are bit-packed as well.
_UNCOMPRESSED_FLOATS = "alp,alprd,rle"
_HEADERS = 3 * 4096  # a DuckDB file's main header and its two database headers, before the first block


def spill_directory(path: Path) -> Path:
    """Where DuckDB spills what does not fit in memory while a query runs (deleted when it ends)."""
    return path.with_name(path.name + ".tmp")


def companion_files(path: Path) -> list[Path]:
    """The files DuckDB may keep beside the database, and a rewrite's work file."""
    return [path.with_name(path.name + suffix) for suffix in (".wal", _REWRITE_SUFFIX, _REWRITE_SUFFIX + ".wal")]


def connect(path: Path) -> duckdb.DuckDBPyConnection:
    """The product's connection to the database file at `path` (created if missing): attached with
    row groups of `ROW_GROUP_ROWS` rows (an attach option DuckDB does not keep in the file) and made
    the current database, FLOAT columns written uncompressed, spilled data in DuckDB's usual place
    beside the file. Call it with `PrivateFiles` held: attaching may replay and remove a log."""
    import duckdb

    from workbench.recall.duckdb_search import ROW_GROUP_ROWS

    connection = duckdb.connect(config={"temp_directory": str(spill_directory(path))})
    try:
        connection.execute(f"SET disabled_compression_methods = '{_UNCOMPRESSED_FLOATS}'")
        # ATTACH takes no parameters: the path is an escaped SQL string literal.
        connection.execute(f"ATTACH '{_literal(path)}' AS {DATABASE} (ROW_GROUP_SIZE {ROW_GROUP_ROWS})")
        connection.execute(f"USE {DATABASE}")
    except BaseException:
        connection.close()
        raise
    return connection


class DuckDBBackend:
    """One DuckDB database file holding every recall collection."""

    kind = "DuckDB"
    vector_index = "default"  # exact search: agent-framework-duckdb has no vector index
    erases: str | None = "rewrote its file"

    def __init__(self, path: Path | None = None) -> None:
        self.path = (path or default_path()).expanduser().resolve()
        self.location: str | None = str(self.path)

    def open(self) -> BaseVectorStore:
        """The store on the file; a new file is created private to the user (it holds their words). A
        file whose vectors are not of the records' type is rewritten with them converted, first; one
        shorter than the blocks its header counts (truncated) is refused and left as it is."""
        import duckdb

        from workbench.recall.duckdb_private import PrivateDuckDBStore

        private_dir(self.path.parent)
        for leftover in companion_files(self.path)[1:]:
            leftover.unlink(missing_ok=True)  # a rewrite interrupted before its atomic rename
        with PrivateFiles.held():
            created = not self.path.exists()
            connection = connect(self.path)
            if created:
                self.path.chmod(PRIVATE)
            else:
                _check_whole(connection, self.path)
            if not created and stale_vectors(connection, DATABASE):
                connection.close()
                try:
                    rewrite_file(self.path)
                except duckdb.ConversionException as error:
                    reason = str(error).splitlines()[0]
                    raise RuntimeError(
                        f"The recall file {self.path} holds vectors this version cannot store as 4-byte floats "
                        f"({reason}); the file was left as it was."
                    ) from error
                connection = connect(self.path)
            # Spilled data a process left when it stopped mid-query may hold the user's words; the
            # file's lock is held now, so no one else is spilling there.
            shutil.rmtree(spill_directory(self.path), ignore_errors=True)
            try:
                return PrivateDuckDBStore(connection)
            except BaseException:
                connection.close()
                raise

    async def erase_deleted(self, store: BaseVectorStore, collections: list[str]) -> BaseVectorStore:
        """Close the store, copy its live tables into a fresh file that replaces the old one, reopen."""
        await store.__aexit__(None, None, None)
        rewrite_file(self.path)
        return self.open()

    def exists(self) -> bool:
        return self.path.exists()

    async def failure(self, error: Exception) -> str | None:
        return None  # a file in this process: its errors (a full disk) are raised as they are

    def size_on_disk(self) -> int | None:
        return sum(p.stat().st_size for p in (self.path, *companion_files(self.path)) if p.exists())


def _check_whole(connection: duckdb.DuckDBPyConnection, path: Path) -> None:
    """RuntimeError (the connection closed) when the file is shorter than the blocks its header counts:
    DuckDB opens a truncated file and fails only when a query reaches a missing block."""
    row = connection.execute(
        "SELECT block_size, total_blocks FROM pragma_database_size() WHERE database_name = ?", [DATABASE]
    ).fetchone()
    need = _HEADERS + int(row[0]) * int(row[1]) if row else 0
    if (size := path.stat().st_size) < need:
        connection.close()
        raise RuntimeError(
            f"The recall file {path} is truncated: {size:,} bytes, where its blocks take {need:,}; "
            "the file was left as it was"
        )


def stale_vectors(connection: duckdb.DuckDBPyConnection, database: str) -> dict[str, str]:
    """Each table of `database` whose vector column is not of the type the records declare for its
    size (`DOUBLE[n]` in files made before issue 19), with the type it should have (`FLOAT[n]`)."""
    # The framework's column types, so a converted column is what it would create.
    from agent_framework_duckdb._vector_store import _column_type

    from workbench.recall.records import vector_field

    columns = connection.execute(
        "SELECT table_name, data_type FROM duckdb_columns() WHERE database_name = ? AND column_name = ?",
        [database, _VECTOR],
    ).fetchall()
    stale = {}
    for table, stored in columns:
        size = re.fullmatch(r"[A-Z]+\[(\d+)\]", stored)
        if size and stored != (wanted := _column_type(vector_field(int(size[1])))):
            stale[table] = wanted
    return stale


def rewrite_file(path: Path) -> None:
    """Replace the database file at `path` with a copy of its live data only (no deleted rows, no WAL),
    its vectors of the records' type."""
    fresh = path.with_name(path.name + _REWRITE_SUFFIX)
    fresh.unlink(missing_ok=True)
    try:
        with PrivateFiles.held():
            _copy_live_data(path, fresh)
    except BaseException:
        for work in companion_files(path)[1:]:
            work.unlink(missing_ok=True)  # the unfinished copy; the file itself is untouched
        raise
    fresh.chmod(PRIVATE)
    os.replace(fresh, path)
    path.with_name(path.name + ".wal").unlink(missing_ok=True)


def _copy_live_data(path: Path, fresh: Path) -> None:
    """The tables' definitions first, each stale vector column converted while its table is empty,
    then the rows (cast to the new type as an insert casts them), on one thread per row group."""
    from workbench.recall.duckdb_search import ROW_GROUP_ROWS, quote, threads_for

    connection = connect(path)
    try:
        (rows,) = connection.execute(
            "SELECT coalesce(max(estimated_size), 0) FROM duckdb_tables() WHERE database_name = ?", [DATABASE]
        ).fetchone() or (0,)
        connection.execute(f"SET threads = {threads_for(int(rows))}")
        connection.execute(f"ATTACH '{_literal(fresh)}' AS {_ATTACHED} (ROW_GROUP_SIZE {ROW_GROUP_ROWS})")
        connection.execute(f"COPY FROM DATABASE {DATABASE} TO {_ATTACHED} (SCHEMA)")
        for table, wanted in stale_vectors(connection, _ATTACHED).items():
            name = f"{_ATTACHED}.{quote(table)}"
            connection.execute(f"ALTER TABLE {name} ALTER COLUMN {quote(_VECTOR)} TYPE {wanted}")
        connection.execute(f"COPY FROM DATABASE {DATABASE} TO {_ATTACHED} (DATA)")
        connection.execute("DETACH " + _ATTACHED)
    finally:
        connection.close()


def _literal(path: Path) -> str:
    return str(path).replace("'", "''")
