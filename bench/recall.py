"""Recall at scale, run on demand: retrieval latency (embed the query, search, build the injected
block), the store's size on disk, and the time a forget takes (scan, delete and, on DuckDB, the file
rewrite), for 1,000, 10,000 and 100,000 stored messages, DuckDB against Agent Framework's InMemoryStore.

    python bench/recall.py [--sizes 1000 10000 100000] [--queries 10] [--stores InMemoryStore DuckDB]

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
import random
import statistics
import tempfile
import time
from pathlib import Path

from workbench.recall.duckdb_file import DuckDBBackend
from workbench.recall.embedders import LexicalEmbeddingClient, lexical_embedder
from workbench.recall.provider import Recalled, recalled_block
from workbench.recall.records import RecallScope, StoredMessage
from workbench.recall.store import RecallStore

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


async def fill(store: RecallStore, texts: list[str], folder: Path) -> float:
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
    for start in range(rest.start, rest.stop, BATCH):
        batch = texts[start : start + BATCH]
        await store.add(embedder.name, [record(start + i, t) for i, t in enumerate(batch)], await embedder.embed(batch))
    return per_message


def bulk_load(path: Path, texts: list[str], indexes: range, folder: Path) -> None:
    import duckdb

    embedder = LexicalEmbeddingClient()
    table = f"recall_lexical_{embedder.dimensions}"
    rows = folder / "rows.csv"
    with rows.open("w", newline="") as file:
        writer = csv.writer(file)
        for i in indexes:
            r = record(i, texts[i])
            writer.writerow([*vars(r).values(), "[" + ",".join(f"{x:.6g}" for x in embedder.embed(texts[i])) + "]"])
    connection = duckdb.connect(str(path))
    try:
        columns = [f"c{n}" for n in range(10)]
        connection.execute(
            f"INSERT INTO {table} SELECT c0, c1, c2, c3::BIGINT, c4, c5, c6, c7, c8, "
            f"c9::DOUBLE[{embedder.dimensions}] FROM read_csv(?, header=false, all_varchar=true, names=?)",
            [str(rows), columns],
        )
    finally:
        connection.close()
    rows.unlink()


async def retrieval(store: RecallStore, queries: int) -> list[float]:
    embedder = lexical_embedder()
    rng = random.Random(7)
    times = []
    for _ in range(queries):
        query = f"Which database and export for w{rng.randrange(2000)} w{rng.randrange(2000)}?"
        started = time.perf_counter()
        (vector,) = await embedder.embed([query])
        hits = await store.search(embedder.name, vector, SCOPE, 5)
        recalled = [Recalled(h.record.text, h.record.role, h.score, h.record.scope(), h.record.turn, "") for h in hits]
        recalled_block(recalled, embedder.label)
        times.append(time.perf_counter() - started)
    return times


async def measure(kind: str, count: int, queries: int, folder: Path) -> dict[str, str]:
    path = folder / f"recall-{kind}-{count}.duckdb"
    store = RecallStore(DuckDBBackend(path) if kind == "DuckDB" else None)
    upsert_seconds = await fill(store, messages(count), folder)
    await retrieval(store, 1)  # warm up
    times = await retrieval(store, queries)
    if kind == "DuckDB":
        await store.close()  # checkpointed: the size is the file's
    size = store.backend.size_on_disk()
    started = time.perf_counter()
    purge = await store.forget_key("customer", known=(), scope=SCOPE)
    forget_seconds = time.perf_counter() - started
    await store.close()
    return {
        "store": kind,
        "messages": f"{count:,}",
        "upsert ms/msg": f"{upsert_seconds * 1000:.1f}",
        "retrieval median ms": f"{statistics.median(times) * 1000:.1f}",
        "slowest ms": f"{max(times) * 1000:.1f}",
        "size on disk": "n/a (process memory)" if size is None else f"{size / 1_048_576:.1f} MiB",
        "forget s": f"{forget_seconds:.2f}",
        "purged": f"{purge.records:,}",
    }


async def main(sizes: list[int], queries: int, stores: list[str]) -> None:
    rows = []
    with tempfile.TemporaryDirectory() as folder:
        for count in sizes:
            for kind in stores:
                rows.append(await measure(kind, count, queries, Path(folder)))
                print("  ".join(f"{k}: {v}" for k, v in rows[-1].items()), flush=True)
    columns = list(rows[0])
    widths = [max(len(c), *(len(r[c]) for r in rows)) for c in columns]
    print()
    print("  ".join(c.rjust(w) for c, w in zip(columns, widths, strict=True)))
    for row in rows:
        print("  ".join(row[c].rjust(w) for c, w in zip(columns, widths, strict=True)))


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 10_000, 100_000])
    parser.add_argument("--queries", type=int, default=10)
    parser.add_argument("--stores", nargs="+", choices=["InMemoryStore", "DuckDB"], default=["InMemoryStore", "DuckDB"])
    arguments = parser.parse_args()
    asyncio.run(main(arguments.sizes, arguments.queries, arguments.stores))
