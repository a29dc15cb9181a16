"""Where the agents' histories live: the one seam between the runtime and any history store.

The runtime asks a `Histories` for each agent's history provider, for the agent session it starts
with, for the messages an agent session holds, and for what it holds (for "What is remembered"); it says when
its agent sessions change (a new or replaced one, a finished turn: `current`). `InMemoryHistories` is the
default: the framework's `InMemoryHistoryProvider`, whose messages live in the session's state and
are gone on exit. A store on disk or on a server implements the same calls (`--persist DIR`:
`workbench.persist.sessions.PersistedSessions`; `--persist redis://`:
`workbench.persist.redis_histories.RedisHistories`), and the runtime stays free of paths and connections."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Protocol

from agent_framework import Agent, AgentSession, HistoryProvider, InMemoryHistoryProvider, Message

from workbench.runtime.holders import AGENT_SESSIONS
from workbench.runtime.remembered import HeldItem, history_text
from workbench.runtime.view import Persisted


class Histories(Protocol):
    @property
    def name(self) -> str:
        """What "What is remembered" calls them."""
        ...

    @property
    def persisted(self) -> Persisted | None:
        """Where the histories are kept beyond this process, for the header; None when they are not."""
        ...

    def provider(self, agent: str) -> HistoryProvider:
        """The history provider for a new agent named `agent` (the one that loads its messages)."""
        ...

    def first_session(self, agent: str, built: Agent, shape: str) -> AgentSession:
        """The session `agent` starts with when the runtime is built: a resumed one, or a new one.
        `shape` names what shapes a history (mode, recall): one saved under another is not resumed,
        as switching either in a running app starts new sessions (a store on disk keeps it for a start
        with its shape: `workbench.persist.sessions`)."""
        ...

    def messages(self, agent: str, session: AgentSession) -> list[Message]:
        """The messages `session` of `agent` holds now, oldest first."""
        ...

    def current(self, agent_sessions: Mapping[str, AgentSession], shape: str) -> None:
        """The agents' current sessions, after any of them changed or a turn ended, and their shape.
        Whatever belonged only to a session not in `agent_sessions` is no longer read by anyone."""
        ...

    async def held(self, agent_sessions: Mapping[str, AgentSession]) -> list[HeldItem]:
        """What it holds now, with the agents' current `agent_sessions`: their histories, or its files."""
        ...


class InMemoryHistories:
    """Histories in the sessions' state, gone on exit (the framework's default)."""

    name = AGENT_SESSIONS
    persisted = None

    def provider(self, agent: str) -> HistoryProvider:
        return InMemoryHistoryProvider()

    def first_session(self, agent: str, built: Agent, shape: str) -> AgentSession:
        return built.create_session()

    def messages(self, agent: str, session: AgentSession) -> list[Message]:
        state = session.state.get(InMemoryHistoryProvider.DEFAULT_SOURCE_ID, {})
        return list(state.get("messages", []))

    def current(self, agent_sessions: Mapping[str, AgentSession], shape: str) -> None:
        return None

    async def held(self, agent_sessions: Mapping[str, AgentSession]) -> list[HeldItem]:
        held = []
        for agent, session in agent_sessions.items():
            messages = self.messages(agent, session)
            what = f"the {agent} agent's current session: {len(messages):,} message(s)"
            held.append(HeldItem("history", agent, what, history_text(messages)))
        return held
