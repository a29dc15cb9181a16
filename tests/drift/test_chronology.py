"""The public chronology format: what a valid file means, and one clear message per problem."""

import re

import pytest

from workbench.drift import ChronologyError, load_chronology, load_chronology_file, parse_chronology, run_drift
from workbench.runtime import ModelConfig, build_models

SCRIPTED = build_models(ModelConfig())


def story(*steps, **top):
    return {"name": "t", "description": "d", **top, "steps": list(steps)}


def problems(data) -> list[str]:
    with pytest.raises(ChronologyError) as error:
        parse_chronology(data, "f.json")
    return error.value.problems


def test_the_built_in_chronology_round_trips_through_the_public_format():
    built_in = load_chronology()
    assert parse_chronology(built_in.to_file()) == built_in


@pytest.mark.parametrize(
    ("step", "expected"),
    [
        ({"say": "hi", "colour": "red"}, 'step 2, field "colour": unknown field; a step has say, agent, forget'),
        ({"probe": "p"}, "step 2, field \"probe\": a probe needs a question in 'say'"),
        ({"say": "hi", "forget": "password"}, 'step 2, field "forget": "password" is not a key that can be forgotten'),
        ({"say": "x" * 4097}, 'step 2, field "say": has 4,097 characters; at most 4,096'),
        ({"say": "hi", "agent": "billing"}, 'step 2, field "agent": should be one of "support", "logs", not "billing"'),
        ({"say": "   "}, 'step 2, field "say": a message must contain more than spaces'),
        ({}, "step 2, field \"say\": a step needs a message in 'say', a 'forget', or both"),
        ({"say": "hi", "expect": ["x"]}, "step 2, field \"expect\": 'expect' belongs to a probe"),
        ({"say": "module=Billing", "probe": "q"}, 'step 2, field "probe": a probe is a question'),
        ({"say": 3}, 'step 2, field "say": should be text (a JSON string), not a number'),
        (
            {"say": "hi?", "probe": "q", "forbid": "Reporting"},
            'step 2, field "forbid": should be a list ([...]), not text',
        ),
        ({"say": "hi?", "probe": ""}, 'step 2, field "probe": must not be empty'),
        ({"say": "hi?", "probe": "q", "expect": ["x"] * 21}, 'step 2, field "expect": has 21 items; at most 20'),
    ],
)
def test_each_problem_names_the_step_and_the_field(step, expected):
    found = problems(story({"say": "first?", "probe": "first"}, step))
    assert len(found) == 1 and found[0].startswith(expected), found


def test_every_problem_is_reported_not_only_the_first():
    found = problems(
        {
            "name": "t",
            "prohibition_key": "rule",
            "steps": [{"say": "hi", "forget": "nope"}, {"probe": "p"}, {"say": "a?", "probe": 1}],
            "extra": True,
        }
    )
    assert [p.split(":")[0] for p in found] == [
        'chronology, field "prohibition_key"',
        'chronology, field "extra"',
        'step 1, field "forget"',
        'step 2, field "probe"',
        'step 3, field "probe"',
    ]


def test_a_story_problem_is_listed_with_the_field_problems():
    """A duplicate probe id is reported beside the other problems, not only when it is the only one."""
    found = problems(story({"say": "a?", "probe": "p"}, {"say": "b?", "probe": "p"}, {"say": 3}, fillers_after=-1))
    assert found == [
        'chronology, field "fillers_after": should be 0 or more',
        'step 2, field "probe": "p" is already step 1\'s',
        'step 3, field "say": should be text (a JSON string), not a number',
    ]


@pytest.mark.parametrize(
    "data",
    [[], {"name": 1, "steps": "x"}, {"name": "t", "steps": [{"say": "a?", "probe": "p", "agent": 2, "expect": {}}]}],
)
def test_no_problem_names_a_python_or_pydantic_type(data):
    for problem in problems(data):
        words = set(re.findall(r"\w+", problem))
        assert not words & {"Input", "dictionary", "ChronologyFile", "StepFile", "str", "int", "dict", "list_type"}
        assert "Input should" not in problem, problem


def test_story_level_problems():
    found = problems(story({"say": "a?", "probe": "p"}, {"say": "b?", "probe": "p"}, fillers_after=5))
    assert found == [
        'chronology, field "fillers_after": 5 is past the last step (2)',
        'step 2, field "probe": "p" is already step 1\'s',
    ]
    assert problems(story({"say": "hello"})) == [
        'chronology, field "steps": no step is a probe, so nothing would be scored'
    ]
    assert problems([]) == ["chronology: should be a JSON object ({...}), not a list"]
    assert problems(story({"say": "a?", "probe": "p"}, "hi")) == ["step 2: should be a JSON object ({...}), not text"]
    assert problems(story(filler="module=x {n}"))[0].startswith(
        'chronology, field "filler": a filler turn must declare nothing'
    )


def test_files_that_are_not_json_or_cannot_be_read_say_so(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text('{"name": ', encoding="utf-8")
    with pytest.raises(ChronologyError, match=r"bad.json: 1 problem\n  not JSON: line 1, column 10"):
        load_chronology_file(bad)
    with pytest.raises(ChronologyError, match="cannot be read: No such file or directory"):
        load_chronology_file(tmp_path / "missing.json")
    latin1 = tmp_path / "latin1.json"
    latin1.write_bytes(b'{"name": "caf\xe9"}')
    with pytest.raises(ChronologyError) as error:
        load_chronology_file(latin1)
    assert error.value.problems == ["is not UTF-8 text: byte 14 (0xe9) is not valid UTF-8; save it as UTF-8"]


def test_hostile_field_names_are_echoed_bounded_and_escaped():
    (found,) = problems(story({"say": "q?", "probe": "q", "\x1b[31m" + "k" * 500: 1}))
    assert "\x1b" not in found and "\\x1b[31m" in found and len(found) < 200


TWO_AGENTS = story(
    {"say": "module=Reporting; database=PostgreSQL"},
    {"say": "log=/var/log/billing.log", "agent": "logs"},
    {"say": "module=Billing"},
    {"say": "Where can I find logs?", "agent": "logs", "probe": "logs"},
    {"forget": "all"},
    {"say": "Which module is it?", "probe": "module"},
    prohibition_key="constraint",
)


def test_expectations_are_derived_from_the_keys_a_question_names_or_taken_from_the_file():
    chronology = parse_chronology(TWO_AGENTS)
    logs, module = chronology.expectations
    assert (logs.agent, logs.expect, logs.forbid, logs.derived) == ("logs", ("/var/log/billing.log",), (), True)
    assert module.current == {} and module.forgotten == {
        "module": ("Billing", "Reporting"),
        "database": ("PostgreSQL",),
        "log": ("/var/log/billing.log",),
    }
    assert (module.expect, module.forbid) == ((), ("Billing", "Reporting"))
    given = parse_chronology(story({"say": "Which module?", "probe": "m", "expect": ["Billing"], "forbid": []}))
    assert (given.expectations[0].expect, given.expectations[0].forbid, given.expectations[0].derived) == (
        ("Billing",),
        (),
        False,
    )


async def test_each_policy_keeps_one_history_per_agent_and_the_facts_are_shared():
    report = await run_drift(SCRIPTED, chronology=parse_chronology(TWO_AGENTS), policies=["full", "summary", "facts"])
    assert not report.partial
    # Five user turns (the forget-only step calls nothing): support saw 3 messages, logs 2.
    assert [s is None for s in report.sizes["full"]] == [False, False, False, False, True, False]
    logs = {name: cells["logs"] for name, cells in report.scores.items()}
    # The logs agent's history holds only what was said to it (no database); the facts hold both agents'
    # declarations. "Billing" is held all the same: the log path holds "billing" whole, and case is folded.
    assert logs["full"].current == {"module": True, "database": False, "log": True}
    assert logs["facts"].current == {"module": True, "database": True, "log": True}
    assert logs["facts"].answer_score.expected == {"/var/log/billing.log": True}
    module = {name: cells["module"] for name, cells in report.scores.items()}
    # Forget all reaches the bounded facts; the others received no words at all about it.
    assert module["facts"].forgotten == {
        "Billing": False,
        "Reporting": False,
        "PostgreSQL": False,
        "/var/log/billing.log": False,
    }
    assert module["full"].forgotten["Billing"] is True and module["full"].forgotten["/var/log/billing.log"] is False
    assert report.retained["full"].messages == 10  # 3 exchanges with support + 2 with logs
    assert report.accounting["summary"].calls["summarizer"] == 5


def test_expectations_take_only_what_the_apps_admission_would_take():
    """One rule: a batch the app rejects whole (a look-alike key, an empty value, six keys) sets nothing."""
    story = {
        "name": "rejected batches",
        "steps": [
            {"say": "module=Reporting"},
            {"say": "module=Billing; m\u043edule=Sales"},
            {"say": "module=Invoicing; priority="},
            {"say": "module=Tax; product=a; priority=b; database=c; version=d; customer=e"},
            {"say": "Which module is it?", "probe": "q"},
        ],
    }
    (expectation,) = parse_chronology(story).expectations
    assert expectation.current == {"module": "Reporting"} and expectation.superseded == {}


def test_a_probe_about_the_prohibition_expects_it_and_may_list_paraphrases():
    data = story(
        {"say": "constraint=no restarts on Fridays; database=PostgreSQL"},
        {"say": "database=SQL Server 2022"},
        {"say": "Can we restart the database?", "probe": "r", "about_prohibition": True, "expect_any": ["not today"]},
        {"say": "Can we restart now?", "probe": "given", "about_prohibition": True, "expect": ["no"]},
        prohibition_key="constraint",
    )
    derived, given = parse_chronology(data).expectations
    assert (derived.expect, derived.expect_any, derived.forbid) == (
        (),
        ("no restarts on Fridays", "not today"),
        ("PostgreSQL",),
    )
    assert "prohibition" in derived.why and derived.derived
    assert (given.expect, given.expect_any, given.why) == (("no",), (), "given in the chronology")
    assert parse_chronology(parse_chronology(data).to_file()).expectations == (derived, given)
    del data["prohibition_key"]
    with pytest.raises(ChronologyError, match="'prohibition_key'"):
        parse_chronology(data)
    with pytest.raises(ChronologyError, match="'expect_any' belongs to a probe"):
        parse_chronology(story({"say": "hello", "expect_any": ["x"]}, {"say": "Which module?", "probe": "m"}))
