"""A recall file an earlier run left, and the ways it can be unreadable to a later start with recall off."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from tests.test_startup import holding
from workbench.recall.config import RecallConfig
from workbench.runtime import CallLog, ModelConfig, WriterKind, build_models
from workbench.session.assemble import assemble

UNREADABLE = ("held by a running workbench", "corrupt")


async def earlier_recall(path: Path, text: str) -> None:
    """A recall file as an earlier run with --recall leaves it: `text` said to the support agent."""
    first = RecallConfig(store=str(path)).build(CallLog())
    runtime = assemble(build_models(ModelConfig()), recall=first, recall_on=True, writer=WriterKind.HOST).runtime
    try:
        outcome = await runtime.ask("support", text)
        assert outcome.ok, outcome.error
    finally:
        await first.store.close()


@contextmanager
def unreadable(path: Path, how: str) -> Iterator[str]:
    """The recall file at `path` made unreadable `how`; yields what DuckDB says of it."""
    if how == "corrupt":
        path.write_bytes(os.urandom(64 * 1024))
        yield "not a valid DuckDB database file"
    else:
        with holding(path.parent, "--recall"):  # a workbench with --recall on the same data directory
            yield "Conflicting lock is held"
