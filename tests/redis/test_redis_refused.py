"""A server that refuses the commands a forget uses, as managed services do (CONFIG, BGREWRITEAOF
renamed away): the forget does what the server allows and says what it could not, never silently."""

from __future__ import annotations

import secrets
from collections.abc import Iterator
from pathlib import Path

import pytest
from agent_framework import Message
from agent_framework_redis import RedisHistoryProvider

from tests.redis.server import RedisServer, start, stop
from tests.redis.test_redis_persist import quit_, started
from workbench.agentmem.redis_history import redis_history_memory
from workbench.agentmem.redis_server import PersistenceNotRewritten
from workbench.memory.forget import ForgetPlan
from workbench.memory.holder_kinds import DoesMore


@pytest.fixture(scope="module")
def no_config(tmp_path_factory) -> Iterator[RedisServer]:
    server = start(tmp_path_factory.mktemp("no-config"), refused=("CONFIG",))
    yield server
    stop(server)


@pytest.fixture(scope="module")
def no_rewrite(tmp_path_factory) -> Iterator[RedisServer]:
    server = start(tmp_path_factory.mktemp("no-rewrite"), refused=("CONFIG", "BGREWRITEAOF"))
    yield server
    stop(server)


async def remembered(server: RedisServer, value: str) -> RedisHistoryProvider:
    p = RedisHistoryProvider(redis_url=server.url, application_id="my-app", agent_id="helper")
    await p.save_messages("s1", [Message(role="user", contents=[f"customer={value}"])])
    server.server.save()
    assert server.holding([value]) == {"appendonly.aof": [value], "dump.rdb": [value]}
    return p


async def test_without_config_the_forget_reads_info_and_still_rewrites_both_files(no_config):
    value = f"Contoso-{secrets.token_hex(4)}"
    p = await remembered(no_config, value)
    memory = redis_history_memory(p, "helper")
    assert await memory.erase(ForgetPlan(("customer",), frozenset({"customer"}), frozenset({value}))) == 1  # the list
    assert (
        isinstance(memory, DoesMore) and memory.also_done == "the server's append-only file and snapshot rewritten"
    )  # then both files
    assert no_config.holding([value]) == {}
    await p.aclose()


async def test_a_refused_rewrite_deletes_the_list_and_says_the_files_may_still_hold_it(no_rewrite):
    value = f"Fabrikam-{secrets.token_hex(4)}"
    p = await remembered(no_rewrite, value)
    memory = redis_history_memory(p, "helper")
    with pytest.raises(PersistenceNotRewritten, match="the server refused BGREWRITEAOF") as raised:
        await memory.erase(ForgetPlan(("customer",), frozenset({"customer"}), frozenset({value})))
    assert "replicas that were disconnected" in str(raised.value)
    assert [i.kind for i in await memory.held()] == ["store"]  # the list is gone from the server
    assert "appendonly.aof" in no_rewrite.holding([value])  # and its file still holds it: said, not hidden
    await p.aclose()


async def test_the_forget_report_names_the_server_not_reached(tmp_path: Path, no_rewrite):
    value = f"Northwind-{secrets.token_hex(4)}"
    runtime = started(tmp_path, no_rewrite)
    assert (await runtime.ask("support", f"customer={value}")).ok
    report = await runtime.forget("customer")
    failure = report.failures[f"agent sessions on {no_rewrite.url}"]
    assert failure.startswith("PersistenceNotRewritten: the server refused BGREWRITEAOF")
    assert f"agent sessions on {no_rewrite.url} NOT reached" in report.describe()
    assert value not in failure
    await quit_(runtime)
