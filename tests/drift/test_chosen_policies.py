"""`workbench drift --policies` and `run_drift(policies=...)`: only the chosen policies are built and run,
the report has only them and says which were left out, and an unknown name stops before anything runs."""

import json

import pytest
from agent_framework import Agent

from workbench import ScriptedChatClient
from workbench.cli import main
from workbench.drift import POLICIES, DriftReport, load_chronology, run_drift
from workbench.drift.catalog import UnknownPolicy, chosen_policies
from workbench.drift.report import chosen_note
from workbench.loading import from_objects
from workbench.runtime import ModelConfig, build_models

SCRIPTED = build_models(ModelConfig())
ALL = [p.name for p in POLICIES]


async def test_only_the_chosen_policies_run_in_the_reports_order_and_the_others_are_named_as_left_out():
    report = await run_drift(SCRIPTED, policies=["extracted", "facts", "full", "facts"])
    ran = ["full", "facts", "extracted"]
    assert [p.name for p in report.policies] == ran
    assert report.left_out == tuple(name for name in ALL if name not in ran)
    for measured in (report.scores, report.sizes, report.accounting, report.retained):
        assert list(measured) == ran
    assert report.unavailable == {} and report.failures == {}


async def test_only_the_chosen_policies_are_built(monkeypatch):
    """Building costs too (temporary folders, agents, stores): a policy left out is never built."""
    from workbench.drift.agentmem_policy import build_agent_memory_policies as real

    built: list[list[str]] = []

    def recording(infos, *rest):
        built.append([info.name for info in infos])
        return real(infos, *rest)

    monkeypatch.setattr("workbench.drift.catalog.build_agent_memory_policies", recording)
    await run_drift(SCRIPTED, policies=["full"])
    assert built == []
    await run_drift(SCRIPTED, policies=["extracted", "full"])
    assert built == [["extracted"]]


def test_the_command_reports_only_the_chosen_policies(capsys, monkeypatch):
    assert main(["drift", "--json", "--turns", "12", "--policies", "facts,full"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert [p["name"] for p in data["policies"]] == ["full", "facts"]
    assert data["left_out"] == [name for name in ALL if name not in ("full", "facts")]
    for key in ("matrix", "accounting", "request_chars_by_turn"):
        assert list(data[key]) == ["full", "facts"], key
    assert list(data["intake"]) == ["facts"]  # full history's is no memory that can refuse what it is handed
    assert data["unavailable"] == {}  # memory files and Mem0 were not asked for: nothing to say they need

    monkeypatch.setenv("COLUMNS", "200")
    assert main(["drift", "--turns", "12", "--policies", "facts,full"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("drift lab · billing-export · 12 turns · 2 of 11 policies chosen · ")
    rows = {line.split("│")[1].strip() for line in out.splitlines() if line.startswith("│ ")}
    assert {"full history", "bounded facts"} <= rows
    assert not rows & {p.title for p in POLICIES if p.name not in ("full", "facts")}
    assert "b bounded facts" in out and "f full history" in out and "w last" not in out  # the chart's legend


def test_a_run_of_every_policy_names_none_as_left_out():
    assert chosen_note(DriftReport(load_chronology(), "m", live=False)) == ""


def test_the_sweep_runs_only_the_chosen_policies(capsys):
    assert main(["drift", "--sweep", "10,12", "--policies", "window", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["left_out"] == [name for name in ALL if name != "window"]
    assert [list(run["policies"]) for run in data["runs"]] == [["window"], ["window"]]
    assert [list(run["request_chars_by_turn"]) for run in data["runs"]] == [["window"], ["window"]]


def test_an_unknown_name_is_shown_literally_and_bounded():
    name = "\x1b[31mred\u202e" + "x" * 500
    with pytest.raises(UnknownPolicy) as raised:
        chosen_policies([name])
    line = str(raised.value)
    assert "\n" not in line and "\x1b" not in line and "\u202e" not in line
    assert '"\\x1b[31mred\\u202e' in line and "x" * 100 not in line and "mem0" in line


async def test_run_drift_refuses_an_unknown_or_empty_choice_before_anything_runs():
    seen: list[object] = []
    for names in (["full", "nope"], []):
        with pytest.raises(UnknownPolicy):
            await run_drift(SCRIPTED, policies=names, progress=lambda *step: seen.append(step))
    assert seen == []


async def test_your_agents_policies_are_chosen_by_their_names():
    mine = Agent(ScriptedChatClient(), "You are my own agent.", name="mine")
    agents = from_objects([mine])
    with pytest.raises(UnknownPolicy, match=r"the policies: full, .*, mem0, yours:mine, yours:mine\+facts$"):
        chosen_policies(["yours:mine+fact"], agents)
    report = await run_drift(SCRIPTED, agents=agents, policies=["yours:mine+facts", "facts"])
    assert [p.name for p in report.policies] == ["facts", "yours:mine+facts"]
    assert "yours:mine" in report.left_out and set(report.scores["yours:mine+facts"]) == {"restart", "scope"}


def test_a_failure_of_the_only_policy_chosen_does_not_say_the_others_went_on(loopback, capsys):
    from tests.support.openai_server import Canned

    loopback.state.responder = lambda body: (
        Canned(text="") if "summarizer agent" in body["messages"][0]["content"] else None
    )
    assert main(["drift", "--model", "m", "--base-url", loopback.base_url, "--json", "--policies", "summary"]) == 0
    err = capsys.readouterr().err
    assert err == "workbench drift: generated summary: failed (the report above marks the cells)\n"
