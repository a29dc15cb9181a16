"""Two workbenches on one PostgreSQL store: each agent recalls what the other machine's agents were
told only when its search scope covers them."""

from __future__ import annotations

from agent_framework import Agent, InMemoryHistoryProvider, Message

from workbench.memory import WorkingMemory
from workbench.recall.embedders import lexical_embedder
from workbench.recall.postgres_store import PostgresBackend
from workbench.recall.provider import RecallProvider
from workbench.recall.records import RecallScope
from workbench.recall.setup import APPLICATION_ID, RecallSetup
from workbench.recall.store import RecallStore
from workbench.runtime.scripted import ScriptedChatClient


def workbench(conninfo: str, user: str) -> RecallSetup:
    """A workbench of its own (its own connection pool), on the shared store."""
    return RecallSetup(RecallStore(PostgresBackend(conninfo)), lexical_embedder(), user_id=user)


async def say(provider: RecallProvider, name: str, text: str) -> None:
    agent = Agent(
        ScriptedChatClient(),
        f"You are the {name} agent.",
        name=name,
        context_providers=[InMemoryHistoryProvider(), provider],
    )
    await agent.run(Message(role="user", contents=[text]), session=agent.create_session())


async def test_the_logs_agent_of_one_workbench_recalls_what_another_was_told_only_within_its_search_scope(
    postgres_database: str,
) -> None:
    desk, laptop, bob = (workbench(postgres_database, user) for user in ("ana", "ana", "bob"))
    try:
        await say(desk.provider("support"), "support", "database=PostgreSQL")

        await say(laptop.provider("logs"), "logs", "Which database?")
        assert "database=PostgreSQL" in [r.text for r in laptop.recalled_by["logs"][1]]  # same user: found

        await say(bob.provider("logs"), "logs", "Which database?")
        assert bob.recalled_by["logs"][1] == []  # another user: out of scope

        own_agent_only = RecallProvider(
            laptop.store,
            laptop.embedder,
            storage_scope=RecallScope(APPLICATION_ID, "logs", "ana"),
            search_scope=RecallScope(APPLICATION_ID, "logs", "ana"),
        )
        found = await own_agent_only.search("Which database?")  # the laptop's logs agent asked it
        assert found and {r.scope.agent_id for r in found} == {"logs"}  # the support agent's: out of scope
        assert "database=PostgreSQL" not in [r.text for r in found]

        deleted = await bob.erase(WorkingMemory().plan(None))  # bob forgets everything of his: ana's stay
        assert deleted == 2
        ana = sorted(r.text for r in await desk.store.records(desk.search_scope) if r.role == "user")
        assert ana == ["Which database?", "database=PostgreSQL"]
    finally:
        for setup in (desk, laptop, bob):
            await setup.store.close()
