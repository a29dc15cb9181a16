"""Every file the DuckDB store writes is readable by the user only, while it is open too."""

from __future__ import annotations

import os
import stat
from pathlib import Path

from tests.recall.helpers import USER, seat
from workbench.memory import WorkingMemory
from workbench.recall.duckdb_file import DuckDBBackend
from workbench.recall.store import RecallStore


def modes(folder: Path) -> dict[str, int]:
    return {p.name: stat.S_IMODE(p.stat().st_mode) for p in folder.iterdir()}


async def test_the_database_and_its_write_ahead_log_are_user_only_while_the_store_is_open(tmp_path: Path) -> None:
    folder = tmp_path / "shared"
    folder.mkdir()
    folder.chmod(0o777)  # a directory anyone may read: the files themselves must keep others out
    previous = os.umask(0o022)
    try:
        store = RecallStore(DuckDBBackend(folder / "recall.duckdb"))
        await seat(store, "support").say("customer=Contoso")
        assert "recall.duckdb.wal" in modes(folder)  # the store is open and has written its log
        assert modes(folder) == {name: 0o600 for name in modes(folder)}
        await store.forget(WorkingMemory().plan("customer"), USER)  # the rewrite reopens the store
        await seat(store, "support").say("database=PostgreSQL")
        assert "recall.duckdb.wal" in modes(folder)
        assert modes(folder) == {name: 0o600 for name in modes(folder)}
        await store.close()
        assert os.umask(0o022) == 0o022  # closed: the process umask is what it was
    finally:
        os.umask(previous)
