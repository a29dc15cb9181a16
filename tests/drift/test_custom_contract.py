"""The drift lab under a team's contract: a chronology is read under the run's contract (its forgets,
its prohibition, its messages' admission); a story written for another contract is refused in words;
the built-in story is the seed's and runs on the seed's contract, saying so."""

import json

import pytest

from workbench.chronology import ChronologyError, load_chronology, parse_chronology
from workbench.cli import main
from workbench.memory import SEED, Contract

TEAM = Contract(("service", "region", "owner", "rule"))
TEAM_STORY = {
    "name": "team",
    "prohibition_key": "rule",
    "filler": "Filler {n}: nothing declared.",
    "steps": [
        {"say": "service=billing-api; region=eu-west; rule=no deploys on Friday"},
        {"say": "region=us-east"},
        {"say": "owner=payments", "agent": "logs"},
        {"forget": "owner"},
        {"say": "Which region and owner?", "probe": "where"},
    ],
}


def problems(data, contract: Contract) -> list[str]:
    with pytest.raises(ChronologyError) as error:
        parse_chronology(data, "f.json", contract)
    return error.value.problems


def test_a_story_is_read_under_the_teams_contract():
    story = parse_chronology(TEAM_STORY, "team.json", TEAM)
    assert story.contract == TEAM
    (probe,) = story.expectations
    assert probe.current == {"service": "billing-api", "region": "us-east", "rule": "no deploys on Friday"}
    assert probe.prohibition == "no deploys on Friday"
    assert probe.expect == ("us-east",) and set(probe.forbid) == {"eu-west", "payments"}
    assert story.stretched(8).contract == TEAM


def test_a_story_for_another_contract_is_refused_in_words():
    assert problems(TEAM_STORY, SEED) == [
        'chronology, field "prohibition_key": "rule" is not an allowed key (' + ", ".join(SEED.keys) + ")",
        'chronology, field "steps": its messages declare only keys outside the contract ("owner", "region", '
        '"rule", "service"); the contract\'s keys are ' + ", ".join(SEED.keys) + " (workbench.toml or --keys)",
        'step 4, field "forget": "owner" is not a key that can be forgotten; use one of '
        + ", ".join(SEED.keys)
        + ', or "all"',
    ]
    seed_story = load_chronology().to_file()
    found = problems(seed_story, TEAM)
    assert (
        'chronology, field "prohibition_key": "constraint" is not an allowed key (owner, region, rule, service)'
        in found
    )
    assert any('its messages declare only keys outside the contract ("constraint", "customer",' in p for p in found)


def test_a_story_may_still_hold_a_rejected_declaration_of_an_unknown_key():
    data = {"name": "t", "steps": [{"say": "service=api; colour=teal"}, {"say": "Which service?", "probe": "s"}]}
    (probe,) = parse_chronology(data, "t.json", TEAM).expectations
    assert probe.current == {}  # the batch is rejected whole, as the app rejects it


def test_the_lab_runs_a_teams_story_on_its_contract(tmp_path, capsys):
    path = tmp_path / "team.json"
    path.write_text(json.dumps(TEAM_STORY), encoding="utf-8")
    keys = ["--keys", "service,region,owner,rule"]
    assert main(["drift", "--json", *keys, "--chronology", str(path), "--policies", "facts"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["intake"]["facts"]["batches"] == 3 and data["intake"]["facts"]["batches_rejected"] == 0
    cell = data["matrix"]["facts"]["where"]
    assert cell["current"] == {"region": True, "rule": True, "service": True}  # each current value was sent
    assert cell["forgotten"] == {"payments": False} and cell["superseded"] == {"eu-west": False}
    assert main(["drift", "--chronology", str(path)]) == 2  # under the seed's contract
    err = capsys.readouterr().err
    assert err.startswith(f"workbench drift: {path}: 3 problems\n")  # a chronology's problems, one a line
    assert "its messages declare only keys outside the contract" in err


def test_the_built_in_story_runs_on_the_seeds_contract_and_says_so(capsys):
    assert main(["drift", "--json", "--turns", "12", "--keys", "service,region", "--policies", "facts"]) == 0
    captured = capsys.readouterr()
    assert json.loads(captured.out)["intake"]["facts"]["batches_rejected"] == 0
    assert captured.err == (
        "workbench drift: the built-in chronology is the seed's story: it runs on the seed's contract, not this "
        "run's (keys region, service; at most 5 facts; values of at most 256 characters); give your own with "
        "--chronology FILE\n"
    )
