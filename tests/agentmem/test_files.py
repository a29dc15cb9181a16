"""Memory the model writes itself: FileMemoryProvider's file_memory_* tools, called by a scripted
loopback model, on real files; the live listing, the flag on corrected values, and the one forget."""

import asyncio

from tests.agentmem.helpers import files_holding, live_runtime, modes, say, scripted_runtime
from tests.support.openai_server import memory_file_writer
from workbench.agentmem.files import FileMemory


def test_the_model_writes_memory_files_both_agents_share_user_only(loopback, tmp_path):
    loopback.state.responder = memory_file_writer()
    memory = FileMemory(tmp_path / "files")
    runtime = live_runtime(loopback.base_url, memory)
    asyncio.run(say(runtime, "module=Reporting; database=PostgreSQL"))
    asyncio.run(say(runtime, "log=/var/log/export.log", agent="logs"))

    held = {f.name: f for f in memory.files()}
    assert set(held) == {"database.md", "log.md", "module.md", "memories.md"}
    assert (held["module.md"].description, held["module.md"].content) == ("the user's module", "module=Reporting")
    assert held["memories.md"].kind == "index" and "**log.md**: the user's log" in held["memories.md"].content
    assert memory.folder == tmp_path / "files" / "local-user"
    assert modes(tmp_path / "files") == {("dir", 0o700), ("file", 0o600)}
    assert "memory files: FileMemoryProvider, 4 file(s)" in runtime.status.memories
    assert "memory files" in runtime.forgetting.holders

    asyncio.run(say(runtime, "Which module?"))
    sent = str(loopback.requests[-1]["messages"])
    assert "your memory index" in sent and "**module.md**: the user's module" in sent
    assert "**module.md**" in memory.recalled("support")[0].text


def test_a_file_still_holding_a_corrected_value_is_flagged(loopback, tmp_path):
    loopback.state.responder = memory_file_writer(lambda key, value: f"{key}-{value}.md")
    memory = FileMemory(tmp_path)
    runtime = live_runtime(loopback.base_url, memory)
    asyncio.run(say(runtime, "module=Reporting", "module=Billing"))

    remembered = asyncio.run(runtime.remembered())
    assert remembered.corrected == ("Reporting",)
    (system,) = [s for s in remembered.systems if s.name == "memory files"]
    flagged = {f.name: f.stale for f in system.items}
    # The index names the file: it holds the corrected value too (matched whole, case-insensitively, as forget does).
    assert flagged == {"module-Reporting.md": ("Reporting",), "module-Billing.md": (), "memories.md": ("Reporting",)}


def test_forget_rewrites_or_deletes_every_file_holding_the_value(loopback, tmp_path):
    loopback.state.responder = memory_file_writer(lambda key, value: f"{key}-{value}.md")
    memory = FileMemory(tmp_path)
    runtime = live_runtime(loopback.base_url, memory)
    asyncio.run(say(runtime, "customer=Contoso; version=12.4", "module=Billing"))
    (memory.folder / "notes.md").write_text("Contoso runs the nightly export; customer=Contoso")
    assert files_holding(tmp_path, "Contoso") == [
        "local-user/customer-Contoso.md",
        "local-user/customer-Contoso_description.md",
        "local-user/memories.md",
        "local-user/notes.md",
    ]

    report = asyncio.run(runtime.forget("customer"))
    assert report.counts["memory files"] == "2 memory file(s) deleted or rewritten"
    assert files_holding(tmp_path, "Contoso") == []
    assert (memory.folder / "notes.md").read_text() == "(forgotten) runs the nightly export; customer=(forgotten)"
    assert {f.name for f in memory.files()} == {"memories.md", "module-Billing.md", "notes.md", "version-12.4.md"}
    assert "customer" not in (memory.folder / "memories.md").read_text()
    assert modes(tmp_path) == {("dir", 0o700), ("file", 0o600)}


def test_forget_everything_removes_the_folder(loopback, tmp_path):
    loopback.state.responder = memory_file_writer()
    memory = FileMemory(tmp_path)
    runtime = live_runtime(loopback.base_url, memory)
    asyncio.run(say(runtime, "module=Billing; database=SQL Server 2022"))
    report = asyncio.run(runtime.forget())
    assert report.counts["memory files"] == "2 memory file(s) deleted or rewritten"
    assert not memory.folder.exists() and memory.files() == []


def test_the_built_in_model_calls_no_function_and_writes_nothing(tmp_path):
    memory = FileMemory(tmp_path)
    runtime = scripted_runtime(memory)
    asyncio.run(say(runtime, "module=Billing"))
    assert memory.files() == [] and files_holding(tmp_path, "Billing") == []
