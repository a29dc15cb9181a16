"""The drift lab on the built-in model, checked cell by cell against what the chronology implies."""

import json
import re
from typing import Any

import pytest
from rich.console import Console

from workbench.drift import MAX_SUMMARY_CHARS, lab, load_chronology, run_drift
from workbench.drift.tally import LabCallLog
from workbench.memory import SEED
from workbench.runtime import ModelConfig, build_models
from workbench.runtime.calls import CallRecord
from workbench.runtime.scripted import ScriptedChatClient

SCRIPTED = build_models(ModelConfig())


def test_the_chronology_implies_a_correction_an_eviction_pressure_and_a_forget():
    story = load_chronology()
    assert story.turns == 10
    restart, scope = story.expectations
    assert (restart.probe, scope.probe) == ("restart", "scope")
    assert restart.current == {
        "constraint": "no downtime during business hours",
        "module": "Billing",
        "database": "SQL Server 2022",
        "version": "12.4",
        "environment": "production",
    }
    assert restart.superseded == {"module": ("Reporting",), "database": ("PostgreSQL",)}
    assert restart.prohibition == "no downtime during business hours"
    assert restart.forgotten == {"customer": ("Contoso",)}
    assert sum(1 for s in story.steps if "=" in (s.say or "")) == 5  # six keys declared: one more than the store holds


def test_stretching_inserts_fillers_that_declare_nothing():
    story = load_chronology().stretched(25)
    assert story.turns == 25
    assert story.expectations == load_chronology().expectations
    assert (story.steps[4].say or "").startswith("Still looking") and story.steps[-1].probe == "scope"
    with pytest.raises(ValueError, match="at least 10 turns"):
        load_chronology().stretched(9)


@pytest.fixture(scope="module")
def report():
    import asyncio

    return asyncio.run(run_drift(SCRIPTED))


def cells(report, policy, probe):
    return report.scores[policy][probe]


def test_full_history_holds_everything_said_including_what_was_replaced_and_forgotten(report):
    for probe in ("restart", "scope"):
        cell = cells(report, "full", probe)
        assert all(cell.current.values())
        assert cell.superseded == {"Reporting": True, "PostgreSQL": True}
        assert cell.prohibition is True
        assert cell.forgotten == {"Contoso": True}


def test_the_window_loses_the_prohibition(report):
    for probe in ("restart", "scope"):
        cell = cells(report, "window", probe)
        assert cell.prohibition is False and cell.current_missing == ["constraint"]
        assert cell.forgotten == {"Contoso": True}  # the user's request to forget is only words here
    # The old user messages left the window, but an answer inside it repeated the old values.
    assert cells(report, "window", "restart").superseded == {"Reporting": True, "PostgreSQL": True}
    assert cells(report, "window", "scope").superseded == {"Reporting": False, "PostgreSQL": False}


def test_bounded_facts_hold_the_corrected_values_and_nothing_forgotten_but_evicted_the_prohibition(report):
    for probe in ("restart", "scope"):
        cell = cells(report, "facts", probe)
        assert cell.current == {
            "constraint": False,
            "module": True,
            "database": True,
            "version": True,
            "environment": True,
        }
        assert cell.superseded == {"Reporting": False, "PostgreSQL": False}
        assert cell.forgotten == {"Contoso": False}
        assert cell.prohibition is False


def test_the_summary_keeps_latest_values_and_the_forgotten_one(report):
    cell = cells(report, "summary", "scope")
    assert all(cell.current.values()) and cell.prohibition is True
    assert cell.superseded == {"Reporting": False, "PostgreSQL": False}
    assert cell.forgotten == {"Contoso": True}


def test_request_compaction_keeps_the_history_a_reducer_drops_it(report):
    for probe in ("restart", "scope"):
        assert cells(report, "compaction", probe).current == cells(report, "window", probe).current
    assert report.retained["window"].messages == 6
    assert report.retained["compaction"].messages == report.retained["full"].messages == 20
    assert report.retained["facts"].messages == 0


def test_accounting_counts_every_call_and_reports_unknown_without_usage(report):
    calls = {name: cost.calls for name, cost in report.accounting.items()}
    assert calls == {
        "full": {"agent": 10, "writer": 0, "summarizer": 0, "memory": 0, "embeddings": 0},
        "window": {"agent": 10, "writer": 0, "summarizer": 0, "memory": 0, "embeddings": 0},
        "summary": {"agent": 10, "writer": 0, "summarizer": 10, "memory": 0, "embeddings": 0},
        "facts": {"agent": 10, "writer": 5, "summarizer": 0, "memory": 0, "embeddings": 0},
        "compaction": {"agent": 10, "writer": 0, "summarizer": 0, "memory": 0, "embeddings": 0},
        "recall": {"agent": 10, "writer": 0, "summarizer": 0, "memory": 0, "embeddings": 20},
        "recall_purged": {"agent": 10, "writer": 0, "summarizer": 0, "memory": 0, "embeddings": 20},
        "persisted": {"agent": 10, "writer": 0, "summarizer": 0, "memory": 0, "embeddings": 0},
        "extracted": {
            "agent": 10,
            "writer": 0,
            "summarizer": 0,
            "memory": 10,
            "embeddings": 0,
        },  # one extraction a turn
    }
    assert all(cost.reported is None for cost in report.accounting.values())
    assert all(cost.estimate == cost.request_chars // 4 for cost in report.accounting.values())
    assert report.accounting["window"].request_chars < report.accounting["full"].request_chars


async def test_a_policy_chosen_alone_measures_what_it_measures_in_the_whole_run(report):
    """The built-in model is deterministic and the policies share nothing: choosing some changes no cell."""
    chosen = ["facts", "recall_purged", "extracted"]
    alone = await run_drift(SCRIPTED, policies=chosen)
    assert list(alone.scores) == chosen
    for name in chosen:
        assert alone.scores[name] == report.scores[name], name
        assert alone.sizes[name] == report.sizes[name], name
        assert alone.accounting[name].calls == report.accounting[name].calls, name
        # Extracted memory's topic files say when they were written, to the second: their sizes may differ.
        assert alone.retained[name].messages == report.retained[name].messages, name
    assert alone.retained["facts"] == report.retained["facts"]
    assert alone.retained["recall_purged"] == report.retained["recall_purged"]


async def test_bounded_facts_stay_flat_as_the_conversation_grows():
    short, long = [await run_drift(SCRIPTED, turns=n, policies=["full", "facts"]) for n in (10, 60)]
    growth = cells(long, "facts", "scope").request_chars - cells(short, "facts", "scope").request_chars
    assert 0 <= growth <= 8  # only the turn numbers in the block gain digits
    assert cells(long, "full", "scope").request_chars > 3 * cells(short, "full", "scope").request_chars


@pytest.mark.parametrize(
    ("summary", "reason"),
    [("   ", "empty summary"), ("x" * (MAX_SUMMARY_CHARS + 1), f"{MAX_SUMMARY_CHARS + 1} characters")],
)
async def test_a_bad_summary_fails_that_policy_without_replacement(loopback, summary, reason):
    from tests.support.openai_server import Canned

    loopback.state.responder = lambda body: (
        Canned(text=summary) if "summarizer agent" in body["messages"][0]["content"] else None
    )
    models = build_models(ModelConfig(model="loopback-model", base_url=loopback.base_url, max_retries=0))
    report = await run_drift(models, policies=["full", "summary", "facts", "recall_purged"])
    assert not report.partial and list(report.failures) == ["summary"]
    failure = report.failures["summary"]
    assert failure.turn == 1 and reason in failure.reason and "no replacement text" in failure.reason
    # What was measured before the failure is kept, and the policies after it ran.
    assert report.scores["summary"] == {} and set(report.scores["full"]) == {"restart", "scope"}
    assert report.accounting["summary"].calls == {
        "agent": 1,
        "writer": 0,
        "summarizer": 1,
        "memory": 0,
        "embeddings": 0,
    }
    assert set(report.scores["recall_purged"]) == {"restart", "scope"}


async def test_a_stop_at_turn_n_keeps_every_earlier_turn(loopback):
    from tests.support.openai_server import Canned

    def responder(body):
        said = json.dumps(body["messages"])
        if "summarizer agent" in said and "environment=production" in said:
            return Canned(text="x" * (MAX_SUMMARY_CHARS + 62))
        return None

    loopback.state.responder = responder
    models = build_models(ModelConfig(model="loopback-model", base_url=loopback.base_url, max_retries=0))
    report = await run_drift(models, policies=["summary"])
    assert report.stop is None and report.failures["summary"].turn == 6
    assert f"{MAX_SUMMARY_CHARS + 62} characters" in report.failures["summary"].reason
    assert len(report.sizes["summary"]) == 5 and all(report.sizes["summary"])
    assert report.accounting["summary"].calls["agent"] == 6 and report.accounting["summary"].calls["summarizer"] == 6


async def test_a_summary_of_exactly_the_limit_is_accepted(loopback):
    from tests.support.openai_server import Canned

    loopback.state.responder = lambda body: (
        Canned(text="s" * MAX_SUMMARY_CHARS) if "summarizer agent" in body["messages"][0]["content"] else None
    )
    models = build_models(ModelConfig(model="loopback-model", base_url=loopback.base_url, max_retries=0))
    report = await run_drift(models, policies=["summary"])
    assert report.retained["summary"].chars == MAX_SUMMARY_CHARS


async def test_reported_usage_is_summed_and_one_silent_call_makes_a_policy_unknown(loopback):
    from tests.support.openai_server import Canned

    loopback.state.responder = lambda body: (
        Canned(report_usage=False) if "summarizer agent" in body["messages"][0]["content"] else None
    )
    models = build_models(ModelConfig(model="loopback-model", base_url=loopback.base_url, max_retries=0))
    report = await run_drift(models)
    assert report.live
    assert report.accounting["summary"].reported is None
    for name in ("full", "window", "facts", "compaction"):
        reported = report.accounting[name].reported
        assert reported is not None and (reported.input_tokens or 0) > 0 and (reported.output_tokens or 0) > 0
    facts, full = report.accounting["facts"].reported, report.accounting["full"].reported
    assert facts is not None and full is not None and (facts.input_tokens or 0) < (full.input_tokens or 0)
    assert all(cell.answer for probes in report.scores.values() for cell in probes.values())


async def test_native_compaction_sends_a_window_over_the_whole_history_while_working_over_the_last_turns():
    from workbench.drift.catalog import build_policies
    from workbench.drift.policies import WINDOW_TURNS
    from workbench.runtime.calls import CallLog

    logs = {name: CallLog(capacity=1_000) for name in ("compaction", "window")}
    policies = {
        name: next(p for p in build_policies(SCRIPTED, log, contract=SEED, names={name}) if p.info.name == name)
        for name, log in logs.items()
    }
    for turn in range(1, 41):
        text = f"module=M{turn}" if turn % 7 == 0 else f"still looking at it ({turn})"
        for policy in policies.values():
            await policy.answer(turn, "logs" if turn % 5 == 0 else "support", text)
    sent = {name: [call.messages for call in log.records(purpose="agent")] for name, log in logs.items()}
    assert sent["compaction"] == sent["window"]  # byte for byte: the last three turns of each agent
    compaction = policies["compaction"]
    assert len(compaction.retained()) == 80  # the session keeps every message
    working = compaction.agent_sessions["support"].state["in_memory"]["messages"]
    assert len(working) <= 2 * WINDOW_TURNS + 2  # what compaction works over each turn stays bounded


async def test_the_lab_paces_young_collections_while_it_runs_and_restores_the_pace_after():
    import gc

    from workbench.heap import YOUNG_COLLECTION_THRESHOLD

    before = gc.get_threshold()
    seen = []
    await run_drift(SCRIPTED, progress=lambda *step: seen.append(gc.get_threshold()[0]))
    assert set(seen) == {YOUNG_COLLECTION_THRESHOLD}
    assert gc.get_threshold() == before


async def test_the_built_in_model_sends_the_same_requests_with_its_function_loop_on(monkeypatch):
    """Its client runs with the framework's function-invocation loop off (the script never calls a
    function; the loop copied the whole history on every call): every policy sends byte for byte
    what it sends with the loop on, and the script answers the same."""

    async def calls(loop: bool) -> list[tuple[object, ...]]:
        seen: list[tuple[object, ...]] = []

        class Recording(LabCallLog):  # the lab keeps only the latest calls: each is read as it finishes
            def finish(self, record: CallRecord, response: Any) -> None:
                super().finish(record, response)
                # Extracted memory's topic files say when they were written, to the second: that may differ.
                sent = re.sub(r"Updated: \S+", "Updated: (time)", str(record.sent))
                seen.append((record.origin, record.purpose, record.instructions, sent, record.reply))

        monkeypatch.setattr(lab, "LabCallLog", Recording)
        models = build_models(ModelConfig())
        assert isinstance(models.agent_client, ScriptedChatClient)
        assert models.agent_client.function_invocation_configuration["enabled"] is False
        models.agent_client.function_invocation_configuration["enabled"] = loop
        await run_drift(models, turns=12)
        return seen

    off, on = await calls(False), await calls(True)
    assert len(off) > 80 and {origin for origin, *_ in off} >= {"full", "facts", "summary", "compaction"}
    assert off == on


@pytest.mark.parametrize("reported", [True, False])
async def test_a_failed_call_fails_its_policy_from_that_turn_on_and_counts_its_reported_usage(loopback, reported):
    """The first agent call (full history, turn 1) is cut off at the token limit: that policy's cells
    are not measured; its usage is what the server reported for the call (it was "unknown" though the
    server had reported it), or unknown when the server reported none, never 0 in / 0 out; the other
    policies go on."""
    from tests.support.openai_server import Canned

    first: list[object] = []

    def responder(body):
        if "summarizer agent" not in json.dumps(body["messages"]) and not first:
            first.append(body)
            return Canned(text="la la la", finish_reason="length", report_usage=reported)
        return None

    loopback.state.responder = responder
    models = build_models(ModelConfig(model="loopback-model", base_url=loopback.base_url, max_retries=0))
    report = await run_drift(models, policies=["full", "window", "facts", "recall_purged"])
    assert report.stop is None and list(report.failures) == ["full"]
    assert report.failures["full"].turn == 1 and "cut off" in report.failures["full"].reason
    assert report.scores["full"] == {} and report.accounting["full"].calls["agent"] == 1
    usage = report.accounting["full"].reported
    if reported:
        assert usage is not None and usage.input_tokens and usage.output_tokens == len("la la la") // 4
    else:
        assert usage is None  # a call was made: unknown, never zero
    assert all(set(report.scores[name]) == {"restart", "scope"} for name in ("window", "facts", "recall_purged"))


async def test_the_lab_stops_after_several_policies_fail_in_a_row_and_says_so(loopback):
    from tests.support.openai_server import Canned
    from workbench.drift.lab import MAX_FAILURES_IN_A_ROW
    from workbench.drift.report import stop_line

    loopback.state.responder = lambda body: (
        Canned(text="...", finish_reason="length") if "nightly exports" in json.dumps(body["messages"]) else None
    )
    models = build_models(ModelConfig(model="loopback-model", base_url=loopback.base_url, max_retries=0))
    report = await run_drift(models, policies=["full", "window", "summary", "facts"])
    failed = list(report.failures)
    assert len(failed) == MAX_FAILURES_IN_A_ROW == 3 and failed == ["full", "window", "summary"]
    assert report.partial and report.stop is not None
    assert report.stop.policy == "summary" and report.stop.cause == "3 policies failed in a row"
    assert "facts" not in report.accounting
    line = stop_line(report) or ""
    assert line.startswith(f"stopped at generated summary, turn {report.stop.turn} (3 policies failed in a row): ")
    assert line.count("turn") == 1


async def test_a_stopped_run_still_says_what_mem0_needs():
    """After a stop before Mem0's turn its row said "not measured (the comparison stopped)", though no
    run without --embedding-model could have measured it."""
    from workbench.drift.report import accounting_table, answer_tables, matrix_tables

    models = build_models(ModelConfig(model="m", base_url="http://127.0.0.1:9/v1", max_retries=0, timeout=5))
    report = await run_drift(models, policies=["full", "mem0"])
    assert report.stop is not None and report.stop.policy == "full"
    assert report.unavailable["mem0"] == "needs --embedding-model (Mem0 finds memories by embeddings)"
    console = Console(width=400, record=True)
    console.print(*matrix_tables(report), *answer_tables(report), accounting_table(report))
    mem0_rows = [line for line in console.export_text().splitlines() if line.startswith("│ Mem0")]
    assert mem0_rows and all("needs --embedding-model" in row for row in mem0_rows)


async def test_a_memory_that_received_nothing_says_so_with_its_counts(loopback):
    """A writer whose every batch is rejected leaves the bounded facts empty: the row and the JSON say
    the memory received nothing, and how many batches were rejected, instead of an empty memory that
    looks measured."""
    from tests.live.helpers import is_writer
    from tests.support.openai_server import Canned
    from workbench.drift.report import render
    from workbench.drift.report_json import to_json

    loopback.state.responder = lambda body: Canned(text="module is Billing, I think") if is_writer(body) else None
    models = build_models(ModelConfig(model="loopback-model", base_url=loopback.base_url, max_retries=0))
    report = await run_drift(models, policies=["facts", "recall"])
    facts = report.intake["facts"]
    assert facts.received_nothing and facts.batches == facts.batches_rejected == 5  # five declaring messages
    assert "malformed" in facts.first_reason or "not valid JSON" in facts.first_reason
    assert "facts" not in report.failures  # the policy ran: its memory was handed nothing it could keep
    data = to_json(report)["intake"]["facts"]
    assert (data["batches"], data["batches_rejected"], data["received_nothing"]) == (5, 5, True)
    assert data["why"].startswith("its memory received nothing: all 5 of the writer's batches were rejected")
    assert not report.intake["recall"].received_nothing and (report.intake["recall"].stored or 0) > 0
    console = Console(width=400, record=True)
    console.print(render(report, timing=False, chart=False))
    text = console.export_text()
    assert text.count("its memory received nothing: all 5 of the writer's batches were rejected") == 5  # 2+2+1 tables
