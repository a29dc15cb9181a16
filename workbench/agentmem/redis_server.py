"""A Redis server as the workbench reaches it: its address shown without a password, a connect check
before any window, the lists a history provider keeps under a key prefix, and what a forget does to
them and to the server's files.

A delete is not an erase on a Redis server: the append-only file keeps the `RPUSH` that wrote a
message until the file is rewritten, and a snapshot (RDB) keeps it until the next one replaces it. So a
forget deletes every list that holds a forgotten value, then has the server rewrite its append-only
file (`BGREWRITEAOF`, when it keeps one) and write a fresh snapshot (`BGSAVE`, when it saves them),
waiting for each to finish. What no command of the server reaches is said in "What is remembered",
beside the lists (`server_item`): replicas that were disconnected (they keep their copy until they
resync), backups and copies of the files, and a managed service's own retention. A server that
refuses the rewrite (a managed service renames or disables the commands) makes the forget report the
server NOT reached, with the command it refused; the keys are deleted all the same."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qsl, urlencode, urlsplit

import redis
import redis.asyncio as aioredis
from agent_framework import Message

from workbench.memory.forget import ForgetPlan, declared_in
from workbench.runtime.remembered import HeldItem, history_text
from workbench.text import json_strings

if TYPE_CHECKING:
    from agent_framework_redis import RedisHistoryProvider

CONNECT_TIMEOUT = 5.0  # seconds a start waits for the server before it says it cannot reach it
REWRITE_TIMEOUT = 300.0  # seconds a forget waits for the server to rewrite a file
_POLL = 0.05  # the server announces no end of a rewrite: its INFO is read again this often
SCHEMES = ("redis", "rediss", "unix")
_NOT_A_URL = "not a Redis URL: use redis://host:port/db, rediss://… or unix:///path/to/socket"
UNREACHED = (
    "a forget cannot reach replicas that were disconnected, backups or copies of the server's files, or a "
    "managed service's own retention"
)
UNIT = "session list(s) deleted"  # what a forget of RedisLists counts (the files it rewrites are said apart)
_PROBE = "probe-session"  # a session id the provider writes literally into its key (checked)


class PersistenceNotRewritten(RuntimeError):
    """The server's files may still hold a deleted value: it refused a rewrite, or a rewrite failed."""


def display_url(url: str) -> str:
    """`url` with any password written as *** (in the address or in its query). ValueError naming no
    part of it when it is no Redis URL (a malformed one may cut a password anywhere)."""
    try:
        parts = urlsplit(url)
        password = parts.password
        parts.port  # noqa: B018 (a port that is no number raises here)
    except ValueError:
        raise ValueError(_NOT_A_URL) from None
    if parts.scheme not in SCHEMES or not (parts.hostname or parts.path):
        raise ValueError(_NOT_A_URL)
    user = parts.username or ""
    secret = ":***" if password else ""
    host = parts.netloc.rpartition("@")[2] if parts.hostname else ""
    address = f"{user}{secret}@{host}" if user or secret else host
    query = urlencode([(k, "***" if k == "password" else v) for k, v in parse_qsl(parts.query)], safe="*")
    return f"{parts.scheme}://{address}{parts.path}{'?' if query else ''}{query}"


def _secrets(url: str) -> list[str]:
    parts = urlsplit(url)
    return [s for s in (parts.password, *(v for k, v in parse_qsl(parts.query) if k == "password")) if s]


def check_reachable(url: str, timeout: float = CONNECT_TIMEOUT) -> None:
    """Connect once, ask PING and close, giving up after `timeout` seconds. ConnectionError naming the
    server as `display_url` shows it and the client's reason, its first line, with any password as ***."""
    client = redis.Redis.from_url(url, socket_connect_timeout=timeout, socket_timeout=timeout)
    try:
        client.ping()
    except (redis.RedisError, OSError) as error:
        reason = next((line.strip() for line in str(error).splitlines() if line.strip()), type(error).__name__)
        for secret in _secrets(url):
            reason = reason.replace(secret, "***")
        raise ConnectionError(f"Redis at {display_url(url)}: {reason}") from None
    finally:
        client.close()


def client_location(client: aioredis.Redis) -> str:
    """Where a client connects, as a URL without a password (for a provider given a client, not a URL)."""
    pool = client.connection_pool
    kwargs: dict[str, Any] = pool.connection_kwargs
    if path := kwargs.get("path"):
        return f"unix://{path}?db={kwargs.get('db', 0)}"
    scheme = "rediss" if issubclass(pool.connection_class, aioredis.SSLConnection) else "redis"
    return f"{scheme}://{kwargs.get('host', 'localhost')}:{kwargs.get('port', 6379)}/{kwargs.get('db', 0)}"


def key_prefix(provider: RedisHistoryProvider) -> str:
    """What every key of `provider`'s sessions starts with: its key for a probe session, the probe cut
    off (the provider has no public name for its keys; `_redis_key` is the one it uses itself)."""
    key = provider._redis_key(_PROBE)
    if not key.endswith(_PROBE):
        raise ValueError(f"this RedisHistoryProvider writes keys this version does not know ({key!r})")
    return key.removesuffix(_PROBE)


def _glob(prefix: str) -> str:
    """`prefix` as the start of a SCAN MATCH pattern: its own glob characters escaped."""
    return "".join(f"\\{c}" if c in "*?[]\\" else c for c in prefix) + "*"


def _holds(plan: ForgetPlan, raw: str) -> bool:
    """Whether one stored message (JSON) holds a forgotten value, raw or in any of its strings unescaped."""
    return plan.holds(raw) or any(plan.holds(s) for s in json_strings(raw))


@dataclass(frozen=True)
class StoredList:
    """One session's list: its key and each message as the provider stored it (JSON)."""

    key: str
    items: tuple[str, ...]

    def messages(self) -> list[Message]:
        return [Message.from_dict(json.loads(raw)) for raw in self.items]

    def held(self, whose: str) -> HeldItem:
        messages = self.messages()
        return HeldItem("history", self.key, f"{whose}: {len(messages):,} message(s)", history_text(messages))


def server_item(location: str) -> HeldItem:
    """The server itself, as "What is remembered" lists it: its files, and what a forget cannot reach."""
    what = f"the Redis server: its append-only file and snapshots are rewritten by a forget; {UNREACHED}"
    return HeldItem("store", location, what, "")


class RedisLists:
    """The lists under `prefixes` on the server `client` reaches: the sessions a Redis history provider
    keeps. What they hold, the values they declare, and a forget (see the module)."""

    def __init__(self, client: aioredis.Redis, prefixes: Sequence[str]) -> None:
        self.client = client
        self.prefixes = tuple(prefixes)
        self.also_done: str | None = None  # the files its last forget had the server rewrite (`DoesMore`)

    async def read(self) -> list[StoredList]:
        """Every list under the prefixes, by key, each with its messages oldest first."""
        keys: set[str] = set()
        for prefix in self.prefixes:
            keys.update([str(k) async for k in self.client.scan_iter(match=_glob(prefix), count=1000)])
        ordered = sorted(keys)
        async with self.client.pipeline(transaction=False) as pipe:
            for key in ordered:
                pipe.lrange(key, 0, -1)
            lists = await pipe.execute()
        return [StoredList(key, tuple(str(i) for i in items)) for key, items in zip(ordered, lists, strict=True)]

    async def declared(self, keys: frozenset[str]) -> set[str]:
        return declared_in((s for stored in await self.read() for raw in stored.items for s in json_strings(raw)), keys)

    async def remove(self) -> int:
        """Delete every list under the prefixes (the drift lab's own keys); how many were deleted."""
        keys = [stored.key for stored in await self.read()]
        if keys:
            await self.client.delete(*keys)
        return len(keys)

    async def erase(self, plan: ForgetPlan) -> int:
        """Delete every list that holds a forgotten value (the whole session: a list with one message
        taken out would leave replies that answer it), then rewrite the server's files, whether or not a
        list was deleted here (another holder may have deleted one, and the append-only file still holds
        what it wrote). Returns the lists deleted (`UNIT`); the files rewritten are said apart (`also_done`);
        PersistenceNotRewritten when they were not."""
        self.also_done = None
        holding = [stored.key for stored in await self.read() if any(_holds(plan, raw) for raw in stored.items)]
        if holding:
            await self.client.delete(*holding)
        if rewritten := await rewrite_persistence(self.client):
            self.also_done = f"the server's {' and '.join(rewritten)} rewritten"
        return len(holding)


async def rewrite_persistence(client: aioredis.Redis, timeout: float = REWRITE_TIMEOUT) -> tuple[str, ...]:
    """Have the server write its files again from what it holds now: the append-only file when it keeps
    one, then a snapshot when it saves them (its `save` setting, or one was written since it started).
    Waits for a rewrite or save already running first (it began before the caller's delete). Returns
    what was rewritten; PersistenceNotRewritten naming the command refused or the failure."""
    deadline = time.monotonic() + timeout
    info = await _persistence(client)
    await _until(client, deadline, "a background save or rewrite already running", _idle)
    done: list[str] = []
    if int(info["aof_enabled"]):
        await _background("BGREWRITEAOF", client.bgrewriteaof)
        await _until(client, deadline, "the append-only file's rewrite", _aof_done)
        await _succeeded(client, "aof_last_bgrewrite_status", "the append-only file's rewrite")
        done.append("append-only file")
    if await _saves_snapshots(client, info):
        await _background("BGSAVE", client.bgsave)
        await _until(client, deadline, "the snapshot", lambda i: not int(i["rdb_bgsave_in_progress"]))
        await _succeeded(client, "rdb_last_bgsave_status", "the snapshot")
        done.append("snapshot")
    return tuple(done)


async def _persistence(client: aioredis.Redis) -> dict[str, Any]:
    try:
        return dict(await client.info("persistence"))
    except redis.ResponseError as exc:
        raise PersistenceNotRewritten(f"the server refused INFO persistence ({exc}); {UNREACHED}") from None


def _idle(info: dict[str, Any]) -> bool:
    return not (int(info["rdb_bgsave_in_progress"]) or int(info["aof_rewrite_in_progress"]))


def _aof_done(info: dict[str, Any]) -> bool:
    return not (int(info["aof_rewrite_in_progress"]) or int(info["aof_rewrite_scheduled"]))


async def _saves_snapshots(client: aioredis.Redis, info: dict[str, Any]) -> bool:
    """Whether the server writes snapshots: its `save` setting, or one was written since it started. A
    server that refuses CONFIG (a managed service) is asked for one all the same: its refusal says so."""
    if int(info.get("rdb_last_bgsave_time_sec", -1)) != -1:
        return True
    try:
        setting = await client.config_get("save")
    except redis.ResponseError:
        return True
    return bool(str(setting.get("save", "")).strip())


async def _background(command: str, start: Callable[[], Awaitable[Any]]) -> None:
    """Start `command`; one already running (started after the caller's delete: the server was idle
    before) is as good, and is waited for."""
    try:
        await start()
    except redis.ResponseError as exc:
        if "already in progress" not in str(exc):
            raise PersistenceNotRewritten(
                f"the server refused {command} ({exc}): its files may still hold the deleted lists; {UNREACHED}"
            ) from None


async def _until(client: aioredis.Redis, deadline: float, what: str, done: Any) -> None:
    while not done(await _persistence(client)):
        if time.monotonic() > deadline:
            raise PersistenceNotRewritten(f"the server did not finish {what} in time; its files may still hold it")
        await asyncio.sleep(_POLL)


async def _succeeded(client: aioredis.Redis, field: str, what: str) -> None:
    status = (await _persistence(client)).get(field)
    if status != "ok":
        raise PersistenceNotRewritten(f"{what} failed on the server ({field}: {status}); its files may still hold it")
