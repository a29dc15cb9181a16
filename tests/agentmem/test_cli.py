"""`--agent-memory` gives both agents the memory, in the data directory or --agent-memory-dir, with the
framework's function loop on for a live model; without it nothing is added and nothing is written."""

import os

import pytest

from workbench.agentmem.config import AgentMemoryConfig, default_directory
from workbench.agentmem.extracted import ExtractedMemory
from workbench.agentmem.files import FileMemory
from workbench.cli.configs import model_config
from workbench.cli.parser import build_parser
from workbench.cli.start import build_app


def runtime(*options: str):
    args = build_parser().parse_args(list(options))
    start = build_app(args, model_config(args))._start
    assert start is not None
    return start().runtime


def test_each_choice_builds_its_memory_for_both_agents(tmp_path):
    files = runtime("--agent-memory", "files", "--agent-memory-dir", str(tmp_path))
    (memory,) = files.memories
    assert isinstance(memory, FileMemory) and memory.folder == tmp_path / "files" / "local-user"
    assert files.status.memories == ("memory files: FileMemoryProvider, 0 file(s)",)
    assert "memory files" in files.forgetting.holders
    extracted = runtime("--agent-memory", "extracted", "--agent-memory-dir", str(tmp_path))
    assert isinstance(extracted.memories[0], ExtractedMemory)
    assert runtime().memories == ()
    # Each memory's folder exists, user-only; no file is written before an agent runs but the lock
    # that keeps a second workbench out, holding this process's id.
    assert sorted(tmp_path.iterdir()) == [tmp_path / "extracted", tmp_path / "files"]
    assert {p.stat().st_mode & 0o777 for p in tmp_path.iterdir()} == {0o700}
    locks = sorted(p for p in tmp_path.rglob("*") if p.is_file())
    assert locks == [tmp_path / "extracted" / "lock", tmp_path / "files" / "lock"]
    assert {(p.read_text(), p.stat().st_mode & 0o777) for p in locks} == {(f"{os.getpid():>10}\n", 0o600)}


def test_the_default_folder_is_in_the_users_data_directory(monkeypatch, tmp_path):
    monkeypatch.setenv("WORKBENCH_DATA_DIR", str(tmp_path))
    assert default_directory() == tmp_path / "agent-memory"
    memory = AgentMemoryConfig.from_options("extracted", None).build()
    assert isinstance(memory, ExtractedMemory) and memory.root == tmp_path / "agent-memory" / "extracted"


def test_a_live_model_gets_the_function_loop(monkeypatch, tmp_path):
    asked: list[bool] = []
    from workbench.runtime import models

    build = models.build_models

    def recording(*args, **kwargs):
        asked.append(kwargs["function_calls"])
        return build(*args, **kwargs)

    monkeypatch.setattr("workbench.runtime.build_models", recording)
    runtime(
        "--model",
        "big",
        "--base-url",
        "http://127.0.0.1:1/v1",
        "--agent-memory",
        "files",
        "--agent-memory-dir",
        str(tmp_path / "live"),
    )
    runtime("--agent-memory", "files", "--agent-memory-dir", str(tmp_path / "scripted"))
    assert asked == [True, False]


def test_an_unknown_choice_is_refused(capsys):
    with pytest.raises(SystemExit):
        build_parser().parse_args(["--agent-memory", "mem9"])
    assert "invalid choice: 'mem9'" in capsys.readouterr().err
