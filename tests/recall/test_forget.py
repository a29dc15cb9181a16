"""Forget reaches the vector store, and on DuckDB and PostgreSQL the disk: the raw files are scanned
for the bytes."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import psycopg
import pytest

from tests.recall.helpers import USER, seat
from tests.support.postgres_server import PostgresServer
from workbench.memory import WorkingMemory
from workbench.memory.forget import Forgetting
from workbench.recall.duckdb_file import DuckDBBackend, companion_files
from workbench.recall.embedders import lexical_embedder
from workbench.recall.postgres_store import PostgresBackend, vectors_table
from workbench.recall.records import RecallScope
from workbench.recall.setup import RecallSetup
from workbench.recall.store import RecallStore


async def test_forgetting_a_key_purges_every_record_holding_its_values(store: RecallStore) -> None:
    support = seat(store, "support")
    await support.say("customer=Contoso; version=12.4")
    await support.say("The export for Contoso fails at midnight.")
    await support.say("database=PostgreSQL")
    holding = [r for r in await store.records(USER) if "Contoso" in r.text]
    assert len(holding) >= 3  # two user messages, and the replies that echoed them
    purge = await store.erase(WorkingMemory().plan("customer"), USER)
    texts = [r.text for r in await store.records(USER)]
    assert purge.records == len(holding)
    assert texts and not any("Contoso" in t for t in texts)
    logs = seat(store, "logs")
    await logs.say("Which customer? Contoso?")
    assert logs.recalled[-1] and not any("Contoso" in r.text for r in logs.recalled[-1])
    assert any("PostgreSQL" in t for t in texts)


async def test_a_forget_deletes_records_holding_a_value_whole_never_one_inside_another_number(
    store: RecallStore,
) -> None:
    support = seat(store, "support")
    await support.say("module=Billing; version=2")
    await support.say("We run SQL Server 2022 in production.")
    await support.say("priority=P9; module=A; database=B; version=C; environment=D; customer=E")  # a rejected batch
    await store.erase(WorkingMemory().plan("version"), USER)
    texts = [r.text for r in await store.records(USER)]
    assert any("SQL Server 2022" in t for t in texts)
    assert not any("version=2" in t or "version=C" in t for t in texts)


async def test_the_one_forget_reads_the_declarations_once_unless_the_store_changed_in_between(
    store: RecallStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The one forget asks the recall store what its messages declared, then applies the plan: the
    texts that declare something are read once for both, then the store's own query finds the texts
    that may hold the values. A message stored in between is read too: the forget reads again."""
    support = seat(store, "support")
    await support.say("customer=Contoso; version=12.4")
    await support.say("database=PostgreSQL")
    kind = type((await store._existing())[0])
    scans: list[object] = []
    scan = kind.scan

    async def counted(self, filter, fields=(), needles=None):
        scans.append(needles)
        return await scan(self, filter, fields, needles)

    monkeypatch.setattr(kind, "scan", counted)
    setup = RecallSetup(store, lexical_embedder(), user_id="ana", used=True)
    forgetting = Forgetting(WorkingMemory())
    forgetting.register(setup)
    report = await forgetting.forget("customer")
    assert scans == [(), ("contoso",)]
    assert report.removed["recall store"] >= 2 and not report.failures
    assert not any("Contoso" in r.text for r in await store.records(USER))

    await support.say("customer=Fabrikam")
    scans.clear()
    declared = await setup.declared(frozenset({"customer"}))
    await support.say("Fabrikam called again about the export.")  # stored after the scan above
    removed = await setup.erase(WorkingMemory().plan("customer", declared))
    assert scans == [(), (), ("fabrikam",)] and removed >= 3
    assert not any("Fabrikam" in r.text for r in await store.records(USER))


# Texts a case-insensitive match of `Kiss-Ida` finds (the look-alike letters that `re.IGNORECASE`
# takes for ASCII ones, JSON's escapes), and texts it does not (the value inside a longer word).
HOLDING = [
    "KISS-IDA called",
    "\u212aiss-Ida called",  # Kelvin sign
    "Ki\u017fs-\u0130da called",  # long s, capital I with a dot
    "K\u0131ss-\u0131da called",  # dotless i
    'The reply quoted "kiss-ida".',
]
KEPT = ["Kiss-Idas called", "Kiss-Ida2 called", "kiss ida called"]


async def test_a_forget_finds_every_text_holding_a_value_whatever_its_case_or_look_alike_letters(
    store: RecallStore,
) -> None:
    """The store's own query (DuckDB's RE2, PostgreSQL's regular expressions) narrows what a forget
    reads to the texts that may hold a value: never fewer than Python's case-insensitive match finds."""
    support = seat(store, "support")
    await support.say("customer=Kiss-Ida")
    for text in HOLDING + KEPT:
        await support.say(text)
    plan = WorkingMemory().plan("customer")
    plan = plan.widened(await store.declared(USER, plan.keys))
    assert plan.needles == ("kiss-ida",)
    assert all(plan.holds(text) for text in HOLDING) and not any(plan.holds(text) for text in KEPT)
    await store.erase(plan, USER)
    texts = {r.text for r in await store.records(USER) if r.role == "user"}
    assert texts == set(KEPT)


async def test_a_value_beyond_ascii_makes_a_forget_read_every_text(store: RecallStore) -> None:
    """Case rules beyond ASCII are Python's own: a forget of such a value reads every text and matches
    in Python (`ForgetPlan.needles` is None)."""
    support = seat(store, "support")
    await support.say("customer=Zo\u00eb")
    await support.say("ZO\u00cb called")
    await support.say("Zoe called")
    plan = WorkingMemory().plan("customer")
    plan = plan.widened(await store.declared(USER, plan.keys))
    assert plan.needles is None
    await store.erase(plan, USER)
    assert {r.text for r in await store.records(USER) if r.role == "user"} == {"Zoe called"}


async def test_forget_all_purges_the_whole_scope_and_nothing_outside_it(store: RecallStore) -> None:
    await seat(store, "support").say("customer=Contoso")
    other = seat(store, "support", search=RecallScope("workbench", None, "bob"))
    other.provider.storage_scope = RecallScope("workbench", "support", "bob")
    await other.say("customer=Fabrikam")
    purge = await store.forget_scope(USER)
    assert purge.records == 2
    assert await store.records(USER) == []
    assert [r.text for r in await store.records(RecallScope(user_id="bob")) if r.role == "user"] == [
        "customer=Fabrikam"
    ]


def _raw_bytes(path: Path) -> bytes:
    return b"".join(p.read_bytes() for p in (path, *companion_files(path)) if p.exists())


@pytest.mark.parametrize("forget", ["key", "all"])
async def test_after_a_forget_no_byte_of_the_value_is_left_in_the_database_files(tmp_path: Path, forget: str) -> None:
    path = tmp_path / "recall.duckdb"
    store = RecallStore(DuckDBBackend(path))
    support = seat(store, "support")
    await support.say("customer=Zanzibar-Orchid-7731; version=12.4")
    await support.say("database=PostgreSQL")
    await store.close()  # checkpointed: the value is in the file itself
    assert b"Zanzibar-Orchid-7731" in _raw_bytes(path)

    if forget == "key":
        await store.erase(WorkingMemory().plan("customer"), USER)
    else:
        await store.forget_scope(USER)
    await store.close()

    assert b"Zanzibar-Orchid-7731" not in _raw_bytes(path)
    assert "Zanzibar-Orchid-7731".encode("utf-16-le") not in _raw_bytes(path)
    assert [p.name for p in tmp_path.iterdir()] == ["recall.duckdb"]  # no WAL, no work file
    assert path.stat().st_mode & 0o777 == 0o600  # the rewritten file is as private as the first
    kept = [r.text for r in await store.records(USER)]
    assert ("database=PostgreSQL" in kept) == (forget == "key")
    await store.close()


async def test_deleting_alone_leaves_the_value_in_the_file(tmp_path: Path) -> None:
    """Why the rewrite exists: DuckDB keeps a deleted row's bytes after DELETE and CHECKPOINT."""
    path = tmp_path / "recall.duckdb"
    store = RecallStore(DuckDBBackend(path))
    support = seat(store, "support")
    await support.say("customer=Zanzibar-Orchid-7731")
    await support.say("database=PostgreSQL")
    await store.close()  # checkpointed into the file
    collection = (await store._existing())[0]
    await collection.delete([r.key for r in await store.records(USER) if "Zanzibar" in r.text])
    await store.close()
    assert [r for r in await store.records(USER) if "Zanzibar" in r.text] == []
    assert b"Zanzibar-Orchid-7731" in _raw_bytes(path)
    await store.close()


@pytest.mark.parametrize("forget", ["key", "all"])
async def test_a_forget_completed_after_a_crash_erases_what_the_cut_short_one_deleted(
    tmp_path: Path, forget: str
) -> None:
    """Killed after its delete and before the rewrite, a forget left the deleted row's bytes in the file;
    completed at the next start it finds nothing left to delete, and still rewrites the file."""
    path = tmp_path / "recall.duckdb"
    store = RecallStore(DuckDBBackend(path))
    support = seat(store, "support")
    await support.say("customer=Zanzibar-Orchid-7731")
    await support.say("database=PostgreSQL")
    await store.close()
    collection = (await store._existing())[0]
    await collection.delete([r.key for r in await store.records(USER) if "Zanzibar" in r.text])
    await store.close()  # the crash: deleted, not rewritten
    assert b"Zanzibar-Orchid-7731" in _raw_bytes(path)

    plan = WorkingMemory().plan("customer" if forget == "key" else None)
    purge = await store.erase(replace(plan, completing=True), USER)
    await store.close()

    assert purge.records == 0 if forget == "key" else purge.records > 0  # everything: the rest goes too
    assert b"Zanzibar-Orchid-7731" not in _raw_bytes(path)
    assert [p.name for p in tmp_path.iterdir()] == ["recall.duckdb"]


async def _checkpoint(conninfo: str) -> None:
    """Write every changed page to the table files, so a scan of the files sees what the server holds."""
    async with await psycopg.AsyncConnection.connect(conninfo, autocommit=True) as connection:
        await connection.execute("CHECKPOINT")


def _database_bytes(postgres: PostgresServer, conninfo: str) -> bytes:
    return b"".join(p.read_bytes() for p in postgres.database_files(conninfo))


@pytest.mark.parametrize("forget", ["key", "all"])
async def test_after_a_forget_and_its_vacuum_no_byte_of_the_value_is_left_in_the_database_files(
    postgres: PostgresServer, postgres_database: str, forget: str
) -> None:
    store = RecallStore(PostgresBackend(postgres_database))
    support = seat(store, "support")
    await support.say("customer=Zanzibar-Orchid-7731; version=12.4")
    await support.say("database=PostgreSQL")
    await _checkpoint(postgres_database)
    assert b"Zanzibar-Orchid-7731" in _database_bytes(postgres, postgres_database)

    if forget == "key":
        await store.erase(WorkingMemory().plan("customer"), USER)
    else:
        await store.forget_scope(USER)
    await _checkpoint(postgres_database)

    assert b"Zanzibar-Orchid-7731" not in _database_bytes(postgres, postgres_database)  # tables, indexes, TOAST
    kept = [r.text for r in await store.records(USER)]
    assert ("database=PostgreSQL" in kept) == (forget == "key")
    await store.close()


async def test_deleting_alone_leaves_the_value_in_the_postgres_table_files(
    postgres: PostgresServer, postgres_database: str
) -> None:
    """Why the vacuum exists: PostgreSQL keeps a deleted row's bytes in its page after DELETE."""
    store = RecallStore(PostgresBackend(postgres_database))
    await seat(store, "support").say("customer=Zanzibar-Orchid-7731")
    collection = (await store._existing())[0]
    await collection.delete([r.key for r in await store.records(USER)])
    await _checkpoint(postgres_database)
    assert await store.records(USER) == []
    assert b"Zanzibar-Orchid-7731" in _database_bytes(postgres, postgres_database)
    await store.close()


async def _file_nodes(conninfo: str, *relations: str) -> list[int]:
    async with await psycopg.AsyncConnection.connect(conninfo) as connection:
        query = "SELECT pg_relation_filenode(%s::regclass)"
        return [row[0] for r in relations if (row := await (await connection.execute(query, [r])).fetchone())]


async def test_a_forget_rewrites_the_messages_and_leaves_the_embeddings_index_in_place(postgres_database: str) -> None:
    """The split that keeps a forget fast: the text lives only in the messages table, which the forget
    rewrites; the embeddings table and its HNSW index keep their files (an index build per forget was
    what made a forget of 100,000 messages take over a minute)."""
    store = RecallStore(PostgresBackend(postgres_database))
    support = seat(store, "support")
    await support.say("customer=Zanzibar-Orchid-7731; version=12.4")
    await support.say("database=PostgreSQL")
    (collection,) = await store._existing()  # the one embedder's collection
    messages, vectors = collection.collection_name, vectors_table(collection.collection_name)
    async with await psycopg.AsyncConnection.connect(postgres_database) as connection:
        query = "SELECT indexname FROM pg_indexes WHERE tablename = %s AND indexdef LIKE '%% USING hnsw %%'"
        (index,) = [row[0] for row in await (await connection.execute(query, [vectors])).fetchall()]
        columns = "SELECT column_name FROM information_schema.columns WHERE table_name = %s"
        assert "text" not in [row[0] for row in await (await connection.execute(columns, [vectors])).fetchall()]
    before = await _file_nodes(postgres_database, messages, vectors, index)

    await store.erase(WorkingMemory().plan("customer"), USER)

    after = await _file_nodes(postgres_database, messages, vectors, index)
    assert after[0] != before[0] and after[1:] == before[1:]
    embedder = lexical_embedder()
    found = [
        hit.record.text for hit in await store.search(embedder.name, (await embedder.embed(["PostgreSQL"]))[0], USER, 5)
    ]
    assert any("PostgreSQL" in text for text in found) and not any("Zanzibar" in text for text in found)
    await store.close()
