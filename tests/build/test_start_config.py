"""The start configuration and the one builder, without Textual: the options read once and checked in one
place, no key or password in what it shows, and every holder registered in the one order."""

import pytest

from workbench.build.builder import in_order, lab_forget
from workbench.build.config import StartConfig
from workbench.cli.parser import parse
from workbench.contract_file import ContractFileError
from workbench.memory import WorkingMemory
from workbench.memory.forget import TextHolder
from workbench.runtime import ModelConfig, build_models
from workbench.runtime.config import ConfigError, Mode, WriterKind
from workbench.session.assemble import assemble

KEY = "sk-not-a-real-key-7731"
PASSWORD = "hunter2-7731"


def test_the_options_are_read_once_into_the_typed_parts(monkeypatch, tmp_path):
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    monkeypatch.delenv("AZURE_OPENAI_ENDPOINT", raising=False)
    args = parse(["--model", "m", "--mode", "provider", "--writer", "host", "--keys", "customer,plan", str(tmp_path)])
    start = StartConfig.read(args)
    assert (start.model.model, start.model.api_key) == ("m", KEY)  # the environment's key, read once
    assert start.contract.keys == ("customer", "plan")
    assert (start.mode, start.writer) == (Mode.PROVIDER, WriterKind.HOST)
    assert start.path == tmp_path
    assert not start.persist and start.redis is None


def test_the_environment_is_read_once_from_the_one_given():
    environ = {"OPENAI_API_KEY": KEY, "OPENAI_BASE_URL": "http://localhost:1/v1"}
    start = StartConfig.read(parse(["--model", "m", "--embedding-model", "e"]), environ=environ)
    assert (start.model.api_key, start.model.base_url) == (KEY, "http://localhost:1/v1")
    assert (start.recall.api_key, start.recall.embedding_base_url) == (KEY, "http://localhost:1/v1")
    with pytest.raises(ConfigError, match="OPENAI_API_KEY"):
        StartConfig.read(parse(["--model", "m"]), environ={})  # not the process's


def test_no_key_or_password_in_what_it_shows(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    monkeypatch.delenv("AZURE_OPENAI_ENDPOINT", raising=False)
    args = parse(["--model", "m", "--persist", f"redis://:{PASSWORD}@cache:6380/1", "--embedding-model", "e"])
    start = StartConfig.read(args)
    assert start.redis == f"redis://:{PASSWORD}@cache:6380/1"
    for shown in (repr(start), str(start), " ".join(start.stores_on_disk())):
        assert KEY not in shown
        assert PASSWORD not in shown


@pytest.mark.parametrize(
    "words",
    [
        ["--writer-model", "w"],
        ["--base-url", "http://localhost:1"],
        ["--model", "m", "--base-url", "not a url"],
        ["--embedding-base-url", "http://localhost:1"],
        ["--model", "m", "--agent-memory", "mem0"],
    ],
)
def test_an_error_is_one_line_without_the_key(monkeypatch, words):
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    with pytest.raises(ConfigError) as raised:
        StartConfig.read(parse(words))
    assert "\n" not in str(raised.value)
    assert KEY not in str(raised.value)


def test_a_contract_the_file_cannot_give_stops_the_start(tmp_path):
    (tmp_path / "workbench.toml").write_text("[contract]\nkeys = 7\n")
    with pytest.raises(ContractFileError):
        StartConfig.read(parse(["--config", str(tmp_path / "workbench.toml")]))


def test_the_app_registers_every_holder_in_the_one_order():
    session = assemble(build_models(ModelConfig()))
    names = session.runtime.forgetting.holders
    assert names == in_order_names(session)
    assert names[:2] == ("agent sessions", "call log")
    assert names[-len(session.holders) :] == tuple(h.name for h in session.holders)  # the session's, in their slot


def in_order_names(session):
    runtime = session.runtime
    held = in_order(
        agent_sessions=runtime.own_holders,
        recall=runtime.recall,
        memories=runtime.memories,
        around=session.holders,
    )
    return tuple(holder.name for holder in held)


async def test_a_lab_forget_reaches_its_parts_in_the_apps_order():
    reached: list[str] = []

    def holder(name: str) -> TextHolder:
        def erase(_plan: object) -> int:
            reached.append(name)
            return 0

        return TextHolder(name, "item(s)", lambda: [], erase)

    forgetting = lab_forget(
        WorkingMemory(), memories=[holder("memory")], recall=holder("recall"), agent_sessions=[holder("sessions")]
    )
    assert forgetting.holders == ("sessions", "recall", "memory")
    await forgetting.forget(None)
    assert reached == ["sessions", "recall", "memory"]


def test_the_agent_memories_are_listed_once():
    """--agent-memory takes the table's names and no other; each builds over its own folder."""
    from workbench.agentmem.config import AGENT_MEMORIES, AgentMemoryConfig

    assert [parse(["--agent-memory", name]).agent_memory for name in AGENT_MEMORIES] == list(AGENT_MEMORIES)
    with pytest.raises(SystemExit):
        parse(["--agent-memory", "not-a-memory"])
    chosen = AgentMemoryConfig.from_options("files", None)
    memory = chosen.build()
    assert memory is not None and chosen.calls_functions and chosen.folder is not None
    assert chosen.folder.name == "files"
