"""`workbench --persist redis://…`: both agents' histories on a real Redis server, the facts, the ledger
and the sessions in the data directory. A restart resumes the histories from the server; a forget leaves
no byte of a value in the server's files nor in the data directory's."""

from __future__ import annotations

import gc
import secrets
import warnings
from pathlib import Path

from agent_framework import Message
from agent_framework_redis import RedisHistoryProvider

from tests.redis.server import RedisServer, start, stop
from workbench.persist.redis_histories import APPLICATION, RedisHistories
from workbench.persist.sessions import DIRECTORY, PersistedSessions
from workbench.runtime import AGENT_NAMES, Mode, ModelConfig, build_models
from workbench.runtime.agents import AgentRuntime
from workbench.session.assemble import assemble


def started(data: Path, server: RedisServer) -> AgentRuntime:
    """What `workbench --persist redis://…` assembles."""
    persisted = PersistedSessions(data / DIRECTORY)
    redis = RedisHistories(persisted, server.url)
    return assemble(build_models(ModelConfig()), persisted=persisted, redis=redis).runtime


async def quit_(runtime: AgentRuntime) -> None:
    """The workbench exits: its connections and its lock on the data directory go."""
    assert isinstance(runtime.histories, RedisHistories)
    await runtime.histories.aclose()
    runtime.histories.persisted_sessions.close()


def histories(runtime: AgentRuntime) -> dict[str, list[tuple[str, str]]]:
    return {name: [(str(m.role), m.text or "") for m in runtime.history(name)] for name in AGENT_NAMES}


def data_holding(data: Path, values: list[str]) -> dict[str, list[str]]:
    found = {
        str(p.relative_to(data)): [v for v in values if v.encode() in p.read_bytes()]
        for p in data.rglob("*")
        if p.is_file()
    }
    return {name: hits for name, hits in found.items() if hits}


async def test_a_restart_resumes_both_histories_from_the_server(tmp_path, redis_server):
    tag = secrets.token_hex(4)
    first = started(tmp_path, redis_server)
    assert (await first.ask("support", f"module=Reporting-{tag}")).ok
    assert (await first.ask("logs", f"customer=Contoso-{tag}")).ok
    before, saved = histories(first), first.memory.saved()
    assert len(before["support"]) == 2 and len(before["logs"]) == 2
    await quit_(first)

    second = started(tmp_path, redis_server)
    assert histories(second) == before and second.memory.saved() == saved
    persisted = second.status.persisted
    assert persisted is not None and (persisted.resumed, persisted.messages, persisted.facts) == (True, 4, 2)
    assert redis_server.url in persisted.directory
    # The messages live on the server only: the data directory keeps the facts and the session ids.
    assert (
        isinstance(second.histories, RedisHistories) and second.histories.persisted_sessions.state.session_ids() == []
    )
    assert histories(second)["logs"][0][1].endswith(f"customer=Contoso-{tag}")
    keys = sorted(redis_server.server.keys(f"*|{APPLICATION}|*"))
    assert [k.decode().split("|")[4] for k in keys] == ["logs", "support"]
    await quit_(second)


async def test_what_is_remembered_lists_each_agents_list_on_the_server(tmp_path, redis_server):
    runtime = started(tmp_path, redis_server)
    assert (await runtime.ask("support", "priority=P2")).ok
    remembered = await runtime.remembered()
    [system] = [s for s in remembered.systems if s.name.startswith("agent sessions on ")]
    assert system.name == f"agent sessions on {redis_server.url}"
    lists = [i for i in system.items if i.kind == "history"]
    assert [i.description for i in lists] == [
        "the support agent's history: 2 message(s)",
        "the logs agent's history: 0 message(s)",
    ]
    assert lists[0].keys == ("priority",) and "priority=P2" in lists[0].content
    assert "state.sqlite" in [i.name for i in system.items if i.kind == "file"]
    await quit_(runtime)


async def test_forget_leaves_no_byte_in_the_servers_files_nor_the_data_directory(tmp_path, redis_server):
    tag = secrets.token_hex(4)
    value, kept = f"Zoë-{tag}", f"Reporting-{tag}"
    runtime = started(tmp_path, redis_server)
    assert (await runtime.ask("support", f"customer={value}; module={kept}")).ok
    assert (await runtime.ask("logs", f"where are {value}'s logs?")).ok
    redis_server.server.save()
    assert redis_server.holding([value]) == {"appendonly.aof": [value], "dump.rdb": [value]}

    report = await runtime.forget("customer")
    assert report.failures == {}, report.failures
    assert list(report.counts)[-2:] == [f"agent sessions on {redis_server.url}", "persisted sessions"]
    # The sessions' replacement deleted their lists: none left for this holder, its files rewritten apart.
    assert report.counts[f"agent sessions on {redis_server.url}"] == (
        "0 session list(s) deleted; the server's append-only file and snapshot rewritten"
    )
    assert f"agent sessions on {redis_server.url}: 0 session list(s) deleted; the server's" in report.describe()
    assert redis_server.holding([value]) == {}
    assert data_holding(tmp_path, [value]) == {}
    assert histories(runtime) == {"support": [], "logs": []}
    assert [k.decode() for k in redis_server.server.keys("*")] == []  # both old sessions' lists deleted
    assert [f.value for f in runtime.memory.facts()] == [kept]
    await quit_(runtime)


async def test_a_turn_stores_nothing_for_a_session_no_agent_runs(tmp_path, redis_server):
    runtime = started(tmp_path, redis_server)
    provider = runtime.histories.provider("support")
    assert isinstance(provider, RedisHistoryProvider)
    await provider.save_messages("a-replaced-session", [Message(role="user", contents=["late"])])
    assert redis_server.server.keys("*") == []
    await quit_(runtime)


async def test_a_server_gone_while_the_app_runs_is_said_in_the_header(tmp_path):
    (tmp_path / "server").mkdir()
    own = start(tmp_path / "server")
    runtime = started(tmp_path / "data", own)
    assert (await runtime.ask("support", "module=Billing")).ok
    stop(own)  # killed, as a server that crashes or is taken away
    await runtime.set_mode(Mode.PROVIDER)  # new sessions: the old lists are to be deleted
    persisted = runtime.status.persisted
    assert persisted is not None and persisted.failure is not None
    assert persisted.failure.startswith(f"Redis at {own.url}: ConnectionError")
    assert "NOT saving" in runtime.status.summary
    await quit_(runtime)


async def test_a_closed_session_closes_its_connections_to_the_server(tmp_path, monkeypatch, redis_server):
    """`--persist redis://…` through the one start path: a turn opens the histories' connections, and
    closing the session (every quit ends there) closes each of them, not the garbage collector later,
    which warns of each connection it finds open."""
    from workbench.cli.configs import model_config
    from workbench.cli.parser import build_parser
    from workbench.cli.start import session_start

    monkeypatch.setenv("WORKBENCH_DATA_DIR", str(tmp_path / "data"))
    args = build_parser().parse_args(["--persist", redis_server.url])
    session = session_start(args, model_config(args))()
    await session.ask("support", "customer=Contoso Ltd 7731; hello")
    await session.aclose()
    with warnings.catch_warnings(record=True) as warned:
        warnings.simplefilter("always")
        del session
        gc.collect()
    assert [str(w.message) for w in warned if issubclass(w.category, ResourceWarning)] == []
