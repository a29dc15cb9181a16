"""What is remembered, without Textual: each memory system the runtime runs, on real files in a
temporary directory, with the keys each item holds worked out as the one forget plans them."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.agentmem.helpers import live_runtime, say, scripted_runtime
from tests.support.openai_server import memory_file_writer
from tests.support.recall_files import UNREADABLE, earlier_recall, unreadable
from workbench.agentmem.extracted import ExtractedMemory
from workbench.agentmem.files import FileMemory
from workbench.persist.sessions import PersistedSessions
from workbench.persist.state import STATE_FILE
from workbench.recall.config import DeferredRecall, RecallConfig
from workbench.recall.setup import RecallSetup
from workbench.runtime import CallLog, ModelConfig, WriterKind, build_models
from workbench.runtime.agents import AgentRuntime
from workbench.runtime.remembered import HeldItem, Remembered, RememberedSystem, describe_size
from workbench.session.assemble import assemble

SEED = "module=Reporting; database=PostgreSQL"
CORRECTION = "module=Billing; database=SQL Server 2022"


def system(remembered: Remembered, name: str) -> RememberedSystem:
    (found,) = [s for s in remembered.systems if s.name == name]
    return found


def items(found: RememberedSystem) -> dict[str, HeldItem]:
    return {item.name: item for item in found.items}


async def test_facts_only_lists_the_facts_the_ledger_and_this_runs_histories():
    runtime = scripted_runtime_without_memories()
    await say(runtime, SEED, CORRECTION)
    await say(runtime, "customer=Contoso", agent="logs")

    remembered = await runtime.remembered()
    assert [s.name for s in remembered.systems] == ["working memory", "agent sessions"]
    facts = system(remembered, "working memory")
    assert facts.location is None and facts.size is None  # in this process only
    held = items(facts)
    assert [(i.kind, i.content, i.keys) for n, i in held.items() if n != "ledger"] == [
        ("fact", "SQL Server 2022", ("database",)),  # oldest first, as the store keeps them
        ("fact", "Billing", ("module",)),
        ("fact", "Contoso", ("customer",)),
    ]
    assert 'quoting "module=Billing"' in held["module"].description
    # The ledger keeps the replaced values: it is flagged as still holding them.
    assert held["ledger"].keys == ("customer", "database", "module")
    assert held["ledger"].stale == ("PostgreSQL", "Reporting")
    assert remembered.corrected == ("PostgreSQL", "Reporting")
    assert remembered.values["module"] == ("Billing", "Reporting")

    sessions = items(system(remembered, "agent sessions"))
    assert sessions["support"].keys == ("database", "module") and sessions["support"].stale == (
        "PostgreSQL",
        "Reporting",
    )
    assert sessions["logs"].keys == ("customer", "database", "module")  # manual mode: each message carries the facts
    assert (
        sessions["logs"].content.startswith("user:\n<working-memory>") and "\nassistant:\n" in sessions["logs"].content
    )
    assert set(remembered.others) == {
        "call log",
        "transcript",
        "turns in flight",
        "input undo",
    }  # reached by a forget, no memory of the agents


async def test_after_a_forget_no_item_holds_the_key_and_no_value_is_left():
    runtime = scripted_runtime_without_memories()
    await say(runtime, SEED, CORRECTION)
    await runtime.forget("module")
    remembered = await runtime.remembered()
    assert "module" not in remembered.values
    assert all("module" not in item.keys for s in remembered.systems for item in s.items)
    assert "Reporting" not in repr(remembered) and "Billing" not in repr(remembered)


async def test_an_items_turn_message_count_or_time_is_no_value_it_holds():
    """The workbench's own words about an item (a fact's turn and time, a history's message count) are
    not text it holds: with `version=2`, the fact `module` from turn 2 and a session of 2 messages that
    never mention it hold no version, so forgetting what they hold does not take the version too."""
    runtime = scripted_runtime_without_memories()
    await say(runtime, "Hello", agent="logs")
    await say(runtime, "module=Billing")
    await say(runtime, "version=2", agent="logs")

    remembered = await runtime.remembered()
    held = items(system(remembered, "working memory"))
    assert held["module"].description.startswith("turn 2, ")
    assert held["module"].keys == ("module",) and held["version"].keys == ("version",)
    support = items(system(remembered, "agent sessions"))["support"]
    assert support.description.endswith(": 2 message(s)") and "version" not in support.content
    assert support.keys == ("module",)


@pytest.fixture
async def duckdb_recall(tmp_path):
    """Recall setups on one DuckDB file in `tmp_path`, each closed at the end (an open DuckDB store
    keeps the process umask strict, which other tests check)."""
    opened: list[RecallSetup] = []

    def build(calls: CallLog | None = None) -> RecallSetup:
        opened.append(RecallConfig(store=str(tmp_path / "recall.duckdb")).build(calls))
        return opened[-1]

    yield build
    for setup in opened:
        await setup.store.close()


async def test_recall_on_a_duckdb_file_shows_its_count_location_and_size(tmp_path, duckdb_recall):
    calls = CallLog()
    runtime = assemble(
        build_models(ModelConfig()), writer=WriterKind.HOST, calls=calls, recall=duckdb_recall(calls), recall_on=True
    ).runtime
    remembered = await runtime.remembered()
    assert system(remembered, "recall store").items == ()  # on, nothing stored yet

    await say(runtime, SEED, "Which module?")
    recall = system(await runtime.remembered(), "recall store")
    assert recall.location == str((tmp_path / "recall.duckdb").resolve())
    (store,) = recall.items
    assert store.kind == "store" and store.description.startswith("4 stored message(s)")
    assert store.size == recall.size == sum(p.stat().st_size for p in tmp_path.glob("recall.duckdb*"))
    assert store.keys == ("database", "module")
    assert "recall store" not in (await runtime.remembered()).others


async def test_recall_off_still_lists_an_earlier_runs_store_which_a_forget_reaches(duckdb_recall, tmp_path):
    """A later start with recall off builds recall at its first use (`DeferredRecall`): the listing."""
    calls = CallLog()
    first = duckdb_recall(calls)
    runtime = assemble(
        build_models(ModelConfig()), calls=calls, recall=first, recall_on=True, writer=WriterKind.HOST
    ).runtime
    await say(runtime, "customer=Contoso")
    await first.store.close()

    deferred = RecallConfig(store=str(tmp_path / "recall.duckdb")).memory()
    assert isinstance(deferred, DeferredRecall)
    later = assemble(build_models(ModelConfig()), recall=deferred, recall_on=False).runtime
    try:
        recall = system(await later.remembered(), "recall store")
        assert recall.description.startswith("off (an earlier run's store)")
        assert recall.keys == ("customer",)  # this run's facts never knew it: the store's own text declares it
        await later.forget("customer")
        assert "recall store" not in [s.name for s in (await later.remembered()).systems]
    finally:
        await deferred.built.store.close()


async def test_recall_off_and_never_used_is_forgotten_by_its_first_use(tmp_path):
    """The forget is that first use: it reaches the earlier run's file without a listing before it."""
    path = tmp_path / "recall.duckdb"
    first = RecallConfig(store=str(path)).build(CallLog())
    runtime = assemble(build_models(ModelConfig()), recall=first, recall_on=True, writer=WriterKind.HOST).runtime
    await say(runtime, "customer=Contoso")
    await first.store.close()
    assert b"Contoso" in b"".join(p.read_bytes() for p in tmp_path.glob("recall.duckdb*"))

    deferred = RecallConfig(store=str(path)).memory()
    assert isinstance(deferred, DeferredRecall)
    later = assemble(build_models(ModelConfig()), recall=deferred, recall_on=False).runtime
    try:
        await later.forget("customer")
    finally:
        await deferred.built.store.close()
    assert b"Contoso" not in b"".join(p.read_bytes() for p in tmp_path.glob("recall.duckdb*"))


async def test_persisted_sessions_list_every_file_with_its_size_and_an_escaped_value(tmp_path):
    persisted = PersistedSessions(tmp_path / "sessions")
    runtime = assemble(build_models(ModelConfig()), persisted=persisted).runtime
    value = 'O"Brien \\ Sons'  # written escaped in every JSON file
    try:
        await say(runtime, f"customer={value}; module=Billing")
        await say(runtime, "Where are the logs?", agent="logs")
        remembered = await runtime.remembered()
        state = ["lock", STATE_FILE, f"{STATE_FILE}-wal", f"{STATE_FILE}-shm"]
        on_disk = {name: (tmp_path / "sessions" / name).stat().st_size for name in state}  # while it runs
    finally:
        persisted.close()

    assert [s.name for s in remembered.systems] == ["working memory", "persisted sessions"]
    found = system(remembered, "persisted sessions")
    assert found.location == str((tmp_path / "sessions").resolve())
    files = items(found)
    assert sorted(files) == sorted(["support", "logs", *state])
    assert {name: files[name].size for name in state} == on_disk and found.size == sum(on_disk.values())
    assert [files[a].description for a in ("support", "logs")] == [
        "the support agent's history: 2 message(s)",
        "the logs agent's history: 2 message(s)",
    ]
    on_file = {k for name in (STATE_FILE, f"{STATE_FILE}-wal") for k in files[name].keys}
    assert on_file == {"customer", "module"}  # the JSON-escaped value is found in the text of its bytes
    assert remembered.values["customer"] == (value,)
    support = files["support"]
    assert support.keys == ("customer", "module") and f"customer={value}; module=Billing" in support.content
    assert "resumed" in found.description or "persist" in found.description


async def test_memory_files_show_name_description_content_and_keys(loopback, tmp_path):
    loopback.state.responder = memory_file_writer(lambda key, value: f"{key}-{value}.md")
    memory = FileMemory(tmp_path)
    runtime = live_runtime(loopback.base_url, memory)
    await say(runtime, "module=Reporting", "module=Billing; customer=Contoso")

    found = system(await runtime.remembered(), "memory files")
    assert found.location == str(tmp_path / "local-user") and found.description.endswith("4 file(s)")
    files = items(found)
    assert [i.kind for i in files.values()] == ["memory file"] * 3 + ["index"]
    reporting = files["module-Reporting.md"]
    assert (reporting.description, reporting.content, reporting.keys) == (
        "the user's module",
        "module=Reporting",
        ("module",),
    )
    assert reporting.stale == ("Reporting",) and files["module-Billing.md"].stale == ()
    assert files["memories.md"].keys == ("customer", "module")
    assert found.size == sum((tmp_path / "local-user" / p).stat().st_size for p in _names(tmp_path / "local-user"))


async def test_a_memory_files_description_is_text_it_holds(tmp_path):
    """A memory file's description is the model's text, kept beside it: a value there is held."""
    memory = FileMemory(tmp_path)
    runtime = scripted_runtime(memory)
    await say(runtime, "customer=Contoso")
    memory.folder.mkdir(parents=True, exist_ok=True)
    (memory.folder / "notes.md").write_text("likes short answers")
    (memory.folder / "notes_description.md").write_text("preferences of Contoso's admin")

    notes = items(system(await runtime.remembered(), "memory files"))["notes.md"]
    assert notes.description == "preferences of Contoso's admin" and notes.keys == ("customer",)


def _names(folder: Path) -> list[str]:
    return [p.name for p in folder.iterdir()]


async def test_extracted_memory_shows_index_topics_and_transcripts_with_their_keys(tmp_path):
    memory = ExtractedMemory(tmp_path)
    runtime = scripted_runtime(memory)
    await say(runtime, SEED, CORRECTION, "customer=Contoso")

    found = system(await runtime.remembered(), "extracted memory")
    kinds = sorted({i.kind for i in found.items})
    assert kinds == ["index", "state", "topic", "transcript"] or kinds == ["index", "topic", "transcript"]
    files = items(found)
    assert files["topics/customer.md"].keys == ("customer",)
    assert files["topics/module.md"].stale == ("Reporting",)
    (transcript,) = [i for i in found.items if i.kind == "transcript"]
    assert transcript.keys == ("customer", "database", "module")


async def test_a_system_that_cannot_be_read_says_why_and_the_others_are_still_listed(tmp_path):
    class Broken(FileMemory):
        def files(self) -> list[HeldItem]:
            raise PermissionError(13, "Permission denied")

    runtime = scripted_runtime(Broken(tmp_path))
    await say(runtime, "module=Billing")
    remembered = await runtime.remembered()
    broken = system(remembered, "memory files")
    assert broken.items == () and broken.description.startswith("could not be read: PermissionError")
    assert items(system(remembered, "working memory"))["module"].keys == ("module",)


async def test_an_items_text_is_bounded():
    runtime = scripted_runtime_without_memories()
    await say(runtime, "symptom=slow", "x" * 4000)
    remembered = await runtime.remembered()
    support = items(system(remembered, "agent sessions"))["support"]
    assert len(support.content) == 4000 and "cut:" in support.content


@pytest.mark.parametrize(
    ("size", "shown"),
    [(0, "0 B"), (1023, "1,023 B"), (4200, "4.1 KiB"), (3 * 1024**2, "3.0 MiB")],
)
def test_sizes_read_as_a_person_reads_them(size, shown):
    assert describe_size(size) == shown


def scripted_runtime_without_memories() -> AgentRuntime:
    return assemble(build_models(ModelConfig()), writer=WriterKind.HOST).runtime


@pytest.mark.parametrize("how", UNREADABLE)
async def test_recall_off_and_an_earlier_store_that_cannot_be_read_is_listed_with_why(tmp_path, how):
    """F3 with recall off does not hide a store it could not read: it is named with why."""
    path = tmp_path / "recall.duckdb"
    await earlier_recall(path, "customer=Contoso")
    with unreadable(path, how) as why:
        runtime = assemble(build_models(ModelConfig()), recall=RecallConfig(store=str(path)).memory()).runtime
        recall = system(await runtime.remembered(), "recall store")
    assert recall.items == () and recall.location == str(path.resolve())
    assert recall.description.startswith("off (an earlier run's store): could not be read: IOException: ")
    assert why in recall.description and recall.unread is not None and "\n" not in recall.description


def test_the_ledger_holds_a_key_only_while_a_forget_of_it_would_remove_a_value():
    """SmolLM2's writer proposed database and product, which the message never declared: the batch was
    rejected, its events name them and keep no value of theirs. After two forgets of customer, F3 said
    the ledger 'holds customer, database, priority, product', while the second forget reached nothing."""
    from datetime import UTC, datetime

    from workbench.memory import WorkingMemory
    from workbench.memory.records import FactCandidate
    from workbench.runtime.remembered import inventory
    from workbench.runtime.view import MemorySnapshot

    memory = WorkingMemory()

    def batch(text: str, *candidates: tuple[str, str, str]) -> None:
        turn = memory.begin_turn(text, origin="support")
        memory.admit(turn, [FactCandidate(key=k, value=v, evidence=e) for k, v, e in candidates], datetime.now(UTC))

    def ledger() -> HeldItem:
        snapshot = MemorySnapshot(memory.facts(), tuple(memory.ledger.latest()))
        (found,) = [i for s in inventory(memory, snapshot, []).systems for i in s.items if i.kind == "ledger"]
        return found

    batch("customer=Fabrikam 2039", ("customer", "Fabrikam 2039", "customer=Fabrikam 2039"))
    made_up = [("database", "Oracle", "the export fails"), ("product", "Exporter", "export")]
    batch("customer=Fabrikam 2040 the export fails", ("customer", "Fabrikam 2040", "customer=Fabrikam 2040"), *made_up)
    before = ledger()
    assert before.keys == ("customer",)
    assert "names database, product without a value (nothing for a forget to remove)" in before.description
    for _ in range(2):
        memory.erase(memory.plan("customer"))
    after = ledger()
    assert after.keys == () and "Fabrikam" not in after.content
    assert "names customer, database, product without a value" in after.description
