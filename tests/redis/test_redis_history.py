"""A `RedisHistoryProvider` on an agent, as the workbench shows and forgets it, against a real Redis
server: what it holds is each session's list read from the server, and a forget deletes each list that
holds a value and leaves no byte of it in any of the server's files (append-only file and snapshot)."""

from __future__ import annotations

import secrets

import pytest
import redis.asyncio as aioredis
from agent_framework import Message
from agent_framework_redis import RedisHistoryProvider

from tests.redis.server import RedisServer
from workbench.agentmem.redis_history import redis_history_memory
from workbench.agentmem.redis_server import key_prefix, rewrite_persistence
from workbench.memory.forget import ForgetPlan
from workbench.memory.holder_kinds import DoesMore


def provider(server: RedisServer, application: str = "my-app") -> RedisHistoryProvider:
    return RedisHistoryProvider(redis_url=server.url, application_id=application, agent_id="helper")


def plan(key: str, *values: str) -> ForgetPlan:
    return ForgetPlan((key,), frozenset({key}), frozenset(values))


async def saved(p: RedisHistoryProvider, session: str, *texts: str) -> None:
    await p.save_messages(session, [Message(role="user", contents=[t]) for t in texts])


async def test_held_lists_each_session_with_its_messages(redis_server):
    p = provider(redis_server)
    await saved(p, "s1", "priority=P1", "and the logs?")
    await saved(p, "s2", "customer=Contoso")
    another = provider(redis_server, "another-app")
    await saved(another, "s3", "not this one")
    await another.aclose()
    memory = redis_history_memory(p, "helper")
    held = await memory.held()
    assert [(i.kind, i.name) for i in held] == [
        ("history", key_prefix(p) + "s1"),
        ("history", key_prefix(p) + "s2"),
        ("store", redis_server.url),
    ]
    assert held[0].content == "user:\npriority=P1\nuser:\nand the logs?"
    assert held[0].description == "a session of helper: 2 message(s)"
    assert await memory.declared(frozenset({"priority", "customer"})) == {"P1", "Contoso"}
    assert (memory.providers("helper"), memory.recalled("helper")) == ([], [])
    assert memory.location == redis_server.url
    assert "replicas that were disconnected" in held[2].description and "backups" in held[2].description
    await p.aclose()


async def test_forget_deletes_the_lists_holding_a_value_and_no_server_file_keeps_it(redis_server):
    tag = secrets.token_hex(4)
    value, other = f"Bérénice-{tag}", f"Contoso-{tag}"  # written \u00e9-escaped in the provider's JSON
    p = provider(redis_server)
    await saved(p, "s1", f"customer={value}", "thanks")
    await saved(p, "s2", f"module={other}")  # another key: a forget of `customer` leaves it
    redis_server.server.save()  # a snapshot holds them too
    assert redis_server.holding([value]) == {"appendonly.aof": [value], "dump.rdb": [value]}

    memory = redis_history_memory(p, "helper")
    assert await memory.erase(plan("customer", value)) == 1  # the list; the server's files are said apart
    assert isinstance(memory, DoesMore) and memory.also_done == "the server's append-only file and snapshot rewritten"
    assert [i.name.rsplit("|", 1)[1] for i in await memory.held() if i.kind == "history"] == ["s2"]
    assert redis_server.holding([value]) == {}
    assert redis_server.holding([other]) == {"appendonly.aof": [other], "dump.rdb": [other]}
    assert [m.text for m in await p.get_messages("s2")] == [f"module={other}"]
    await p.aclose()


async def test_a_delete_alone_leaves_the_value_in_the_append_only_file(redis_server):
    """Why a forget rewrites the server's files: without it the scan above would find the value."""
    value = f"Fabrikam-{secrets.token_hex(4)}"
    p = provider(redis_server)
    await saved(p, "s1", f"customer={value}")
    await p.clear("s1")
    assert redis_server.holding([value]) == {"appendonly.aof": [value]}
    assert await rewrite_persistence(p._redis_client) == ("append-only file", "snapshot")
    assert redis_server.holding([value]) == {}
    await p.aclose()


async def test_a_forget_rewrites_the_files_even_when_no_list_holds_the_value_any_more(redis_server):
    """Another holder (the agents' sessions) may have deleted the list before this one runs."""
    value = f"Northwind-{secrets.token_hex(4)}"
    p = provider(redis_server)
    await saved(p, "s1", f"customer={value}")
    await p.clear("s1")
    memory = redis_history_memory(p, "helper")
    assert await memory.erase(plan("customer", value)) == 0  # no list left to delete: both files rewritten
    assert isinstance(memory, DoesMore) and memory.also_done == "the server's append-only file and snapshot rewritten"
    assert redis_server.holding([value]) == {}
    await p.aclose()


def test_the_location_names_no_password():
    p = RedisHistoryProvider(redis_url="redis://ops:hunter2@cache.example:6380/2", application_id="a")
    memory = redis_history_memory(p, "helper")
    assert memory.location == "redis://ops:***@cache.example:6380/2"
    assert memory.describe() == "RedisHistoryProvider (application a), one list per session"


def test_a_provider_given_a_client_or_legacy_keys_is_read_where_it_writes():
    client = aioredis.Redis(host="cache.example", port=6380, db=3, ssl=True, password="hunter2", decode_responses=True)
    given = RedisHistoryProvider(redis_client=client, application_id="a", agent_id="helper")
    assert redis_history_memory(given, "helper").location == "rediss://cache.example:6380/3"
    with pytest.warns(DeprecationWarning):
        legacy = RedisHistoryProvider(redis_url="redis://localhost", key_format="legacy")
    assert key_prefix(legacy) == "chat_messages:"
    assert (
        redis_history_memory(legacy, "helper").describe() == "RedisHistoryProvider (legacy keys), one list per session"
    )
