"""workbench.toml's `[start]` table: the start options a team fixes for its project, read with the contract
from one parse of the file, below the command line and the environment and above the defaults; a wrong
table stops every command with one line naming the file and the key (exit 2), and no secret is read."""

from pathlib import Path

import pytest

import workbench.contract_file
from workbench.build.config import StartConfig
from workbench.cli import main
from workbench.cli.parser import parse
from workbench.cli.start import named_in_file, notices
from workbench.loading import Loaded
from workbench.memory import Contract
from workbench.runtime.config import DEFAULT_MAX_TOKENS, ConfigError, Mode, WriterFormat, WriterKind

KEY = "sk-not-a-real-key-7731"
TEAM = """
[contract]
keys = ["service", "owner"]

[start]
model = "team-model"
base_url = "http://localhost:1/v1"
writer_model = "team-writer"
writer_format = "prompt"
timeout = 30
max_tokens = 300
mode = "provider"
writer = "host"
recall = true
recall_store = "memory"
agent_memory = "files"
agent_memory_dir = "team-memory"
"""


@pytest.fixture
def team(tmp_path, monkeypatch) -> Path:
    """A project folder holding the team's workbench.toml, the current folder."""
    (tmp_path / "workbench.toml").write_text(TEAM, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_the_files_start_options_apply_where_the_command_line_and_the_environment_give_none(team):
    start = StartConfig.read(parse([]), environ={})
    model = start.model
    assert (model.model, model.base_url, model.writer_model) == ("team-model", "http://localhost:1/v1", "team-writer")
    assert (model.writer_format, model.timeout, model.max_tokens) == (WriterFormat.PROMPT, 30, 300)
    assert (start.mode, start.writer) == (Mode.PROVIDER, WriterKind.HOST)
    assert (start.recall.enabled, start.recall.store) == (True, "memory")
    assert start.agent_memory.kind == "files"
    assert start.agent_memory.root == (team / "team-memory").resolve()  # the file's folder's
    assert start.contract == Contract(("service", "owner"))  # the same file, the same parse
    assert start.model_from == f"{team / 'workbench.toml'} [start]"
    assert named_in_file(start) == (
        f"the model team-model is named in {team / 'workbench.toml'} [start]; --model on the command line comes first"
    )
    assert notices(start, Loaded()) == {"workbench.toml": named_in_file(start)}  # not titled as your agents' notice


def test_the_command_line_comes_before_the_file(team):
    args = parse(["--model", "mine", "--timeout", "5", "--max-tokens", "64", "--mode", "manual", "--writer", "model"])
    start = StartConfig.read(args, environ={})
    assert (start.model.model, start.model.timeout, start.model.max_tokens) == ("mine", 5, 64)
    assert (start.mode, start.writer) == (Mode.MANUAL, WriterKind.MODEL)
    assert start.model.base_url == "http://localhost:1/v1"  # what the command line left out is still the file's
    assert start.model_from is None and named_in_file(start) is None
    after_the_command = StartConfig.read(parse(["qualify", "--model", "mine", "--timeout", "5"]), environ={})
    assert (after_the_command.model.model, after_the_command.model.timeout) == ("mine", 5)


def test_the_environment_comes_before_the_file(team, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("AZURE_OPENAI_ENDPOINT", raising=False)
    monkeypatch.setenv("OPENAI_BASE_URL", "http://localhost:2/v1")
    monkeypatch.setenv("WORKBENCH_RECALL_POSTGRES", "postgresql://db/recall")  # read where the store opens
    start = StartConfig.read(parse([]))
    assert start.model.base_url == "http://localhost:2/v1"
    assert (start.recall.store, start.recall.postgres) == (None, "postgresql://db/recall")
    assert start.model.model == "team-model"  # no variable names a model for OpenAI: the file's


def test_the_defaults_come_last(tmp_path, monkeypatch):
    (tmp_path / "workbench.toml").write_text("[start]\nmode = 'manual'\n", encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    start = StartConfig.read(parse([]), environ={"OPENAI_API_KEY": KEY})
    assert start.model.model is None  # a key in the environment alone names no model
    assert (start.model.timeout, start.model.max_tokens, start.recall.enabled) == (120, DEFAULT_MAX_TOKENS, False)
    assert start.mode == Mode.MANUAL and start.writer is None and start.agent_memory.kind is None
    assert parse([]).timeout is None and parse([]).recall is None  # what the file may give is left out


def test_config_names_the_file_for_the_contract_and_the_start_options(tmp_path, monkeypatch):
    (tmp_path / "workbench.toml").write_text("[start]\nmode = 'manual'\n", encoding="utf-8")  # not read
    named = tmp_path / "elsewhere" / "team.toml"
    named.parent.mkdir()
    named.write_text(TEAM, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    start = StartConfig.read(parse(["--config", str(named)]), environ={})
    assert start.contract == Contract(("service", "owner")) and start.mode == Mode.PROVIDER
    assert start.agent_memory.root == (named.parent / "team-memory").resolve()
    assert start.model_from == f"{named} [start]"


def test_the_file_is_parsed_once_for_the_contract_and_the_start_options(team, monkeypatch):
    parsed = workbench.contract_file._parsed
    paths: list[Path] = []

    def counted(path):
        paths.append(path)
        return parsed(path)

    monkeypatch.setattr(workbench.contract_file, "_parsed", counted)
    start = StartConfig.read(parse([]), environ={})
    assert paths == [team / "workbench.toml"]
    assert start.contract == Contract(("service", "owner")) and start.model.model == "team-model"


def test_a_model_the_file_names_is_checked_as_one_given_on_the_command_line(tmp_path, monkeypatch, capsys):
    (tmp_path / "workbench.toml").write_text("[start]\nmodel = 'team-model'\n", encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ConfigError, match=r"needs a key: .* \(with model from .*workbench\.toml \[start\]\)$"):
        StartConfig.read(parse([]), environ={})
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    monkeypatch.delenv("AZURE_OPENAI_ENDPOINT", raising=False)
    assert main(["qualify"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"(with model from {tmp_path / 'workbench.toml'} [start])" in err


@pytest.mark.parametrize(
    ("table", "problem"),
    [
        ("colour = 'teal'", "[start] colour is not a start option; the keys: model, base_url, writer_model,"),
        ("base-url = 'http://x/v1'", "[start] base-url is not a start option; the keys: "),
        ("timeout = 'fast'", "[start] timeout: expected a number of seconds, more than 0, not a string"),
        ("timeout = 0", "[start] timeout: expected a number of seconds, more than 0, not 0"),
        ("max_tokens = 1.5", "[start] max_tokens: expected a whole number of tokens, more than 0, not 1.5"),
        ("max_tokens = -5", "[start] max_tokens: expected a whole number of tokens, more than 0, not -5"),
        ("recall = 'yes'", "[start] recall: expected true or false, not a string"),
        ("mode = 'auto'", '[start] mode: expected one of manual, provider, not "auto"'),
        ("model = ''", "[start] model: expected a string, not an empty string"),
        ("agent_memory = 'notes'", '[start] agent_memory: expected one of files, extracted, mem0, not "notes"'),
    ],
)
def test_a_wrong_start_table_stops_every_command_with_one_line(tmp_path, monkeypatch, capsys, table, problem):
    (tmp_path / "workbench.toml").write_text(f"[start]\n{table}\n", encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    for command in ([], ["qualify"], ["drift"], ["remembered"]):
        assert main(command) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and err.startswith(f"workbench: {tmp_path / 'workbench.toml'}: {problem}")


@pytest.mark.parametrize(
    ("table", "key"),
    [
        (f"api_key = '{KEY}'", "api_key"),
        (f"OPENAI_API_KEY = '{KEY}'", "OPENAI_API_KEY"),
        (f"recall_store = 'postgresql://me:{KEY}@db/recall'", "recall_store"),
    ],
)
def test_a_secret_in_the_file_is_refused_without_showing_it(tmp_path, monkeypatch, capsys, table, key):
    (tmp_path / "workbench.toml").write_text(f"[start]\n{table}\n", encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    assert main([]) == 2
    err = capsys.readouterr().err
    assert err == (
        f"workbench: {tmp_path / 'workbench.toml'}: [start] {key}: a secret is not read from a file; set it in the "
        "environment (OPENAI_API_KEY, AZURE_OPENAI_API_KEY, WORKBENCH_RECALL_POSTGRES) and remove it from the file\n"
    )
    assert KEY not in err


def test_another_table_is_refused_naming_the_tables(tmp_path, monkeypatch, capsys):
    (tmp_path / "workbench.toml").write_text("start = 'fast'\n", encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    assert main([]) == 2
    assert capsys.readouterr().err.startswith(
        f"workbench: {tmp_path / 'workbench.toml'}: start: a table, [start], is expected (the file holds a [contract]"
    )


@pytest.mark.parametrize("command", [[], ["drift"], ["qualify"], ["remembered"], ["forget"]])
def test_the_help_does_not_change_with_the_file(tmp_path, monkeypatch, capsys, command):
    """The options' defaults moved from the parser to the start configuration; --help still says them."""
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SystemExit):
        main([*command, "--help"])
    without = capsys.readouterr().out
    (tmp_path / "workbench.toml").write_text(TEAM, encoding="utf-8")
    with pytest.raises(SystemExit):
        main([*command, "--help"])
    assert capsys.readouterr().out == without
    if command in ([], ["drift"], ["qualify"]):
        assert "seconds per model call (default: 120)" in without
        assert f"(default: {DEFAULT_MAX_TOKENS})" in " ".join(without.split())
