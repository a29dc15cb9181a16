"""Mem0 run for real (mem0ai's AsyncMemory under agent-framework-mem0's provider) against loopback
chat and embeddings servers, on real files in a temporary directory."""

from __future__ import annotations

import asyncio
import stat
import subprocess
import sys
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

from tests.agentmem.mem0_servers import Mem0Servers, mem0_servers
from tests.support.openai_server import Canned
from tests.support.residue import residue
from tests.ui.helpers import start_ended
from workbench.agentmem.mem0_config import Mem0Config, mem0_installed
from workbench.runtime import ModelConfig, build_models
from workbench.runtime.agents import AgentRuntime
from workbench.runtime.config import ConfigError, Mode, WriterKind
from workbench.session.assemble import assemble

# Not pytest.importorskip: importing mem0 writes its config.json under MEM0_DIR (default ~/.mem0),
# so the check must not import it; the memory imports it itself, into the test's directory.
needs_mem0 = pytest.mark.skipif(
    not mem0_installed(), reason='Mem0 is an optional extra: pip install "agent-memory-workbench[mem0]"'
)


@pytest.fixture
def servers() -> Iterator[Mem0Servers]:
    with mem0_servers() as running:
        yield running


def mem0_memory(servers: Mem0Servers, directory: Path):
    from workbench.agentmem.mem0 import Mem0Memory

    return Mem0Memory(config(servers, directory))


def live_options(servers: Mem0Servers) -> list[str]:
    """The command-line options that point the app's model and embedder at the loopback servers."""
    return [
        *("--model", "loopback-model", "--base-url", servers.chat.base_url),
        *("--embedding-model", "loopback-embeddings", "--embedding-base-url", servers.embeddings_url),
    ]


def config(servers: Mem0Servers, directory: Path) -> Mem0Config:
    return Mem0Config(
        "loopback-model",
        "loopback-embeddings",
        directory,
        base_url=servers.chat.base_url,
        embedding_base_url=servers.embeddings_url,
        timeout=10,
    )


@pytest.fixture
async def runtime(servers: Mem0Servers, tmp_path: Path) -> AsyncIterator[AgentRuntime]:
    memory = mem0_memory(servers, tmp_path / "mem0")
    models = build_models(ModelConfig(model="loopback-model", base_url=servers.chat.base_url, max_retries=0))
    yield assemble(models, mode=Mode.PROVIDER, writer=WriterKind.HOST, memories=[memory]).runtime
    await memory.close()


def mem0_of(runtime: AgentRuntime):
    from workbench.agentmem.mem0 import Mem0Memory

    (memory,) = runtime.memories
    assert isinstance(memory, Mem0Memory)
    return memory


def files_holding(directory: Path, value: str) -> list[str]:
    """Every file under `directory` whose raw bytes hold `value` (any case)."""
    needle = value.lower().encode()
    return [str(p) for p in directory.rglob("*") if p.is_file() and needle in p.read_bytes().lower()]


@needs_mem0
async def test_both_agents_share_what_mem0_extracted_and_it_is_shown_with_its_ids(runtime, servers):
    memory = mem0_of(runtime)
    assert (await runtime.ask("support", "customer=Contoso; priority=P2")).ok
    held = await memory.memories()
    assert sorted(m.content for m in held) == ["The user's customer is Contoso", "The user's priority is P2"]
    assert {m.description for m in held} == {"stored by the support agent"} and all(m.name for m in held)

    assert (await runtime.ask("logs", "which customer is it?")).ok
    assert "The user's customer is Contoso" in [r.text for r in memory.recalled("logs")]
    logs_request = [r for r in servers.chat.requests if r not in servers.extraction_requests()][-1]
    assert "The user's customer is Contoso" in str(logs_request["messages"])
    assert len(servers.extraction_requests()) == 2  # one per turn, by the app's model
    assert "Mem0" in runtime.status.memories[0]


@needs_mem0
async def test_forget_deletes_through_mem0_and_leaves_no_byte_of_the_value_on_disk(runtime, tmp_path):
    memory = mem0_of(runtime)
    assert (await runtime.ask("support", "customer=Contoso; priority=P2")).ok
    assert (await runtime.ask("logs", "customer=Contoso")).ok  # stored again, under the logs agent
    assert files_holding(tmp_path / "mem0", "Contoso")  # the scan finds it while it is there

    report = await runtime.forget("customer")

    assert "Mem0: 2 memory(ies) deleted" in report.describe()  # each agent's copy
    assert [m.content for m in await memory.memories()] == ["The user's priority is P2"]
    search = await memory.open().search("Contoso customer", filters={"user_id": "local-user"})
    assert [m for m in search["results"] if "contoso" in m["memory"].casefold()] == []
    assert files_holding(tmp_path / "mem0", "Contoso") == []
    assert files_holding(tmp_path / "mem0", "P2")  # only the forgotten value went
    assert residue(["Contoso"], runtime) == {}  # nor does any string the running app holds


@needs_mem0
async def test_forget_everything_empties_mem0_and_its_files(runtime, tmp_path):
    memory = mem0_of(runtime)
    assert (await runtime.ask("support", "customer=Contoso; priority=P2")).ok
    report = await runtime.forget(None)
    assert "Mem0: 2 memory(ies) deleted" in report.describe()
    assert await memory.memories() == []
    assert files_holding(tmp_path / "mem0", "Contoso") == files_holding(tmp_path / "mem0", "P2") == []


@needs_mem0
async def test_every_file_and_folder_is_the_users_only(runtime, tmp_path):
    assert (await runtime.ask("support", "customer=Contoso")).ok
    await runtime.forget("customer")
    paths = [tmp_path / "mem0", *(tmp_path / "mem0").rglob("*")]
    modes = {str(p): stat.S_IMODE(p.stat().st_mode) for p in paths}
    assert {p: m for p, m in modes.items() if m != (0o700 if Path(p).is_dir() else 0o600)} == {}


@needs_mem0
async def test_memories_survive_a_restart_and_a_forget_reaches_an_earlier_runs_files(servers, tmp_path):
    first = mem0_memory(servers, tmp_path / "mem0")
    models = build_models(ModelConfig(model="loopback-model", base_url=servers.chat.base_url, max_retries=0))
    runtime = assemble(models, mode=Mode.PROVIDER, writer=WriterKind.HOST, memories=[first]).runtime
    assert (await runtime.ask("support", "customer=Contoso")).ok
    await first.close()

    second = mem0_memory(servers, tmp_path / "mem0")
    try:
        assert [m.content for m in await second.memories()] == ["The user's customer is Contoso"]
        later = assemble(models, mode=Mode.PROVIDER, writer=WriterKind.HOST, memories=[second]).runtime
        await later.forget("customer")  # this run's facts never held it: Mem0's own files tell the plan
        assert await second.memories() == []
        assert files_holding(tmp_path / "mem0", "Contoso") == []
    finally:
        await second.close()


@needs_mem0
async def test_telemetry_is_off(runtime):
    assert (await runtime.ask("support", "customer=Contoso")).ok
    from mem0.memory import telemetry

    assert telemetry.MEM0_TELEMETRY is False
    assert telemetry.client_telemetry.posthog is None


def test_mem0_needs_a_live_model_and_an_embedding_model(tmp_path):
    with pytest.raises(ConfigError, match="needs --model"):
        Mem0Config.from_options(ModelConfig(), embedding_model="e", directory=tmp_path)
    live = ModelConfig(model="m", base_url="http://127.0.0.1:9/v1")
    with pytest.raises(ConfigError, match="needs --embedding-model"):
        Mem0Config.from_options(live, embedding_model=None, directory=tmp_path)


def test_an_openrouter_key_is_refused_rather_than_followed(tmp_path, monkeypatch):
    monkeypatch.setenv("OPENROUTER_API_KEY", "or-test")
    live = ModelConfig(model="m", base_url="http://127.0.0.1:9/v1")
    with pytest.raises(ConfigError, match="OpenRouter"):
        Mem0Config.from_options(live, embedding_model="e", directory=tmp_path)


@needs_mem0
def test_agent_memory_mem0_lives_in_the_agent_memory_folder_and_needs_no_function_loop(tmp_path):
    from workbench.agentmem.config import AgentMemoryConfig
    from workbench.agentmem.mem0 import Mem0Memory

    live = ModelConfig(model="m", base_url="http://127.0.0.1:9/v1")
    chosen = AgentMemoryConfig.from_options("mem0", str(tmp_path), chat=live, embedding_model="e")
    assert chosen.calls_functions is False  # Mem0 offers the model no function: it extracts on its own
    memory = chosen.build()
    assert isinstance(memory, Mem0Memory) and memory.directory == tmp_path / "mem0"
    assert not (tmp_path / "mem0").exists()  # nothing is written before an agent runs


def test_the_cli_refuses_mem0_without_a_model(capsys):
    from workbench.cli import main

    assert main(["--agent-memory", "mem0"]) == 2
    assert "needs --model" in capsys.readouterr().err


def test_choosing_mem0_loads_no_mem0_until_the_runtime_starts():
    probe = (
        "import sys, workbench.cli, workbench.agentmem.mem0_config, workbench.agentmem.mem0; "
        "print(' '.join(m for m in ('mem0', 'agent_framework_mem0', 'qdrant_client') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout
    assert out.split() == []


@needs_mem0
async def test_a_turn_that_began_before_a_forget_stores_nothing_in_mem0(runtime, servers):
    servers.chat.enqueue(Canned(text="a slow answer", delay=1.0))
    turn = asyncio.create_task(runtime.ask("support", "customer=Contoso"))
    while not servers.chat.requests:  # the agent's request is at the server, its answer not yet back
        await asyncio.sleep(0.02)
    await runtime.forget(None)
    assert (await turn).ok
    assert await mem0_of(runtime).memories() == []
    assert servers.extraction_requests() == []


@needs_mem0
async def test_the_app_opened_with_agent_memory_mem0_runs_it_in_the_data_directory(servers, tmp_path, monkeypatch):
    from workbench.cli.configs import model_config
    from workbench.cli.parser import build_parser
    from workbench.cli.start import build_app

    monkeypatch.setenv("WORKBENCH_DATA_DIR", str(tmp_path))
    args = build_parser().parse_args(["--agent-memory", "mem0", *live_options(servers)])
    app = build_app(args, model_config(args))
    async with app.run_test(size=(140, 40)) as pilot:
        await start_ended(pilot)
        assert app.ready, app.sub_title
        memory = mem0_of(app.session.runtime)
        assert memory.directory == tmp_path / "agent-memory" / "mem0"
        assert stat.S_IMODE(memory.directory.stat().st_mode) == 0o700
        assert (await app.session.runtime.ask("support", "customer=Contoso")).ok
        assert [m.content for m in await memory.memories()] == ["The user's customer is Contoso"]
        await memory.close()


@needs_mem0
async def test_what_is_remembered_lists_mem0s_memories_and_files_with_the_keys_they_hold(servers, tmp_path):
    first = mem0_memory(servers, tmp_path / "mem0")
    models = build_models(ModelConfig(model="loopback-model", base_url=servers.chat.base_url, max_retries=0))
    runtime = assemble(models, mode=Mode.PROVIDER, writer=WriterKind.HOST, memories=[first]).runtime
    assert (await runtime.ask("support", "customer=Contoso; priority=P2")).ok
    (mem0,) = [s for s in (await runtime.remembered()).systems if s.name == "Mem0"]
    assert mem0.location == str(tmp_path / "mem0")
    held = {(i.kind, i.content if i.kind == "memory" else i.name): i.keys for i in mem0.items}
    assert held == {
        ("memory", "The user's customer is Contoso"): ("customer",),
        ("memory", "The user's priority is P2"): ("priority",),
        ("file", "history.db"): ("customer", "priority"),
        ("file", "qdrant/collection/workbench/storage.sqlite"): ("customer", "priority"),
    }
    assert mem0.size == sum(i.size or 0 for i in mem0.items) > 0
    await first.close()

    # A later run's facts know nothing: the messages Mem0 kept still say which memory holds which key.
    second = mem0_memory(servers, tmp_path / "mem0")
    later = assemble(models, mode=Mode.PROVIDER, writer=WriterKind.HOST, memories=[second]).runtime
    try:
        remembered = await later.remembered()
        (mem0,) = [s for s in remembered.systems if s.name == "Mem0"]
        assert sorted(i.keys for i in mem0.items if i.kind == "memory") == [("customer",), ("priority",)]
        assert remembered.values["customer"] == ("Contoso",)
        await later.forget("customer")
        (mem0,) = [s for s in (await later.remembered()).systems if s.name == "Mem0"]
        assert "customer" not in mem0.keys and [i.content for i in mem0.items if i.kind == "memory"] == [
            "The user's priority is P2"
        ]
    finally:
        await second.close()
