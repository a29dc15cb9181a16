"""Two agents on the built-in model, each with a recall provider over one store."""

from __future__ import annotations

from dataclasses import dataclass, field

from agent_framework import Agent, AgentSession, InMemoryHistoryProvider, Message

from workbench.recall.embedders import Embedder, lexical_embedder
from workbench.recall.provider import Recalled, RecallProvider, SearchBehavior
from workbench.recall.records import RecallScope
from workbench.recall.store import RecallStore
from workbench.runtime.scripted import ScriptedChatClient

USER = RecallScope(application_id="workbench", user_id="ana")


@dataclass
class Seat:
    agent: Agent
    provider: RecallProvider
    session: AgentSession
    recalled: list[list[Recalled]] = field(default_factory=list)

    async def say(self, text: str) -> str:
        response = await self.agent.run(Message(role="user", contents=[text]), session=self.session)
        return response.text or ""


def seat(
    store: RecallStore,
    name: str,
    *,
    search: RecallScope = USER,
    behavior: SearchBehavior = SearchBehavior.BEFORE_RUN,
    embedder: Embedder | None = None,
) -> Seat:
    recalled: list[list[Recalled]] = []
    provider = RecallProvider(
        store,
        embedder or lexical_embedder(),
        storage_scope=RecallScope("workbench", name, "ana", None),
        search_scope=search,
        behavior=behavior,
        on_recall=lambda session, found: recalled.append(found),
    )
    agent = Agent(
        ScriptedChatClient(),
        f"You are the {name} agent.",
        name=name,
        context_providers=[InMemoryHistoryProvider(), provider],
    )
    return Seat(agent, provider, agent.create_session(), recalled)
