"""Every file the DuckDB store writes is readable by the user only, while it is open too; a file made
before issue 19 has its vectors converted to floats once, losing no record."""

from __future__ import annotations

import os
import stat
import struct
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any

import duckdb
import pytest
from agent_framework import VectorStoreField, vectorstoremodel
from agent_framework_duckdb import DuckDBStore

from tests.recall.helpers import USER, seat
from workbench.memory import WorkingMemory
from workbench.recall import duckdb_file
from workbench.recall.duckdb_file import DuckDBBackend
from workbench.recall.duckdb_search import ROW_GROUP_ROWS
from workbench.recall.embedders import lexical_embedder
from workbench.recall.records import StoredMessage
from workbench.recall.store import RecallStore, collection_name


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
        await store.erase(WorkingMemory().plan("customer"), USER)  # the rewrite reopens the store
        await seat(store, "support").say("database=PostgreSQL")
        assert "recall.duckdb.wal" in modes(folder)
        assert modes(folder) == {name: 0o600 for name in modes(folder)}
        await store.close()
        assert os.umask(0o022) == 0o022  # closed: the process umask is what it was
    finally:
        os.umask(previous)


@vectorstoremodel
@dataclass
class DoubleMessage(StoredMessage):
    """A record as the product stored it before issue 19: the framework's default vector type (DOUBLE)."""

    vector: Annotated[list[float] | None, VectorStoreField("vector", dimensions=256)] = None


@vectorstoremodel
@dataclass
class SmallDoubleMessage(StoredMessage):
    vector: Annotated[list[float] | None, VectorStoreField("vector", dimensions=4)] = None


LEXICAL = collection_name(lexical_embedder().name, 256)
OTHER = collection_name("other", 4)  # another embedder's collection, large enough for several row groups
OTHER_ROWS = 2 * ROW_GROUP_ROWS + 100


async def old_file(path: Path, texts: list[str], other_vectors: str = "[i / 3, 1, -2.5e-7, 1e-50]") -> None:
    """A file written as the product wrote it before issue 19: through the framework's own DuckDBStore,
    its vectors DOUBLE[n]; the other collection filled in SQL (`other_vectors`, a DOUBLE[4] of i)."""
    vectors = await lexical_embedder().embed(texts)
    rows = [
        DoubleMessage(f"k{n}", text, "user", n, "t", "workbench", "support", "ana", "s1", vector)
        for n, (text, vector) in enumerate(zip(texts, vectors, strict=True))
    ]
    store = DuckDBStore(connection_string=str(path))
    try:
        plain = store.get_collection(DoubleMessage, collection_name=LEXICAL)
        await plain.ensure_collection_exists()
        await plain.upsert(rows, generate_vectors=False)
        await store.get_collection(SmallDoubleMessage, collection_name=OTHER).ensure_collection_exists()
    finally:
        await store.aclose()
    with duckdb.connect(str(path)) as connection:  # another user's records
        connection.execute(
            f"INSERT INTO {OTHER} SELECT 'o' || i, 'other ' || i, 'user', i, 't', 'workbench', 'logs', 'bob', 's2', "
            f"CASE WHEN i = 7 THEN NULL ELSE {other_vectors} END FROM range({OTHER_ROWS}) AS r(i)"
        )
    path.chmod(0o600)


def contents(path: Path) -> dict[str, list[tuple[Any, ...]]]:
    with duckdb.connect(str(path), read_only=True) as connection:
        return {
            table: connection.execute(f"SELECT key, text, vector FROM {table} ORDER BY key").fetchall()
            for table in (LEXICAL, OTHER)
        }


def as_floats(vector: tuple[float, ...] | None) -> tuple[float, ...] | None:
    """The 4-byte float nearest each number (what DuckDB's cast from DOUBLE gives), widened back."""
    return None if vector is None else tuple(struct.unpack("<f", struct.pack("<f", x))[0] for x in vector)


async def test_a_file_of_double_vectors_is_converted_once_when_the_store_opens(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "recall.duckdb"
    texts = ["customer=Contoso; version=12.4", "The export for Contoso fails at midnight.", "database=PostgreSQL"]
    await old_file(path, texts)
    before = contents(path)
    rewrites: list[Path] = []
    rewrite = duckdb_file.rewrite_file

    def counted(rewritten: Path) -> None:
        rewrites.append(rewritten)
        rewrite(rewritten)

    monkeypatch.setattr(duckdb_file, "rewrite_file", counted)
    previous = os.umask(0o022)
    try:
        store = RecallStore(DuckDBBackend(path))
        assert [r.text for r in await store.records(USER)] == texts  # every record, by key
        assert rewrites == [path]
        logs = seat(store, "logs")
        await logs.say("Which customer? Contoso?")
        assert any("Contoso" in r.text for r in logs.recalled[-1])
        assert modes(tmp_path) == {name: 0o600 for name in modes(tmp_path)}
        kept = await store.records(USER)  # the three, and what the logs agent's turn stored
        await store.close()
        store = RecallStore(DuckDBBackend(path))
        assert await store.records(USER) == kept
        await store.close()
    finally:
        os.umask(previous)
    assert rewrites == [path]  # once: the second opening found nothing to convert
    assert [p.name for p in tmp_path.iterdir()] == ["recall.duckdb"]
    assert modes(tmp_path) == {"recall.duckdb": 0o600}

    after = contents(path)
    assert after[OTHER] == [(k, t, as_floats(v)) for k, t, v in before[OTHER]]
    assert [row for row in after[LEXICAL] if row[0].startswith("k")] == [
        (k, t, as_floats(v)) for k, t, v in before[LEXICAL]
    ]
    with duckdb.connect(str(path), read_only=True) as connection:
        types = connection.execute("SELECT table_name, data_type FROM duckdb_columns() WHERE column_name = 'vector'")
        assert sorted(types.fetchall()) == [(LEXICAL, "FLOAT[256]"), (OTHER, "FLOAT[4]")]
        layout = connection.execute(
            "SELECT count(DISTINCT row_group_id), list(DISTINCT compression) FROM pragma_storage_info(?) "
            "WHERE column_name = 'vector' AND segment_type = 'FLOAT'",
            [OTHER],
        ).fetchone()
    assert layout == (3, ["Uncompressed"])  # row groups of the product's size, floats as they are


async def test_a_file_whose_vectors_do_not_fit_in_floats_is_left_as_it_was(tmp_path: Path) -> None:
    path = tmp_path / "recall.duckdb"
    await old_file(path, ["database=PostgreSQL"], other_vectors="[i, 1, 1, CASE WHEN i = 5 THEN 1e39 ELSE 1 END]")
    before = path.read_bytes()
    store = RecallStore(DuckDBBackend(path))
    with pytest.raises(
        RuntimeError, match=r"cannot store as 4-byte floats \(.*1e\+39.*\); the file was left as it was"
    ):
        await store.records(USER)
    await store.close()
    assert path.read_bytes() == before
    assert [p.name for p in tmp_path.iterdir()] == ["recall.duckdb"]


async def test_spilled_data_left_by_a_stopped_process_is_removed_when_the_store_opens(tmp_path: Path) -> None:
    path = tmp_path / "recall.duckdb"
    store = RecallStore(DuckDBBackend(path))
    await seat(store, "support").say("customer=Contoso")
    await store.close()
    spilled = duckdb_file.spill_directory(path)
    spilled.mkdir()
    (spilled / "duckdb_temp_storage-0.tmp").write_text("customer=Contoso")  # as a process killed mid-query leaves it
    reopened = RecallStore(DuckDBBackend(path))
    assert any(r.text == "customer=Contoso" for r in await reopened.records(USER))
    await reopened.close()
    assert not spilled.exists()
