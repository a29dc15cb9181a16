"""Recall in the agent runtime on a DuckDB file: both agents share one user scope, and forget reaches
the store and the disk, with the ledger saying how many records, never the value."""

from pathlib import Path

import pytest

from workbench.cli.configs import recall_config
from workbench.cli.parser import build_parser
from workbench.recall.config import RecallConfig
from workbench.recall.duckdb_file import companion_files
from workbench.recall.setup import RecallSetup
from workbench.recall.store import RecallStore
from workbench.runtime import CallLog, ConfigError, ModelConfig, WriterKind, build_models
from workbench.runtime.agents import AgentRuntime
from workbench.session.assemble import assemble

SECRET = "Zanzibar-Orchid-7731"


def runtime_on(path: Path, *, on: bool = True) -> AgentRuntime:
    calls = CallLog()
    recall = RecallConfig(store=str(path)).build(calls)
    return assemble(
        build_models(ModelConfig()), writer=WriterKind.HOST, calls=calls, recall=recall, recall_on=on
    ).runtime


def store_of(runtime: AgentRuntime) -> RecallStore:
    assert isinstance(runtime.recall, RecallSetup)
    return runtime.recall.store


def raw(path: Path) -> bytes:
    return b"".join(p.read_bytes() for p in (path, *companion_files(path)) if p.exists())


async def test_forgetting_a_key_purges_the_file_and_the_ledger_says_only_how_many(tmp_path: Path) -> None:
    path = tmp_path / "recall.duckdb"
    runtime = runtime_on(path)
    await runtime.ask("support", f"customer={SECRET}; version=12.4")
    await runtime.ask("logs", "Which customer and version?")
    assert any(SECRET in r.text for r in runtime.recalled("logs"))
    await store_of(runtime).close()  # checkpoint: the value is in the file
    assert SECRET.encode() in raw(path)

    await runtime.forget("customer")
    await store_of(runtime).close()

    assert SECRET.encode() not in raw(path)
    assert [p.name for p in tmp_path.iterdir()] == ["recall.duckdb"]
    (note,) = [e for e in runtime.memory.ledger.latest() if e.origin == "forget"]
    assert "recall store: 3 stored message(s) deleted" in note.describe()
    assert SECRET not in note.describe()
    await runtime.ask("logs", f"Anything about {SECRET}?")
    assert not any(SECRET in r.text for r in runtime.recalled("logs") if r.turn < 3)
    await store_of(runtime).close()


async def test_a_file_left_by_an_earlier_run_is_purged_even_with_recall_off(tmp_path: Path) -> None:
    path = tmp_path / "recall.duckdb"
    earlier = runtime_on(path)
    await earlier.ask("support", f"customer={SECRET}")
    await store_of(earlier).close()

    later = runtime_on(path, on=False)
    await later.forget(None)
    await store_of(later).close()
    assert SECRET.encode() not in raw(path)


def test_embedding_options_follow_the_chat_models_rules(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    with pytest.raises(ConfigError, match="--embedding-base-url needs --embedding-model"):
        recall_config(build_parser().parse_args(["--embedding-base-url", "http://127.0.0.1:1/v1"]))
    with pytest.raises(ConfigError, match="OPENAI_API_KEY"):
        recall_config(build_parser().parse_args(["--embedding-model", "text-embedding-3-small"]))
    local = recall_config(
        build_parser().parse_args(["--recall", "--embedding-model", "nomic-embed-text", "--base-url", "http://h:1/v1"])
    )
    assert local.enabled and local.embedding_base_url == "http://h:1/v1" and local.api_key is None


def test_on_demand_recall_is_chosen_on_the_command_line() -> None:
    config = recall_config(build_parser().parse_args(["--recall", "--recall-on-demand", "--recall-store", "memory"]))
    setup = config.build()
    assert setup.on_demand and setup.describe() == "in memory, lexical, on demand"
    assert setup.provider("logs").behavior.value == "on_demand"
