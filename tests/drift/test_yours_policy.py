"""The user's agents in the drift lab: each in two rows, as configured and in the workbench, scored
like every other policy and named in the report."""

import asyncio
import json
import sys
from pathlib import Path

import pytest

from workbench.drift import run_drift
from workbench.drift.report import to_json
from workbench.loading import from_folder
from workbench.runtime import ModelConfig, build_models

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "agents"
YOURS = ["yours:notes", "yours:notes+facts", "yours:triage", "yours:triage+facts"]


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    data = tmp_path_factory.mktemp("example-data")
    before, env = set(sys.modules), dict(EXAMPLE_AGENTS_DATA=str(data))
    with pytest.MonkeyPatch.context() as patch:
        for name, value in env.items():
            patch.setenv(name, value)
        agents = from_folder(EXAMPLES)
        # The built-in policies these tests read beside them (every one of them runs in tests/drift/test_lab.py).
        yield (
            asyncio.run(run_drift(build_models(ModelConfig()), agents=agents, policies=["full", "window", *YOURS])),
            data,
        )
    for name in set(sys.modules) - before:
        del sys.modules[name]


def test_each_agent_runs_as_configured_and_in_the_workbench_beside_the_built_in_policies(report):
    drift, _ = report
    names = [p.name for p in drift.policies]
    assert names[:2] == ["full", "window"]
    assert names[-4:] == YOURS
    assert drift.titles["yours:triage+facts"] == "your agent triage, in the workbench"
    assert not drift.failures and not drift.unavailable.keys() & set(names[-4:])


def test_as_configured_its_history_keeps_the_corrected_and_forgotten_values_the_workbench_does_not(report):
    drift, _ = report
    configured, in_workbench = drift.scores["yours:triage"]["restart"], drift.scores["yours:triage+facts"]["restart"]
    assert configured.superseded == {"Reporting": True, "PostgreSQL": True}
    assert configured.forgotten == {"Contoso": True}
    assert in_workbench.superseded == {"Reporting": False, "PostgreSQL": False}
    assert in_workbench.forgotten == {"Contoso": False}
    assert in_workbench.current["module"] and in_workbench.current["database"]


def test_the_report_names_each_agents_memories_and_where_they_keep_the_story(report):
    drift, data = report
    described = {p["name"]: p["keeps"] for p in to_json(drift)["policies"]}
    assert "FileHistoryProvider" in described["yours:triage"]
    assert "FileMemoryProvider" in described["yours:notes+facts"]
    assert "keep them" in described["yours:notes"]
    assert any((data / "triage-history").glob("*.jsonl"))  # the lab ran the agent as configured: it kept them


def test_with_model_the_lab_runs_the_agents_on_that_model_instead_of_their_own(loopback):
    from agent_framework import Agent

    from workbench import ScriptedChatClient
    from workbench.loading import from_objects

    mine = Agent(ScriptedChatClient(), "You are my own agent.", name="mine")
    models = build_models(ModelConfig(model="loopback-model", base_url=loopback.base_url))
    drift = asyncio.run(run_drift(models, agents=from_objects([mine]), policies=["yours:mine", "yours:mine+facts"]))
    sent = [r for r in loopback.requests if "You are my own agent." in str(r.get("messages"))]
    assert len(sent) == 2 * drift.chronology.turns  # every turn of both rows went to the lab's model
    assert {r["model"] for r in sent} == {"loopback-model"}


@pytest.mark.parametrize(("chosen", "said"), [("full", False), ("full,yours:triage", True)])
def test_the_command_says_your_agents_run_only_when_their_rows_are_chosen(chosen, said, tmp_path, capsys):
    from workbench.cli import main

    before = set(sys.modules)
    try:
        with pytest.MonkeyPatch.context() as patch:
            patch.setenv("EXAMPLE_AGENTS_DATA", str(tmp_path))
            assert main(["drift", str(EXAMPLES), "--json", "--policies", chosen]) == 0
    finally:
        for name in set(sys.modules) - before:
            del sys.modules[name]
    captured = capsys.readouterr()
    assert [p["name"] for p in json.loads(captured.out)["policies"]] == chosen.split(",")
    assert ("your agents run as configured" in captured.err) is said
    assert any(tmp_path.rglob("*.jsonl")) is said  # triage's history: written only when it ran
