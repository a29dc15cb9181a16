from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

from tests.support.postgres_server import PostgresServer, postgres_server
from workbench.recall.duckdb_file import DuckDBBackend
from workbench.recall.postgres_store import PostgresBackend
from workbench.recall.store import Backend, RecallStore


@pytest.fixture(scope="session")
def postgres() -> Iterator[PostgresServer]:
    """One real PostgreSQL server with pgvector for the whole session, stopped at its end."""
    with postgres_server() as server:
        yield server


@pytest.fixture
def postgres_database(postgres: PostgresServer) -> Iterator[str]:
    with postgres.database() as conninfo:
        yield conninfo


@pytest.fixture(params=["memory", "duckdb", "postgresql"])
async def store(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[RecallStore]:
    """The provider's three stores: Agent Framework's InMemoryStore, DuckDB on a real file, and
    PostgreSQL with pgvector on a real server."""
    backend: Backend | None = None
    if request.param == "duckdb":
        backend = DuckDBBackend(tmp_path / "recall.duckdb")
    elif request.param == "postgresql":
        backend = PostgresBackend(request.getfixturevalue("postgres_database"))
    recall = RecallStore(backend)
    yield recall
    await recall.close()
