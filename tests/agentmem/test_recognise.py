"""The memories on the user's own agents, recognised by their providers' classes: each real Agent
Framework provider on a real `Agent` on the built-in model, run through the one assembly with the
agents loaded; shown in "What is remembered" and forgotten with no byte left (a raw scan of every file
under the provider's folder for the value as typed and as JSON writes it). A provider the workbench
does not know is listed, named in the forget's question, and reported not reached, without keeping
the forget's journal open."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from agent_framework import (
    Agent,
    AgentSession,
    ContextProvider,
    FileHistoryProvider,
    FileMemoryProvider,
    FileSystemAgentFileStore,
    InMemoryHistoryProvider,
    MemoryContextProvider,
    MemoryFileStore,
    Message,
    SessionContext,
)

from workbench import ScriptedChatClient
from workbench.agentmem.extracted import retiring
from workbench.agentmem.recognise import recognise
from workbench.memory.forget import written
from workbench.runtime import build_models
from workbench.runtime.agents import AgentRuntime
from workbench.runtime.config import Mode, ModelConfig, WriterKind
from workbench.runtime.provider import WorkingMemoryProvider
from workbench.session.assemble import assemble
from workbench.session.controller import SessionController

# A value JSON writes escaped (ensure_ascii) as well as raw: both forms must go.
VALUE = 'Zoë "North" Ltd'


def traces(root: Path, value: str = VALUE) -> list[str]:
    """Every file under `root` whose bytes or name hold `value` as typed or as JSON writes it."""
    needles = {form.encode() for form in written(value)}
    return sorted(
        str(p.relative_to(root))
        for p in root.rglob("*")
        if any(n in p.name.encode() or (p.is_file() and n in p.read_bytes()) for n in needles)
    )


def session_over(*agents: Agent) -> SessionController:
    return assemble(
        build_models(ModelConfig()),
        agents=agents,
        mode=Mode.PROVIDER,
        writer=WriterKind.HOST,
    )


async def say(runtime: AgentRuntime, agent: str, *texts: str) -> None:
    for text in texts:
        result = await runtime.ask(agent, text)
        assert result.ok, result.error


async def system(runtime: AgentRuntime, name: str) -> Any:
    (found,) = [s for s in (await runtime.remembered()).systems if s.name == name]
    return found


@pytest.mark.parametrize("serialization", ["json", "msgpack"])
def test_a_file_history_is_listed_and_its_messages_holding_the_value_are_gone(tmp_path, serialization):
    history = FileHistoryProvider(tmp_path / "history", serialization_format=serialization)
    earlier_file = f"earlier-run.{'jsonl' if serialization == 'json' else 'msgpack'}"
    triage = Agent(ScriptedChatClient(), "You sort problems.", name="triage", context_providers=[history])
    session = session_over(triage)
    runtime = session.runtime
    assert runtime.forgetting.holders.count("triage: FileHistoryProvider") == 1

    async def story() -> None:
        earlier = [Message(role="user", contents=["the customer is\ncustomer=Fabrikam"])]  # an earlier run's
        await history.save_messages("earlier-run", earlier)
        await say(runtime, "triage", f"customer={VALUE}; module=Billing", "priority=P1")
        assert await runtime.forgetting.plan("customer") == runtime.memory.plan("customer", {VALUE, "Fabrikam"})
        assert traces(tmp_path, "Fabrikam") == [f"history/{earlier_file}"]
        listed = await system(runtime, "triage: FileHistoryProvider")
        assert listed.location == str((tmp_path / "history").resolve())
        [item] = [i for i in listed.items if i.name != earlier_file]
        assert item.kind == "history" and "customer" in item.keys and "4 message(s)" in item.description
        assert "priority=P1" in item.content and VALUE in item.content
        assert traces(tmp_path) and (await session.forget_preview(["customer"])).unreached == ()
        (tmp_path / "history" / f"{earlier_file}.partial").write_text(VALUE)  # a rewrite a crash cut short

        report = await runtime.forget("customer")
        assert report.removed["triage: FileHistoryProvider"] == 2 and not report.failures and not report.unreached
        assert traces(tmp_path) == traces(tmp_path, "Fabrikam") == []
        (left,) = (await system(runtime, "triage: FileHistoryProvider")).items
        assert "priority=P1" in left.content and "customer" not in left.keys  # the other messages stay

        await say(runtime, "triage", "module=Reporting")  # a new session: a file of its own
        report = await runtime.forget(None)
        assert report.removed["triage: FileHistoryProvider"] == 2
        assert list((tmp_path / "history").iterdir()) == []

    asyncio.run(story())


def test_memory_files_in_a_scope_or_per_session_are_listed_and_forgotten(tmp_path):
    scoped = FileMemoryProvider(FileSystemAgentFileStore(tmp_path / "notes"), scope="Team North")  # encoded folder
    notes = Agent(ScriptedChatClient(uses_tools=True), "You keep notes.", name="notes", context_providers=[scoped])
    per_session = FileMemoryProvider(FileSystemAgentFileStore(tmp_path / "desk"))
    desk = Agent(ScriptedChatClient(uses_tools=True), "You keep notes.", name="desk", context_providers=[per_session])
    runtime = session_over(notes, desk).runtime

    async def story() -> None:
        await say(runtime, "notes", f"customer={VALUE}", "module=Billing")
        await say(runtime, "desk", f"customer={VALUE}")
        [folder] = [p for p in (tmp_path / "notes").iterdir() if p.is_dir()]
        assert folder.name.startswith("~scope-")  # the framework's encoding of a scope that is no plain name
        assert traces(tmp_path / "notes") == [f"{folder.name}/customer.md"]
        items = {i.name: i for i in (await system(runtime, "notes: FileMemoryProvider")).items}
        assert items[f"{folder.name}/customer.md"].keys == ("customer",)
        assert items[f"{folder.name}/module.md"].content == "module=Billing"
        desk_items = (await system(runtime, "desk: FileMemoryProvider")).items
        assert any(i.name.endswith("/customer.md") for i in desk_items)  # the session's own folder

        report = await runtime.forget("customer")
        assert report.removed == {**report.removed, "notes: FileMemoryProvider": 1, "desk: FileMemoryProvider": 1}
        assert traces(tmp_path) == []
        assert (folder / "module.md").read_text() == "module=Billing"
        assert (folder / "customer.md").read_text() == "customer=(forgotten)"  # rewritten, as the workbench's own
        # What the forget left holds no key's value: F3 says so, and a second forget rewrites nothing.
        after = {i.name: i for i in (await system(runtime, "notes: FileMemoryProvider")).items}
        assert after[f"{folder.name}/customer.md"].keys == ()
        again = await runtime.forget("customer")
        assert again.removed["notes: FileMemoryProvider"] == 0 and again.removed["desk: FileMemoryProvider"] == 0
        assert (folder / "customer.md").read_text() == "customer=(forgotten)"

    asyncio.run(story())


with retiring():  # the framework warns that it retires these classes: the workbench says so in its docs

    class OwnedMemory(MemoryContextProvider):
        """A user's extracted memory: the framework's provider, with the owner its author's app sets."""

        owner = "ana"

        async def before_run(self, *, agent: Any, session: AgentSession, context: SessionContext, state: Any) -> None:
            session.state["owner"] = self.owner
            await super().before_run(agent=agent, session=session, context=context, state=state)


def owners_store(root: Path) -> MemoryFileStore:
    with retiring():
        return MemoryFileStore(root, owner_state_key="owner")


def test_extracted_memory_of_each_owner_is_listed_and_forgotten(tmp_path):
    store = owners_store(tmp_path / "memory")
    coach = Agent(ScriptedChatClient(), "You coach.", name="coach", context_providers=[OwnedMemory(store=store)])
    runtime = session_over(coach).runtime

    async def story() -> None:
        await say(runtime, "coach", f"customer={VALUE}; module=Billing", "version=12.4")
        held = traces(tmp_path)
        assert any("/topics/" in name for name in held) and any("/transcripts/" in name for name in held)
        items = (await system(runtime, "coach: OwnedMemory")).items
        assert {i.name.split("/")[1] for i in items} == {"ana"}  # under the provider's source: the owner's folder
        assert any("customer" in i.keys for i in items if i.kind == "topic")

        report = await runtime.forget("customer")
        assert report.removed["coach: OwnedMemory"] >= 2 and not report.failures
        assert traces(tmp_path) == []
        assert any("version=12.4" in p.read_text() for p in (tmp_path / "memory").rglob("*.jsonl"))

    asyncio.run(story())


def test_an_owner_the_framework_names_by_a_digest_is_said_not_reached_and_the_others_are_forgotten(tmp_path):
    store = owners_store(tmp_path / "memory")
    spelled, hashed = OwnedMemory(store=store), OwnedMemory(store=store)
    spelled.owner, hashed.owner = "Ana Smith", "X" * 200  # base32-encoded; too long: a digest
    first = Agent(ScriptedChatClient(), "You coach.", name="first", context_providers=[spelled])
    second = Agent(ScriptedChatClient(), "You coach.", name="second", context_providers=[hashed])
    session = session_over(first, second)
    runtime = session.runtime
    assert [m.name for m in runtime.memories] == ["first, second: OwnedMemory"]  # one store, one memory

    async def story() -> None:
        await say(runtime, "first", f"customer={VALUE}")
        await say(runtime, "second", f"customer={VALUE}")
        preview = await session.forget_preview(["customer"])
        assert preview.unreached == ("first, second: OwnedMemory",)
        report = await runtime.forget("customer")
        why = report.unreached["first, second: OwnedMemory"]
        assert why.startswith("2 file(s) of the others deleted or rewritten; 1 folder(s) whose owner")
        assert not report.failures
        left = traces(tmp_path)  # the digest owner's only
        assert left and all(name.startswith("memory/memory/~memory-sha256-") for name in left)

    asyncio.run(story())


def test_the_workbench_recall_provider_on_a_users_agent_is_reached_on_disk(tmp_path):
    from workbench.recall.duckdb_file import DuckDBBackend
    from workbench.recall.embedders import lexical_embedder
    from workbench.recall.provider import RecallProvider
    from workbench.recall.records import RecallScope
    from workbench.recall.store import RecallStore

    store = RecallStore(DuckDBBackend(tmp_path / "recall" / "recall.duckdb"))
    recall = RecallProvider(
        store,
        lexical_embedder(),
        storage_scope=RecallScope("app", "helper", "ana", None),
        search_scope=RecallScope("app", None, "ana", None),
    )
    helper = Agent(ScriptedChatClient(), "You help.", name="helper", context_providers=[recall])
    runtime = session_over(helper).runtime

    async def story() -> None:
        await say(runtime, "helper", f"customer={VALUE}; module=Billing", "priority=P1")
        (item,) = (await system(runtime, "helper: RecallProvider")).items
        assert "customer" in item.keys and "priority=P1" in item.content
        report = await runtime.forget("customer")
        assert report.removed["helper: RecallProvider"] >= 2 and not report.failures  # the question, replies quoting it
        assert traces(tmp_path) == []
        assert "priority=P1" in (await system(runtime, "helper: RecallProvider")).items[0].content
        await store.close()

    asyncio.run(story())


class Topics(ContextProvider):
    """A provider the workbench does not know: it keeps what it was told in a file of its own."""

    def __init__(self, path: Path) -> None:
        super().__init__("topics")
        self.path = path

    async def after_run(self, *, agent: Any, session: AgentSession, context: SessionContext, state: Any) -> None:
        with self.path.open("a", encoding="utf-8") as file:
            file.writelines(f"{m.text}\n" for m in context.input_messages)


def test_an_unknown_provider_is_read_in_the_process_and_what_it_keeps_outside_is_named_not_known(tmp_path):
    """Its attributes and session state are looked at (nothing there holds the value: it writes a file
    of its own); F3 says so after looking, the question and the report name what it keeps outside the
    process as not known, and the forget is no failure: the journal does not stay for ever."""
    from workbench.persist.journal import ForgetJournal
    from workbench.runtime.inprocess import OUTSIDE, InProcess

    unknown = Topics(tmp_path / "topics.txt")
    history = InMemoryHistoryProvider()
    agent = Agent(ScriptedChatClient(), "You help.", name="mine", context_providers=[history, unknown])
    journal = ForgetJournal(tmp_path / "forget.json", ("agents",))
    session = assemble(
        build_models(ModelConfig()),
        agents=[agent],
        writer=WriterKind.HOST,
        journal=journal,
    )
    runtime = session.runtime
    # The in-memory history is the agent sessions' holder's: no memory of its own.
    assert [h for h in runtime.forgetting.holders if h.startswith("mine")] == ["mine: Topics"]

    async def story() -> None:
        await say(runtime, "mine", f"customer={VALUE}")
        listed = await system(runtime, "mine: Topics")
        assert listed.location == InProcess.location and listed.keys == ()
        [looked] = listed.items
        assert looked.kind == "looked" and "no string there holds a value it knows" in looked.content
        assert OUTSIDE in looked.content
        preview = await session.forget_preview(["customer"])
        assert preview.unreached == ()
        assert "mine: Topics (in this process; what it keeps outside it is not known, and stays)" in preview.reaches

        report = await runtime.forget("customer")
        assert report.unreached == {} and not report.failures and report.outside == {"mine: Topics": OUTSIDE}
        assert report.removed["mine: Topics"] == 0
        assert "outside this process, not known: mine: Topics" in report.describe()
        assert journal.pending() is None  # not a failure: the next start does not forget again for ever
        assert runtime.history("mine") == []  # the in-memory history went with the session
        assert VALUE in (tmp_path / "topics.txt").read_text()  # outside the process, as it said

    asyncio.run(story())


def test_one_store_shared_by_two_agents_is_one_memory_and_the_workbenchs_providers_are_skipped(tmp_path):
    shared = FileHistoryProvider(tmp_path / "history")
    from workbench.agentmem.files import FileMemory
    from workbench.memory import WorkingMemory
    from workbench.runtime.updater import MemoryUpdater
    from workbench.runtime.writer import HostWriter

    memory = WorkingMemory()
    ours = WorkingMemoryProvider(memory, MemoryUpdater(memory, HostWriter()), origin="a")
    theirs = FileMemory(tmp_path / "files").providers("a")  # what `--agent-memory files` adds to an agent
    a = Agent(ScriptedChatClient(), "A.", name="a", context_providers=[shared, ours, *theirs])
    b = Agent(ScriptedChatClient(), "B.", name="b", context_providers=[FileHistoryProvider(tmp_path / "history")])
    c = Agent(ScriptedChatClient(), "C.", name="c", context_providers=[Topics(tmp_path / "1"), Topics(tmp_path / "2")])
    names = [m.name for m in recognise([a, b, c])]
    assert names == ["a, b: FileHistoryProvider", "c: Topics", "c: Topics (topics)"]


def test_mem0s_provider_is_listed_as_not_reached_saying_why(tmp_path):
    pytest.importorskip("mem0")
    from agent_framework_mem0 import Mem0ContextProvider

    provider = Mem0ContextProvider(source_id="mem0", mem0_client=object(), user_id="ana")
    agent = Agent(ScriptedChatClient(), "You help.", name="mine", context_providers=[provider])
    (memory,) = recognise([agent])
    assert memory.name == "mine: Mem0ContextProvider" and "--agent-memory mem0" in memory.describe()
    assert memory.describe().endswith("forget cannot reach this")


EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "agents"


@pytest.fixture
def examples(monkeypatch, tmp_path):
    import sys

    from workbench.loading import from_folder

    before = set(sys.modules)
    monkeypatch.setenv("EXAMPLE_AGENTS_DATA", str(tmp_path))
    yield [loaded.agent for loaded in from_folder(EXAMPLES)]
    for name in set(sys.modules) - before:
        del sys.modules[name]


def test_the_example_agents_memories_keep_a_corrected_value_until_it_is_forgotten(examples, tmp_path):
    """The built-in story on the example agents: a correction leaves the old value in both memories
    (F3 flags it), a forget of the key leaves no byte of either value, a forget of everything no file."""
    session = session_over(*examples)
    runtime = session.runtime
    assert [m.name for m in recognise(examples)] == ["notes: FileMemoryProvider", "triage: FileHistoryProvider"]

    async def story() -> None:
        await say(runtime, "triage", "module=Reporting; database=PostgreSQL")
        await say(runtime, "notes", "module=Reporting")
        await say(runtime, "notes", "module=Billing")  # the correction
        await say(runtime, "triage", "module=Billing")
        remembered = await runtime.remembered()
        assert remembered.corrected == ("Reporting",)
        stale = {s.name: [i.name for i in s.items if i.stale] for s in remembered.systems}
        assert stale["triage: FileHistoryProvider"]  # its session file still holds Reporting
        assert traces(tmp_path, "Reporting") and (tmp_path / "notes-memory" / "user" / "module.md").exists()

        report = await runtime.forget("module")
        assert set(report.removed) >= {"notes: FileMemoryProvider", "triage: FileHistoryProvider"}
        assert traces(tmp_path, "Reporting") == traces(tmp_path, "Billing") == []
        assert traces(tmp_path, "PostgreSQL") == []  # declared in the message that held a forgotten value

        await runtime.forget(None)
        assert [p for p in tmp_path.rglob("*") if p.is_file()] == []

    asyncio.run(story())
