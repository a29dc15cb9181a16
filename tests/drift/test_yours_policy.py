"""The user's agents in the drift lab: each in two rows, as configured and in the workbench, scored
like every other policy and named in the report."""

import asyncio
import io
import json
import sys
from pathlib import Path

import pytest

from workbench.drift import run_drift
from workbench.drift.report_json import to_json
from workbench.loading import from_folder
from workbench.runtime import ModelConfig, build_models
from workbench.runtime.scripted import SCRIPTED_LABEL

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
    policies = {p["name"]: p for p in to_json(drift)["policies"]}
    assert "FileHistoryProvider" in policies["yours:triage"]["keeps"]
    assert "FileMemoryProvider" in policies["yours:notes+facts"]["keeps"]
    [triage] = policies["yours:triage"]["agents"]
    assert triage["memories"][0].startswith(f"FileHistoryProvider: on a copy of {data / 'triage-history'}")
    [notes] = policies["yours:notes"]["agents"]
    assert notes["memories"][0].startswith(f"FileMemoryProvider: on a copy of {data / 'notes-memory'}")
    assert not any(data.rglob("*.*"))  # the lab kept the story on its copies, removed since: none here
    for name in YOURS:
        assert [r["verified"] for r in policies[name]["removed"]] == [True]


def test_agents_on_the_built_in_model_are_said_to_be_answered_by_no_model(report):
    drift, _ = report
    data = to_json(drift)
    assert data["live"] is False
    for policy in data["policies"]:
        assert policy["live"] is False
        assert {a["model"] for a in policy["answered_by"]} == {SCRIPTED_LABEL}
    assert data["policies"][-1]["agents"][0]["client"] == SCRIPTED_LABEL


def test_the_text_report_shows_each_agents_client_and_memories(report):
    from rich.console import Console

    from workbench.drift.report import render
    from workbench.tables import UNWRAPPED_WIDTH

    drift, data = report
    out = io.StringIO()
    Console(file=out, width=UNWRAPPED_WIDTH).print(render(drift, timing=False, chart=False))
    text = out.getvalue()
    assert "your agents: their clients, what answered and where their memories were kept" in text
    assert f"FileMemoryProvider: on a copy of {data / 'notes-memory'}" in text
    assert "the built-in model, no model (not live)" in text


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
    assert ("your agents' memories run on stores of the lab's own" in captured.err) is said
    if said:  # a FileHistoryProvider and a FileMemoryProvider: folders, no Redis server named
        assert (
            "your agents' memories run on stores of the lab's own (copies of their folders), removed afterwards; "
            "your own stores are not written"
        ) in captured.err
        assert "Redis" not in captured.err
    assert not any(tmp_path.rglob("*.jsonl"))  # triage's history: on the lab's copy, never here
