"""A `RedisHistoryProvider` on a loaded agent (seed 002's Redis message store) as a memory the
workbench shows and forgets: every session list the provider keeps on its server, read there, and a
forget that deletes each list holding a value and then has the server rewrite its files
(`workbench.agentmem.redis_server`). The provider stays on the agent as its owner configured it; this
adds no provider of its own."""

from __future__ import annotations

import copy
from typing import TYPE_CHECKING

from redis import RedisError

from workbench.agentmem.base import OnTheirAgents
from workbench.agentmem.redis_server import (
    UNIT,
    PersistenceNotRewritten,
    RedisLists,
    client_location,
    display_url,
    key_prefix,
    rewrite_persistence,
    server_item,
)
from workbench.memory.forget import ForgetPlan
from workbench.runtime.remembered import HeldItem

if TYPE_CHECKING:
    from agent_framework_redis import RedisHistoryProvider

    from workbench.runtime.memories import AgentMemory


class RedisHistoryMemory(OnTheirAgents):
    """The sessions `provider` keeps for the agent `agent`, on its server."""

    unit = UNIT

    def __init__(self, provider: RedisHistoryProvider, agent: str) -> None:
        self.provider = provider
        self.agent = agent
        # The provider's own client: the same server, database and credentials it writes with.
        client = provider._redis_client
        self._location = display_url(provider.redis_url) if provider.redis_url else client_location(client)
        self._lists = RedisLists(client, [key_prefix(provider)])

    @property
    def name(self) -> str:
        return f"{self.agent}'s Redis history"

    @property
    def location(self) -> str | None:
        return self._location

    def describe(self) -> str:
        scope = f"application {self.provider.application_id}" if self.provider.application_id else "legacy keys"
        return f"RedisHistoryProvider ({scope}), one list per session"

    async def held(self) -> list[HeldItem]:
        """Each session's list, then the server (what a forget cannot reach there)."""
        lists = [stored.held(f"a session of {self.agent}") for stored in await self._lists.read()]
        return [*lists, server_item(self._location)]

    async def declared(self, keys: frozenset[str]) -> set[str]:
        return await self._lists.declared(keys)

    async def erase(self, plan: ForgetPlan) -> int:
        return await self._lists.erase(plan)

    @property
    def also_done(self) -> str | None:
        """The server's files its last forget rewrote, said apart from the lists it deleted."""
        return self._lists.also_done


def redis_history_memory(provider: RedisHistoryProvider, agent: str) -> AgentMemory:
    """The memory the recogniser registers for a `RedisHistoryProvider` found on the agent `agent`."""
    return RedisHistoryMemory(provider, agent)


class LabRedis:
    """`provider` as the drift lab runs it (`workbench.drift.copies`): the same server, database and
    credentials (its own client), its keys under `prefix` before its own key prefix, so nothing it writes
    is one of the user's keys; `remove` deletes every list under the lab's prefix, reads the server again
    to verify none is left, and has the server rewrite its files (a deleted list stays in the append-only
    file until then)."""

    def __init__(self, provider: RedisHistoryProvider, prefix: str) -> None:
        self.provider = copy.copy(provider)  # shares the provider's client; its own key prefix
        self.provider.key_prefix = f"{prefix}{provider.key_prefix}"
        self.prefix = key_prefix(self.provider)
        self._lists = RedisLists(provider._redis_client, [self.prefix])
        location = display_url(provider.redis_url) if provider.redis_url else client_location(provider._redis_client)
        self.where = f"on {location}, under the lab's key prefix {self.prefix!r}; its lists removed afterwards"
        self._location = location

    async def remove(self) -> tuple[str, bool]:
        """What was removed, in a line, and whether it was verified (False: something may be left)."""
        under = f"the lab's keys under {self.prefix!r} on {self._location}"
        try:
            deleted = await self._lists.remove()
            left = await self._lists.read()
        except (RedisError, OSError) as exc:
            return (f"{under}: NOT verified removed ({type(exc).__name__}: {exc}); remove them yourself", False)
        if left:
            keys = ", ".join(stored.key for stored in left)
            return (f"{under}: {len(left):,} still there ({keys}); remove them yourself", False)
        try:
            rewritten = await rewrite_persistence(self._lists.client)
        except (PersistenceNotRewritten, RedisError, OSError) as exc:
            return (
                f"{under}: {deleted:,} list(s) deleted, none left (read again); but the server's files may still "
                f"hold them: {exc}",
                False,
            )
        files = f"; the server's {' and '.join(rewritten)} rewritten" if rewritten else ""
        return (f"{under}: {deleted:,} list(s) deleted, none left (read again){files}", True)
