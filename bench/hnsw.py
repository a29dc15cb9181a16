"""HNSW settings against recall@5 and latency, run on demand: which index build (m, ef_construction)
and which search settings (hnsw.ef_search, hnsw.iterative_scan) reach recall@5 >= 0.95 against exact
search on PostgreSQL with pgvector, and at what cost.

    python bench/hnsw.py [--size 100000] [--vectors lexical projected] [--dimensions 768]
                         [--builds 16:64 32:128 32:128:halfvec] [--ef-search 40 100 200 400 1000]
                         [--scans strict_order relaxed_order] [--queries 100] [--postgres CONNINFO]

The table has the shape of the product's embeddings table (key, scope ids, vector; the HNSW index the
framework declares, cosine), holding bench/recall.py's messages embedded by the built-in lexical
embedder (256 dimensions, sparse and tie-heavy), or (`projected`) the same vectors through a seeded
Gaussian random projection to --dimensions: dense, as a server model's are, and with the same
neighbours, since a random projection keeps distances nearly unchanged. So the two tell apart what
the index makes of sparse, tied vectors and what it makes of the data itself (messages of random
words, all nearly equally far from each other, which no server model would make closer).

Each search runs twice: with the scope of all messages (bench/recall.py's), and with the scope of one
user of ten (the filter keeps a tenth of the index, where hnsw.iterative_scan matters). Times are the
query statement alone, on one connection, settings already made: bench/recall.py times the product's
whole retrieval; "pages" is the median of the buffer pages one search touches (10 queries, EXPLAIN
BUFFERS): the index scan's work, which the machine's load does not change. A build ending in
`:halfvec` indexes the vectors cast to half precision (pgvector's halfvec: half the index) and
searches through that cast; the table, the exact search and the scores keep full precision.
recall@5 counts ties as bench/recall.py does. Needs numpy (the dev extra).
"""

from __future__ import annotations

import argparse
import re
import statistics
import time
from collections.abc import Sequence
from typing import Any

import numpy as np
import psycopg
from pgvector import Vector
from pgvector.psycopg import register_vector
from recall import bench_queries, messages, postgres_server, recall_at_5  # bench/recall.py, beside this file

from workbench.recall.embedders import LexicalEmbeddingClient

TABLE = "hnsw_bench"
USERS = 10
SCOPES = {"all messages": "application_id = 'bench'", "one user of ten": "application_id = 'bench' AND user_id = 'u0'"}


def embedded(texts: Sequence[str], kind: str, dimensions: int) -> Any:
    """The texts' lexical vectors, or those projected to `dimensions` by one seeded Gaussian matrix."""
    embedder = LexicalEmbeddingClient()
    vectors = np.array([embedder.embed(text) for text in texts], dtype=np.float32)
    if kind == "lexical":
        return vectors
    projection = np.random.default_rng(11).standard_normal((vectors.shape[1], dimensions)).astype(np.float32)
    projected = vectors @ projection
    return projected / np.linalg.norm(projected, axis=1, keepdims=True)


def load(db: psycopg.Connection[Any], vectors: Any) -> None:
    db.execute(f"DROP TABLE IF EXISTS {TABLE}")
    db.execute(
        f'CREATE TABLE {TABLE} (key text COLLATE "C" PRIMARY KEY, application_id text COLLATE "C", '
        f'user_id text COLLATE "C", vector vector({vectors.shape[1]}))'
    )
    with db.cursor() as cursor, cursor.copy(f"COPY {TABLE} FROM STDIN") as copy:
        for i, vector in enumerate(vectors):
            copy.write_row([f"m{i}", "bench", f"u{i % USERS}", Vector(vector)])
    db.execute(f"VACUUM ANALYZE {TABLE}")


def indexed(kind: str, dimensions: int) -> str:
    """What a build indexes: the vectors, or (`halfvec`) their half-precision cast, as pgvector's
    README indexes half precision; either way the table keeps the full vectors."""
    return "vector" if kind == "vector" else f"(vector::halfvec({dimensions}))"


def search(
    db: psycopg.Connection[Any], query: Any, scope: str, exact: bool, kind: str = "vector"
) -> tuple[float, list[tuple[str, float]]]:
    """The framework's search statement (exact: its `+ 0` that keeps the index out of the ordering).
    Scores are full-precision cosine distances whichever index found the rows."""
    column = indexed(kind, len(query))
    ranking = f"({column} <=> %s::{kind}) + 0" if exact else f"{column} <=> %s::{kind}"
    statement = f"SELECT key, vector <=> %s FROM {TABLE} WHERE {scope} ORDER BY {ranking} LIMIT 5"
    started = time.perf_counter()
    rows = db.execute(statement, [Vector(query), Vector(query)]).fetchall()
    return time.perf_counter() - started, [(key, float(score)) for key, score in rows]


def pages_read(db: psycopg.Connection[Any], query: Any, scope: str, kind: str) -> int:
    """The buffer pages one search reads (EXPLAIN's shared hits and reads): the index scan's work,
    which a shared machine's load does not change, as it changes the times."""
    ranking = f"{indexed(kind, len(query))} <=> %s::{kind}"
    statement = f"EXPLAIN (ANALYZE, BUFFERS) SELECT key FROM {TABLE} WHERE {scope} ORDER BY {ranking} LIMIT 5"
    buffers = next(row[0] for row in db.execute(statement, [Vector(query)]).fetchall() if "Buffers:" in row[0])
    return sum(int(n) for n in re.findall(r"(?:hit|read)=(\d+)", buffers))


def sweep(
    db: psycopg.Connection[Any],
    queries: Any,
    exact: dict[str, list[list[tuple[str, float]]]],
    kind: str,
    args: argparse.Namespace,
) -> None:
    for scope_name, scope in SCOPES.items():
        for scan in args.scans:
            for ef_search in args.ef_search:
                times, found = [], []
                with db.transaction():
                    db.execute(f"SET LOCAL hnsw.ef_search = {ef_search}")
                    db.execute(f"SET LOCAL hnsw.iterative_scan = {scan}")
                    search(db, queries[0], scope, exact=False, kind=kind)  # warm up
                    for query in queries:
                        seconds, hits = search(db, query, scope, exact=False, kind=kind)
                        times.append(seconds)
                        found.append(hits)
                    pages = [pages_read(db, query, scope, kind) for query in queries[:10]]
                recall = statistics.mean(map(recall_at_5, found, exact[scope_name]))
                print(
                    f"  {scope_name:16} {scan:13} ef_search {ef_search:5}: recall@5 {recall:.3f}, "
                    f"median {statistics.median(times) * 1000:.1f} ms, slowest {max(times) * 1000:.1f} ms, "
                    f"{statistics.median(pages):.0f} pages",
                    flush=True,
                )


def main(args: argparse.Namespace) -> None:
    texts = messages(args.size)
    with postgres_server(args.postgres, ["PostgreSQL"]) as conninfo:
        assert conninfo is not None
        with psycopg.connect(conninfo, autocommit=True) as db:
            db.execute("CREATE EXTENSION IF NOT EXISTS vector")
            register_vector(db)
            for kind in args.vectors:
                started = time.perf_counter()
                vectors = embedded(texts, kind, args.dimensions)
                load(db, vectors)
                print(
                    f"{kind} vectors, {vectors.shape[1]} dimensions, {args.size:,} messages: "
                    f"embedded and loaded in {time.perf_counter() - started:.0f} s",
                    flush=True,
                )
                queries = embedded(bench_queries(args.queries), kind, args.dimensions)
                exact: dict[str, list[list[tuple[str, float]]]] = {}
                for scope_name, scope in SCOPES.items():
                    results = [search(db, query, scope, exact=True) for query in queries]
                    exact[scope_name] = [hits for _, hits in results]
                    median = statistics.median(seconds for seconds, _ in results) * 1000
                    print(f"  {scope_name:16} exact search: median {median:.1f} ms", flush=True)
                for build in args.builds:
                    m, ef_construction, *rest = build.split(":")
                    kind = rest[0] if rest else "vector"
                    db.execute(f"DROP INDEX IF EXISTS {TABLE}_hnsw")
                    db.execute(f"SET maintenance_work_mem = '{args.build_memory}'")
                    started = time.perf_counter()
                    db.execute(
                        f"CREATE INDEX {TABLE}_hnsw ON {TABLE} USING hnsw "
                        f"({indexed(kind, vectors.shape[1])} {kind}_cosine_ops) "
                        f"WITH (m = {int(m)}, ef_construction = {int(ef_construction)})"
                    )
                    row = db.execute(f"SELECT pg_relation_size('{TABLE}_hnsw')").fetchone()
                    size = row[0] / 1_048_576 if row else 0.0
                    print(
                        f" {kind} m {m}, ef_construction {ef_construction}: built in "
                        f"{time.perf_counter() - started:.0f} s, {size:.0f} MiB",
                        flush=True,
                    )
                    sweep(db, queries, exact, kind, args)
            db.execute(f"DROP TABLE {TABLE}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--size", type=int, default=100_000)
    parser.add_argument("--vectors", nargs="+", choices=["lexical", "projected"], default=["lexical", "projected"])
    parser.add_argument("--dimensions", type=int, default=768, help="of the projected vectors")
    parser.add_argument(
        "--builds", nargs="+", default=["16:64", "32:128"], help="m:ef_construction, or m:ef_construction:halfvec"
    )
    parser.add_argument("--ef-search", type=int, nargs="+", default=[40, 100, 200, 400, 1000])
    parser.add_argument(
        "--scans",
        nargs="+",
        choices=["off", "strict_order", "relaxed_order"],
        default=["strict_order", "relaxed_order"],
    )
    parser.add_argument("--queries", type=int, default=100)
    parser.add_argument("--build-memory", default="1GB", help="maintenance_work_mem for the index build")
    parser.add_argument("--postgres", help="a PostgreSQL server with pgvector (default: one started from the wheel)")
    main(parser.parse_args())
