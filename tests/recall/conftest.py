from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from workbench.recall.duckdb_file import DuckDBBackend
from workbench.recall.store import RecallStore


@pytest.fixture(params=["memory", "duckdb"])
async def store(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[RecallStore]:
    """The provider's two stores: Agent Framework's InMemoryStore, and DuckDB on a real file."""
    backend = DuckDBBackend(tmp_path / "recall.duckdb") if request.param == "duckdb" else None
    recall = RecallStore(backend)
    yield recall
    await recall.close()
