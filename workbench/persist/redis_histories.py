"""`workbench --persist redis://…`: the built-in agents' histories on a Redis server, through the
framework's `RedisHistoryProvider` (one per agent: application `workbench`, the agent's name as its
id, one list per session), while the facts, the ledger and each agent's session (its id, which names
its list) stay in the data directory with `PersistedSessions`. A restart resumes the saved sessions,
whose lists are still on the server.

It is the runtime's `Histories` and a holder of the one forget, registered just before the persisted
sessions (`workbench.session.assemble`): the agents' sessions holder has replaced both sessions by then,
and their lists were deleted when the runtime said which it keeps; this deletes any other list of the
workbench's that holds a value, then has the server rewrite its files (`redis_server`)."""

from __future__ import annotations

import threading
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

import redis
import redis.asyncio as aioredis
from agent_framework import Agent, AgentSession, HistoryProvider, Message
from agent_framework_redis import RedisHistoryProvider

from workbench.agentmem.redis_server import (
    CONNECT_TIMEOUT,
    UNIT,
    RedisLists,
    StoredList,
    display_url,
    key_prefix,
    server_item,
)
from workbench.memory.forget import ForgetPlan
from workbench.persist.sessions import RESUMED_BY, PersistedSessions
from workbench.runtime.agents import AGENT_NAMES
from workbench.runtime.remembered import HeldItem
from workbench.runtime.view import Persisted
from workbench.text import clip

APPLICATION = "workbench"  # the provider's application id: the workbench's lists on a shared server
_FAILURE_CHARS = 200


class CurrentSessionsOnly(RedisHistoryProvider):
    """Stores a turn's messages only for a session an agent still runs: a turn that was running when a
    forget replaced its session stores nothing (its list was deleted, and nobody would read it)."""

    def __init__(self, owner: RedisHistories, url: str, agent: str) -> None:
        super().__init__(redis_url=url, application_id=APPLICATION, agent_id=agent)
        self._owner = owner

    async def save_messages(
        self, session_id: str | None, messages: Sequence[Message], *, state: dict[str, Any] | None = None, **kwargs: Any
    ) -> None:
        if session_id is not None and session_id in self._owner.current_ids:
            await super().save_messages(session_id, messages, state=state, **kwargs)


class RedisHistories:
    """Both agents' histories on the server at `url`; `persisted_sessions` keeps everything else (the
    facts, the ledger, each agent's session) in the data directory."""

    unit = UNIT

    def __init__(self, persisted: PersistedSessions, url: str, agents: Sequence[str] = AGENT_NAMES) -> None:
        self.persisted_sessions = persisted
        self.location = display_url(url)
        self.name = f"agent sessions on {self.location}"
        self._providers = {agent: CurrentSessionsOnly(self, url, agent) for agent in agents}
        # The runtime's calls that are not async (a session's messages, which sessions it keeps) use a
        # client of their own; a forget and "What is remembered" use an asyncio one.
        self._client = redis.Redis.from_url(
            url, decode_responses=True, socket_connect_timeout=CONNECT_TIMEOUT, socket_timeout=CONNECT_TIMEOUT
        )
        client = aioredis.Redis.from_url(url, decode_responses=True, socket_connect_timeout=CONNECT_TIMEOUT)
        self._lists = RedisLists(client, [key_prefix(p) for p in self._providers.values()])
        _, saved = persisted.state.sessions()
        self._lock = threading.Lock()
        self._current = {agent: str(s["session_id"]) for agent, s in saved.items() if agent in self._providers}
        self._resumed = 0
        self._stale: set[str] = set()  # lists of sessions no agent runs, not deleted yet (the server failed)
        self._failure: str | None = None
        # A session saved under another shape (mode, recall) is kept, not resumed, while its list holds
        # messages: the persisted sessions ask the server (a start with other options deleted the lists).
        persisted.counted_by(self._count)

    def _count(self, agent: str, session_id: str) -> int:
        """The messages the list of `agent`'s session `session_id` holds (none: an agent it keeps no list of)."""
        if agent not in self._providers:
            return 0
        return int(self._client.llen(self._key(agent, session_id)))  # type: ignore[arg-type]

    def _kept_keys(self) -> set[str]:
        """The lists of the sessions saved under another shape, kept, not resumed."""
        return {self._key(a, s) for a, s in self.persisted_sessions.kept_elsewhere() if a in self._providers}

    @property
    def current_ids(self) -> frozenset[str]:
        with self._lock:
            return frozenset(self._current.values())

    def _key(self, agent: str, session_id: str) -> str:
        return self._providers[agent]._redis_key(session_id)

    # -- the runtime's Histories -------------------------------------------------------------

    @property
    def persisted(self) -> Persisted:
        saved = self.persisted_sessions.persisted
        with self._lock:
            failure = self._failure or saved.failure
            return replace(
                saved,
                directory=f"{saved.directory}; the histories: {self.location}",
                messages=self._resumed,
                failure=failure,
            )

    def provider(self, agent: str) -> HistoryProvider:
        return self._providers[agent]

    def first_session(self, agent: str, built: Agent, shape: str) -> AgentSession:
        session = self.persisted_sessions.first_session(agent, built, shape)
        count = int(self._client.llen(self._key(agent, session.session_id)))  # type: ignore[arg-type]
        with self._lock:
            self._resumed += count
        return session

    def messages(self, agent: str, session: AgentSession) -> list[Message]:
        items: list[str] = self._client.lrange(self._key(agent, session.session_id), 0, -1)  # type: ignore[assignment]
        return StoredList("", tuple(items)).messages()

    def current(self, agent_sessions: Mapping[str, AgentSession], shape: str) -> None:
        """Save the agent sessions (and memory) in the data directory, and delete the list of every session
        an agent no longer runs. A server that cannot be reached is shown in the header, not raised into
        the turn that ended; the next change deletes what this one could not."""
        self.persisted_sessions.current(agent_sessions, shape)
        with self._lock:
            running = {a: s.session_id for a, s in agent_sessions.items()}
            gone = {self._key(a, s) for a, s in self._current.items() if a in running and running[a] != s}
            gone -= self._kept_keys()
            self._current = {**self._current, **running}
            self._stale |= gone
            stale = sorted(self._stale)
        try:
            if stale:
                self._client.delete(*stale)
        except redis.RedisError as exc:
            with self._lock:
                self._failure = clip(f"Redis at {self.location}: {type(exc).__name__}: {exc}", _FAILURE_CHARS)
            return
        with self._lock:
            self._stale -= set(stale)
            self._failure = None

    async def held(self, agent_sessions: Mapping[str, AgentSession]) -> list[HeldItem]:
        """Each list of the workbench's on the server (the agents' current sessions first), the server
        itself, then the files of the data directory."""
        current = {self._key(a, s.session_id): a for a, s in agent_sessions.items() if a in self._providers}
        stored = {s.key: s for s in await self._lists.read()}
        # An agent's session that stored nothing yet has no list: listed all the same, empty.
        lists = [
            stored.pop(key, StoredList(key, ())).held(f"the {agent} agent's history") for key, agent in current.items()
        ]
        kept = {
            self._key(a, s): (a, shape) for a, s, shape in self.persisted_sessions.kept_shapes() if a in self._providers
        }
        for key, s in stored.items():
            if key in kept:
                agent, shape = kept[key]
                lists.append(
                    s.held(f"the {agent} agent's history saved under {shape}, kept, not resumed ({RESUMED_BY})")
                )
            else:
                lists.append(s.held("a history no agent reads"))
        files = [item for item in await self.persisted_sessions.held(agent_sessions) if item.kind == "file"]
        return [*lists, server_item(self.location), *files]

    # -- a holder of the one forget ----------------------------------------------------------

    async def declared(self, keys: frozenset[str]) -> set[str]:
        return await self._lists.declared(keys)

    async def erase(self, plan: ForgetPlan) -> int:
        """Every list that holds a forgotten value; in a forget of everything, the lists of the sessions
        kept under another shape too (the persisted sessions, next, drop them all)."""
        kept = sorted(self._kept_keys()) if plan.everything else []
        if kept:
            await self._lists.client.delete(*kept)
        return await self._lists.erase(plan) + len(kept)

    @property
    def also_done(self) -> str | None:
        """The server's files its last forget rewrote, said apart from the lists it deleted."""
        return self._lists.also_done

    async def aclose(self) -> None:
        """Every connection it opened: its own client's, each agent's provider's and the lists' (asyncio
        ones, closed in the loop that used them: left to the garbage collector, each warns unclosed)."""
        self._client.close()
        for provider in self._providers.values():
            await provider.aclose()
        await self._lists.client.aclose()
