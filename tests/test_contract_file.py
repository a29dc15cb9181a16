"""The contract a run declares: `workbench.toml` beside the agents or in the current folder (or
`--config FILE`) and `--keys`; anything wrong stops the start with one line naming the file or the option, and exit status 2."""

import asyncio
import json

import pytest

from workbench.cli import main
from workbench.cli.configs import contract_config
from workbench.cli.parser import parse
from workbench.contract_file import declared_contract
from workbench.memory import SEED, Contract
from workbench.persist.sessions import DIRECTORY, PersistedSessions
from workbench.runtime import ModelConfig, build_models
from workbench.runtime.config import WriterKind
from workbench.session.assemble import assemble

TEAM_TOML = """
[contract]
keys = ["service", "region", "owner"]
max_facts = 4
max_value_chars = 128
"""


def test_without_a_file_or_option_the_contract_is_the_seeds(tmp_path):
    assert declared_contract(None, None, [tmp_path]) is SEED


def test_workbench_toml_in_the_folder_declares_the_contract(tmp_path):
    (tmp_path / "workbench.toml").write_text(TEAM_TOML, encoding="utf-8")
    assert declared_contract(None, None, [tmp_path]) == Contract(("owner", "region", "service"), 4, 128)
    # --keys replaces the file's keys; the file's limits stay
    assert declared_contract(None, "a,b", [tmp_path]) == Contract(("a", "b"), 4, 128)


def test_each_setting_left_out_is_the_seeds(tmp_path):
    path = tmp_path / "team.toml"
    path.write_text("[contract]\nmax_facts = 8\n", encoding="utf-8")
    assert declared_contract(str(path), None) == Contract(SEED.keys, 8, SEED.max_value_chars)
    path.write_text("# nothing declared\n", encoding="utf-8")
    assert declared_contract(str(path), None) == SEED
    assert declared_contract(None, " service , region ", [tmp_path]) == Contract(("region", "service"))


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("[contract]\nkeys = [", "not TOML: "),
        ("[contract]\nkeys = ['a']\ncolour = 'teal'\n", "contract.colour: Extra inputs are not permitted"),
        ("[agents]\npath = 'x'\n", "agents: Extra inputs are not permitted"),
        ("[contract]\nkeys = 'service'\n", "contract.keys: Input should be a valid list"),
        ("[contract]\nmax_facts = '5'\n", "contract.max_facts: Input should be a valid integer"),
        ("[contract]\nkeys = ['a b']\n", 'the key "a b" is not an ASCII identifier of at most 32 characters'),
        ("[contract]\nkeys = []\n", "a contract declares 1 to 32 keys, not 0"),
        ("[contract]\nkeys = ['a', 'b', 'a']\n", '"a" given more than once; give each key once'),
        ("[contract]\nmax_facts = 21\n", "max_facts is a whole number from 1 to 20, not 21"),
        ("[contract]\nmax_value_chars = 5000\n", "max_value_chars is a whole number from 1 to 4,000, not 5000"),
    ],
)
def test_a_bad_file_stops_the_start_with_one_line_naming_it(tmp_path, monkeypatch, capsys, text, problem):
    (tmp_path / "workbench.toml").write_text(text, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    assert main([]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith(f"workbench: {tmp_path / 'workbench.toml'}: ")
    assert problem in err


@pytest.mark.parametrize(
    ("options", "problem"),
    [
        (["--keys", "service,,region"], '--keys: an empty key in "service,,region"'),
        (["--keys", "module,region,module"], '--keys: "module" given more than once; give each key once'),
        (["--keys", ","], "--keys: takes the contract's keys separated by commas"),
        (["--keys", "service,régión"], '--keys: the key "régión" is not an ASCII identifier'),
        (["--keys", ",".join(f"k{n}" for n in range(33))], "--keys: a contract declares 1 to 32 keys, not 33"),
        (["--config", "missing.toml"], "missing.toml: cannot be read (No such file or directory)"),
    ],
)
def test_a_bad_option_stops_the_start_with_one_line_naming_it(tmp_path, monkeypatch, capsys, options, problem):
    monkeypatch.chdir(tmp_path)
    for command in ([], ["qualify"], ["drift"]):
        assert main([*options, *command]) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and err.startswith("workbench: ") and problem in err


def test_a_bad_file_is_named_even_when_given_after_a_command(tmp_path, capsys):
    path = tmp_path / "team.toml"
    path.write_bytes(b"[contract]\nkeys = ['\xff']\n")
    assert main(["qualify", "--config", str(path)]) == 2
    assert capsys.readouterr().err == f"workbench: {path}: not UTF-8 text (byte 21)\n"


def test_qualify_keeps_the_seeds_suite_and_says_so_under_a_teams_contract(tmp_path, monkeypatch, capsys):
    (tmp_path / "workbench.toml").write_text(TEAM_TOML, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    assert main(["qualify", "--json"]) == 4
    data = json.loads(capsys.readouterr().out)
    assert (
        data["configured_contract"] == "keys owner, region, service; at most 4 facts; values of at most 128 characters"
    )
    assert "runs on the seed's contract (keys constraint, customer, database" in data["contract_note"]
    assert (data["passed"], data["total"]) == (8, 8)  # the same suite, the same verdicts
    assert main(["qualify", "--keys", "service,region"]) == 4
    tables = capsys.readouterr().out
    assert "The suite is fixed and runs on the seed's contract" in " ".join(tables.split())
    assert "keys region, service;" in " ".join(tables.split())


def test_a_workbench_toml_beside_the_agents_comes_before_the_current_folders(tmp_path, monkeypatch):
    agents, elsewhere = tmp_path / "agents", tmp_path / "elsewhere"
    agents.mkdir()
    elsewhere.mkdir()
    (agents / "workbench.toml").write_text(TEAM_TOML, encoding="utf-8")
    (elsewhere / "workbench.toml").write_text("[contract]\nkeys = ['other']\n", encoding="utf-8")
    (agents / "notes.py").write_text("", encoding="utf-8")
    monkeypatch.chdir(elsewhere)
    team = Contract(("owner", "region", "service"), 4, 128)
    assert contract_config(parse([str(agents)])) == team
    assert contract_config(parse([str(agents / "notes.py")])) == team  # a file: its folder
    assert contract_config(parse(["drift", str(agents)])) == team
    assert contract_config(parse([])) == Contract(("other",))
    assert contract_config(parse(["qualify", "--keys", "a"])) == Contract(("a",))


def test_workbench_forget_takes_only_a_key_of_the_contract(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    assert main(["forget", "module", "--yes", "--keys", "service,region"]) == 2
    assert capsys.readouterr().err == 'workbench forget: "module" is not a key; the keys: region, service\n'


async def test_workbench_remembered_prints_a_value_as_long_as_the_contract_allows(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("WORKBENCH_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.chdir(tmp_path)
    (tmp_path / "workbench.toml").write_text("[contract]\nkeys = ['note']\nmax_value_chars = 600\n", encoding="utf-8")
    long = "n" * 500
    persisted = PersistedSessions(tmp_path / "data" / DIRECTORY, contract=Contract(("note",), max_value_chars=600))
    session = assemble(build_models(ModelConfig()), persisted=persisted, writer=WriterKind.HOST)
    assert (await session.ask("support", f"note={long}")).result.ok
    persisted.close()
    code = await asyncio.to_thread(main, ["remembered", "--persist"])
    out = capsys.readouterr().out
    assert code == 0 and f'  note: "{long}"' in out
