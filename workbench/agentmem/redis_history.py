"""A `RedisHistoryProvider` on a loaded agent (seed 002's Redis message store) as a memory the
workbench shows and forgets: every session list the provider keeps on its server, read there, and a
forget that deletes each list holding a value and then has the server rewrite its files
(`workbench.agentmem.redis_server`). The provider stays on the agent as its owner configured it; this
adds no provider of its own."""

from __future__ import annotations

from typing import TYPE_CHECKING

from workbench.agentmem.base import OnTheirAgents
from workbench.agentmem.redis_server import UNIT, RedisLists, client_location, display_url, server_item
from workbench.memory.forget import ForgetPlan
from workbench.runtime.remembered import HeldItem

if TYPE_CHECKING:
    from agent_framework_redis import RedisHistoryProvider

    from workbench.runtime.memories import AgentMemory

_PROBE = "probe-session"  # a session id the provider writes literally into its key (checked)


def key_prefix(provider: RedisHistoryProvider) -> str:
    """What every key of `provider`'s sessions starts with: its key for a probe session, the probe cut
    off (the provider has no public name for its keys; `_redis_key` is the one it uses itself)."""
    key = provider._redis_key(_PROBE)
    if not key.endswith(_PROBE):
        raise ValueError(f"this RedisHistoryProvider writes keys this version does not know ({key!r})")
    return key.removesuffix(_PROBE)


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

    async def forget(self, plan: ForgetPlan) -> int:
        return await self._lists.forget(plan)

    @property
    def also_done(self) -> str | None:
        """The server's files its last forget rewrote, said apart from the lists it deleted."""
        return self._lists.also_done


def redis_history_memory(provider: RedisHistoryProvider, agent: str) -> AgentMemory:
    """The memory the recogniser registers for a `RedisHistoryProvider` found on the agent `agent`."""
    return RedisHistoryMemory(provider, agent)
