"""PostgreSQL going away mid-run: each turn fails within seconds (bench/postgres_gone.py measures how
many) with the driver's own reason in one line, instead of waiting for the framework pool's 30 s to
say "inspect the chained driver exception"."""

from __future__ import annotations

import psycopg
import pytest
from psycopg.conninfo import make_conninfo

from tests.support.postgres_server import postgres_server
from workbench.recall.config import RecallConfig
from workbench.recall.postgres_names import ENVIRONMENT
from workbench.recall.postgres_store import display_location
from workbench.recall.setup import RecallSetup
from workbench.runtime import CallLog, ModelConfig, WriterKind, build_models
from workbench.session.assemble import assemble
from workbench.session.controller import SessionController

SECRET = "s3cr3t-Pa55"


def session_on(recall: RecallSetup, calls: CallLog) -> SessionController:
    return assemble(build_models(ModelConfig()), writer=WriterKind.HOST, calls=calls, recall=recall, recall_on=True)


def refusal(conninfo: str) -> str:
    """What the driver says, first line, when asked for a connection to the stopped server."""
    try:
        psycopg.connect(conninfo, connect_timeout=2).close()
    except psycopg.OperationalError as error:
        return str(error).splitlines()[0].strip()
    raise AssertionError("the server still answers")


async def test_turns_on_a_server_gone_away_fail_with_the_drivers_reason_in_one_line(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The pool's connections the server closed fail at once with the reason the server gave; once
    they are gone, the pool has no connection to give, and the turn says why the driver cannot make
    one. The facts stay as they were, and the store's server is named without a password."""
    with postgres_server() as server:  # a server of its own: the session's stays up for the other tests
        conninfo = make_conninfo(server.server.get_uri(), password=SECRET)  # the server trusts, asks none
        monkeypatch.setenv(ENVIRONMENT, conninfo)
        calls = CallLog()
        recall = RecallConfig().build(calls)
        assert recall.store.kind == "PostgreSQL"
        session = session_on(recall, calls)
        assert (await session.ask("support", "customer=Contoso")).result.ok
        server.stop()
        why = refusal(conninfo)
        said = f"the recall store failed: PostgreSQL at {display_location(conninfo)}: "
        errors: list[str] = []
        while not errors or errors[-1] != said + why:
            assert len(errors) < 10, errors  # the pool holds at most 10 connections
            outcome = await session.ask("support", f"version={len(errors)}")
            assert not outcome.result.ok
            errors.append(outcome.result.error)
        closed = said + "terminating connection due to administrator command"
        assert set(errors) <= {closed, said + why} and errors[0] == closed, errors
        assert all("\n" not in error and SECRET not in error for error in errors)
        assert [fact.key for fact in session.state().memory.facts] == ["customer"]
        await recall.store.close()
