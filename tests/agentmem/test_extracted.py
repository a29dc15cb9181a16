"""Extracted long-term memory: MemoryContextProvider with the built-in model as an ideal extractor, and
with the loopback server answering the extraction prompt; what it keeps, a restart, and the one forget."""

import asyncio
import json

from agent_framework import MemoryContextProvider, MemoryFileStore

from tests.agentmem.helpers import files_holding, live_runtime, modes, say, scripted_runtime
from workbench.agentmem.extracted import TURN_ID_SHOWN, ExtractedMemory, retiring
from workbench.runtime.scripted import (
    CONSOLIDATION_PROMPT_START,
    EXTRACTION_PROMPT_START,
    SCRIPTED_LABEL,
    scripted_reply,
)

CHRONOLOGY = ("module=Reporting; database=PostgreSQL", "module=Billing; database=SQL Server 2022", "customer=Contoso")


def test_the_script_recognizes_the_framework_prompts(tmp_path):
    with retiring():
        provider = MemoryContextProvider(store=MemoryFileStore(tmp_path, owner_state_key="owner"))
    assert provider.extraction_prompt.startswith(EXTRACTION_PROMPT_START)
    assert provider.consolidation_prompt.startswith(CONSOLIDATION_PROMPT_START)


def test_the_ideal_extractor_returns_exactly_the_users_declarations():
    delta = "USER: module=Billing; version=\n\nASSISTANT: This message declares customer=Invented."
    answer = json.loads(scripted_reply("", [("system", EXTRACTION_PROMPT_START), ("user", delta)], structured=False))
    assert answer == {"memories": [{"topic": "module", "memory": "module=Billing"}], "extractor": SCRIPTED_LABEL}


def test_the_ideal_consolidator_keeps_the_latest_value_of_each_key():
    record = json.dumps({"memories": ["module=Reporting", "likes short answers", "module=Billing"]})
    answer = json.loads(
        scripted_reply("", [("system", CONSOLIDATION_PROMPT_START), ("user", record)], structured=False)
    )
    assert answer["memories"] == ["module=Billing", "likes short answers"]
    assert answer["consolidator"] == SCRIPTED_LABEL


def test_topics_index_and_transcripts_are_kept_user_only_and_the_correction_stays(tmp_path):
    memory = ExtractedMemory(tmp_path)
    runtime = scripted_runtime(memory)
    asyncio.run(say(runtime, *CHRONOLOGY))
    asyncio.run(say(runtime, "environment=production", agent="logs"))

    held = {f.name: f for f in memory.files()}
    topics = sorted(n for n, f in held.items() if f.kind == "topic")
    assert topics == ["topics/customer.md", "topics/database.md", "topics/environment.md", "topics/module.md"]
    assert [f.kind for f in held.values()].count("transcript") == 2  # one per agent session
    assert "- module=Reporting\n- module=Billing" in held["topics/module.md"].content
    # The framework keeps a topic's first summary: MEMORY.md still points at the corrected value.
    assert "- [module](topics/module.md): module=Reporting" in held["MEMORY.md"].content
    assert modes(tmp_path) == {("dir", 0o700), ("file", 0o600)}

    remembered = asyncio.run(runtime.remembered())
    assert remembered.corrected == ("PostgreSQL", "Reporting")
    (system,) = [s for s in remembered.systems if s.name == "extracted memory"]
    flagged = {f.name: f.stale for f in system.items if f.stale}
    assert flagged["MEMORY.md"] == ("PostgreSQL", "Reporting")
    assert flagged["topics/module.md"] == ("Reporting",)


def test_the_maintenance_state_is_shown_without_the_frameworks_random_turn_ids(tmp_path):
    """Each a random token the framework compares (pending_turn_ids, 1.26), never the user's text: shown
    as one word, so the same memory reads the same on every run; the sessions it names stay."""
    memory = ExtractedMemory(tmp_path)
    asyncio.run(say(scripted_runtime(memory), *CHRONOLOGY))
    on_disk = json.loads((memory.folder / "state.json").read_text())
    turn_ids = on_disk["pending_turn_ids"]
    assert turn_ids and all(len(t) == 32 for t in turn_ids.values())  # one per session awaiting consolidation
    (state,) = [item for item in memory.files() if item.kind == "state"]
    assert json.loads(state.content) == {**on_disk, "pending_turn_ids": dict.fromkeys(turn_ids, TURN_ID_SHOWN)}
    assert state.size == (memory.folder / "state.json").stat().st_size  # the file's own size

    (memory.folder / "state.json").write_text('{"pending_turn_ids": {"s": "0123')  # cut off by a crash
    (state,) = [item for item in memory.files() if item.kind == "state"]
    assert state.content == '{"pending_turn_ids": {"s": "0123'  # as it is


def test_the_index_and_matching_topics_reach_the_next_request_after_a_restart(tmp_path):
    asyncio.run(say(scripted_runtime(ExtractedMemory(tmp_path)), *CHRONOLOGY))
    memory = ExtractedMemory(tmp_path)  # a new run on the same folder
    runtime = scripted_runtime(memory)
    asyncio.run(say(runtime, "Which database is affected?"))
    injected = memory.recalled("support")[0].text
    assert "- [customer](topics/customer.md): customer=Contoso" in injected
    assert "### topics/database.md" in injected and "- database=SQL Server 2022" in injected
    call = runtime.last_turn_calls("support")[0]
    assert any(injected == m.text for m in call.messages)


def test_forget_leaves_no_byte_of_the_value_in_any_file(tmp_path):
    memory = ExtractedMemory(tmp_path)
    runtime = scripted_runtime(memory)
    asyncio.run(say(runtime, *CHRONOLOGY, "Contoso asked again about the export."))
    assert "memory/local-user/memory/topics/customer.md" in files_holding(tmp_path, "Contoso")

    report = asyncio.run(runtime.forget("customer"))
    assert report.counts["extracted memory"] == "2 memory file(s) deleted or rewritten"  # a topic, a transcript
    assert files_holding(tmp_path, "Contoso") == []
    names = {f.name for f in memory.files()}
    assert "topics/customer.md" not in names and "topics/module.md" in names
    assert "customer" not in (memory.folder / "MEMORY.md").read_text()
    assert modes(tmp_path) == {("dir", 0o700), ("file", 0o600)}

    asyncio.run(runtime.forget("module"))
    assert files_holding(tmp_path, "Reporting") == [] and files_holding(tmp_path, "Billing") == []
    asyncio.run(runtime.forget())
    assert not memory.folder.exists()


def test_a_forget_after_a_crash_finds_a_value_only_a_transcript_declares(tmp_path):
    """Killed after the framework wrote a turn's transcript and before the workbench saved the facts, a
    run left the value only there: declared after the facts block (JSON-escaped in the file) and echoed
    in the reply, and a work file of the framework's interrupted write. The next start's forget of the
    key found no value: it dropped the declaring line and kept the reply and the work file."""
    memory = ExtractedMemory(tmp_path)
    asyncio.run(say(scripted_runtime(memory), "database=Oracle", "customer=Zanzibar-1; module=Billing"))
    (memory.folder / "topics" / ".maf-state-0123abcd.tmp").write_text("# customer\n\n- customer=Zanzibar-1\n")
    for topic in (memory.folder / "topics").glob("customer.md"):
        topic.unlink()  # killed before the extraction wrote it
    restarted = scripted_runtime(ExtractedMemory(tmp_path))  # its working memory never held the fact

    asyncio.run(restarted.forget("customer"))

    assert files_holding(tmp_path, "Zanzibar-1") == []
    assert files_holding(tmp_path, "Oracle")  # the rest stays


def test_the_loopback_model_answers_the_extraction_prompt(loopback, tmp_path):
    memory = ExtractedMemory(tmp_path)
    runtime = live_runtime(loopback.base_url, memory)
    asyncio.run(say(runtime, "module=Billing"))
    extraction = [r for r in loopback.requests if str(r["messages"][0]["content"]).startswith(EXTRACTION_PROMPT_START)]
    assert len(extraction) == 1
    assert extraction[0]["max_tokens"] == runtime.models.max_tokens  # bounded like the agent's own replies
    assert "- module=Billing" in (memory.folder / "topics" / "module.md").read_text()


def test_a_turn_that_a_forget_overlapped_stores_nothing(tmp_path):
    memory = ExtractedMemory(tmp_path)
    runtime = scripted_runtime(memory)
    asyncio.run(say(runtime, "module=Billing"))
    providers = runtime._slots["support"].agent.context_providers
    (provider,) = [p for p in providers if isinstance(p, MemoryContextProvider)]  # the support agent's
    original = provider.before_run

    async def forget_meanwhile(**kwargs):
        await original(**kwargs)
        await runtime.forget("customer")  # while the model answers "customer=Contoso"

    provider.before_run = forget_meanwhile  # type: ignore[method-assign]  # a forget lands mid-run
    asyncio.run(say(runtime, "customer=Contoso"))
    assert files_holding(tmp_path, "Contoso") == []


def test_after_five_sessions_the_ideal_consolidator_leaves_only_the_correction(tmp_path):
    from workbench.runtime import Mode

    memory = ExtractedMemory(tmp_path)
    runtime = scripted_runtime(memory)
    asyncio.run(say(runtime, "module=Reporting", "module=Billing"))
    assert "): module=Reporting" in (memory.folder / "MEMORY.md").read_text()
    for mode in (Mode.PROVIDER, Mode.MANUAL, Mode.PROVIDER, Mode.MANUAL):  # each switch: new sessions
        asyncio.run(runtime.set_mode(mode))
        asyncio.run(say(runtime, "Still looking into it."))
    topic = (memory.folder / "topics" / "module.md").read_text()
    assert "- module=Billing" in topic and "Reporting" not in topic
    assert "- [module](topics/module.md): module=Billing" in (memory.folder / "MEMORY.md").read_text()
    assert json.loads((memory.folder / "state.json").read_text())["sessions_since_consolidation"] == []
    consolidations = runtime.calls.records(purpose="consolidation")  # recorded with the turn that caused them
    assert [(c.origin, c.turn) for c in consolidations] == [("support", 6)]
    assert '"topic": "module"' in consolidations[0].messages[-1].text
