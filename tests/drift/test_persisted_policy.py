"""The lab's persisted-history policy: the product's `--persist` files, reopened before every probe and
after every forget as a restart would, and the product's forget on them; cell by cell on the built-in
model's chronology."""

import asyncio
import io
import re
import sqlite3
from contextlib import closing

import pytest
from agent_framework import Agent, ContextProvider
from rich.console import Console

from workbench.drift import run_drift
from workbench.drift.persisted_policy import PersistedHistoryPolicy
from workbench.drift.policies import POLICIES
from workbench.drift.report import render
from workbench.drift.report_json import to_json
from workbench.files import InUse
from workbench.memory import SEED
from workbench.persist.sessions import PersistedSessions
from workbench.persist.state import STATE_FILE
from workbench.runtime import CallLog, ModelConfig, build_models
from workbench.runtime.calls import RecordingMiddleware

INFO = next(p for p in POLICIES if p.name == "persisted")


def policy_and_log() -> tuple[PersistedHistoryPolicy, CallLog]:
    models, calls = build_models(ModelConfig()), CallLog()

    def agent(name: str, providers: list[ContextProvider], instructions: str) -> Agent:
        recorder = RecordingMiddleware(calls, "agent", models.agent_label)
        return Agent(models.agent_client, instructions, name=name, context_providers=providers, middleware=[recorder])

    return PersistedHistoryPolicy(INFO, agent, SEED), calls


def sent(calls: CallLog) -> str:
    call = calls.latest(purpose="agent", origin="agent")
    assert call is not None
    return "\n".join(m.text for m in call.messages)


def holding(policy: PersistedHistoryPolicy, value: str) -> list[str]:
    return [p.name for p in policy.directory.rglob("*") if p.is_file() and value.encode() in p.read_bytes()]


async def test_a_probe_resumes_the_history_from_the_files_and_other_steps_run_on():
    policy, calls = policy_and_log()
    await policy.answer(1, "support", "module=Reporting")
    first_agents = dict(policy.agents)
    with pytest.raises(InUse):  # the workbench runs on between steps, as the app does
        PersistedSessions(policy.directory)
    await policy.answer(2, "support", "module=Billing")
    assert policy.agents == first_agents

    await policy.before_probe()
    PersistedSessions(policy.directory).close()  # free before a probe: the workbench has quit
    with closing(sqlite3.connect(policy.directory / STATE_FILE)) as edited, edited:  # what the next start reads
        edited.execute("UPDATE messages SET message = replace(message, 'Reporting', 'Edited')")
    await policy.answer(3, "support", "which module?")
    assert "module=Edited" in sent(calls) and "Reporting" not in sent(calls)
    assert all(policy.agents[r] is not first_agents[r] for r in first_agents)  # built again: a restart
    assert [m.text for m in policy.retained()][::2] == ["module=Edited", "module=Billing", "which module?"]
    await policy.close()


async def test_the_products_forget_replaces_both_sessions_and_leaves_no_byte_of_the_value():
    policy, calls = policy_and_log()
    await policy.answer(1, "support", "module=Reporting; customer=Contoso")
    await policy.answer(2, "logs", "customer=Contoso")
    assert holding(policy, "Contoso")
    await policy.forget("customer")
    assert holding(policy, "Contoso") == [] and holding(policy, "Reporting") == []
    assert policy.retained() == []  # as in the app: a forget starts both agents afresh
    await policy.answer(3, "support", "which module?")
    assert "Reporting" not in sent(calls) and "Contoso" not in sent(calls)
    directory = policy.directory
    await policy.close()
    assert not directory.exists()


@pytest.fixture(scope="module")
def report():
    return asyncio.run(run_drift(build_models(ModelConfig()), policies=["full", "persisted", "extracted"]))


def test_after_the_chronologys_forget_the_persisted_history_holds_nothing_said_before_it(report):
    for probe in ("restart", "scope"):
        cell = report.scores["persisted"][probe]
        assert cell.current_missing == ["constraint", "module", "database", "version", "environment"]
        assert cell.superseded == {"Reporting": False, "PostgreSQL": False}
        assert cell.prohibition is False and cell.forgotten == {"Contoso": False}
    kept = report.retained["persisted"]
    assert kept.messages == 8  # the four turns from the forget on, each a question and an answer
    assert kept.on_disk is not None and kept.on_disk > kept.chars  # JSON Lines and the session files
    assert report.accounting["persisted"].calls["agent"] == 10


def test_the_report_says_what_each_memory_keeps_on_disk(report):
    retained = {name: cost["retained_history"] for name, cost in to_json(report)["accounting"].items()}
    assert retained["full"]["bytes_on_disk"] is None  # in memory only
    assert retained["persisted"]["bytes_on_disk"] == report.retained["persisted"].on_disk
    assert retained["extracted"]["bytes_on_disk"] > 0
    console = Console(record=True, width=400, file=io.StringIO())  # read through export_text
    console.print(render(report, timing=False, chart=False))
    rows = re.findall(r"persisted history\s*│.*", console.export_text())
    assert f"{report.retained['persisted'].on_disk:,} bytes on disk" in rows[-1]  # the cost table's row
