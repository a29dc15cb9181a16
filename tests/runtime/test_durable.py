"""Promises that hold when things go wrong: a save that fails is said at once and written by the next
one; a forget cut short is completed by the next start; what is read back is checked by the contract;
a turn asked while a forget runs starts after it and is kept."""

import asyncio
import json
import sqlite3
from contextlib import closing

import pytest

from tests.runtime.test_persist import holding, quit_, started, tagged
from workbench.files import data_dir
from workbench.memory.forget import TextHolder
from workbench.persist.format import SavedFileError
from workbench.persist.journal import FILE_NAME, ForgetJournal
from workbench.persist.sessions import DIRECTORY, PersistedSessions
from workbench.persist.state import STATE_FILE, StateFile
from workbench.runtime import ModelConfig, build_models
from workbench.runtime.agents import AgentRuntime
from workbench.runtime.view import NOT_SAVED
from workbench.session.assemble import assemble


class Crash(BaseException):
    """The process ends while the holders apply a forget's plan: memory on disk is not written yet."""


def journaled(directory, journal) -> AgentRuntime:
    persisted = PersistedSessions(directory)
    runtime = assemble(build_models(ModelConfig()), persisted=persisted, journal=journal).runtime
    return runtime


async def test_a_failing_save_is_said_at_once_and_the_next_save_writes_everything(tmp_path, monkeypatch):
    directory = tmp_path / DIRECTORY
    runtime = started(directory)
    v = tagged("fabrikam")
    real_save = StateFile.save

    def disk_full(self, saved):
        raise sqlite3.OperationalError("database or disk is full")

    monkeypatch.setattr(StateFile, "save", disk_full)
    result = await runtime.ask("support", f"customer={v['fabrikam']}; database=Oracle")
    assert result.ok and result.unsaved == "OperationalError: database or disk is full"
    assert runtime.status.persisted is not None and runtime.status.summary.startswith("persist: NOT saving")
    notes = [e for e in runtime.memory.ledger.latest() if e.origin == NOT_SAVED]
    assert len(notes) == 1 and "database or disk is full" in notes[0].describe()
    assert holding(directory, [v["fabrikam"]]) == {}  # nothing of the turn reached the disk

    monkeypatch.setattr(StateFile, "save", real_save)  # space freed
    assert (await runtime.ask("logs", "Where are the logs?")).unsaved is None
    assert runtime.status.persisted.failure is None
    quit_(runtime)
    again = started(directory)
    assert {f.key: f.value for f in again.memory.facts()} == {"customer": v["fabrikam"], "database": "Oracle"}
    assert next(m.text for m in again.history("support")).endswith(f"customer={v['fabrikam']}; database=Oracle")


async def test_a_forget_cut_short_is_completed_by_the_next_start_before_anything_else(tmp_path):
    directory, journal = tmp_path / DIRECTORY, ForgetJournal(tmp_path / FILE_NAME, ("--persist",))
    v = tagged("contoso")
    runtime = journaled(directory, journal)
    assert (await runtime.ask("support", f"customer={v['contoso']}; module=Billing")).ok
    assert (await runtime.ask("logs", f"Where is {v['contoso']}?")).ok

    async def crash(plan):
        raise Crash

    runtime.histories.erase = crash  # type: ignore[attr-defined]  # the last holder: memory on disk is not written
    with pytest.raises(Crash):
        await runtime.forget("customer")
    assert json.loads((tmp_path / FILE_NAME).read_text())["key"] == "customer"  # the key, never the value
    assert v["contoso"] not in (tmp_path / FILE_NAME).read_text()
    assert holding(directory, [v["contoso"]])  # memory on disk still knows the value: the forget can be planned again
    quit_(runtime)

    again = journaled(directory, journal)
    assert again.forget_pending
    report = await again.complete_pending()
    assert report is not None and report.failures == {}
    assert not (tmp_path / FILE_NAME).exists() and not again.forget_pending
    assert holding(directory, [v["contoso"]]) == {}
    assert [f.key for f in again.memory.facts()] == ["module"]
    assert "forget: completed the forget of 'customer'" in again.status.summary
    (said,) = [e.describe() for e in again.memory.ledger.latest() if "Start-up completed the forget" in e.describe()]
    assert said.endswith(".") and not said.endswith("..")


def test_a_start_that_does_not_open_the_stores_of_a_pending_forget_is_refused_in_one_line(tmp_path, monkeypatch):
    from workbench.cli.configs import model_config
    from workbench.cli.parser import build_parser
    from workbench.cli.stores import unfinished_forget

    monkeypatch.setenv("WORKBENCH_DATA_DIR", str(tmp_path))
    ForgetJournal(data_dir() / FILE_NAME, ("--persist",)).begin(("customer",))
    args = build_parser().parse_args([])
    problem = unfinished_forget(args, model_config(args))
    assert problem is not None and "a forget of 'customer'" in problem and "--persist" in problem
    assert "\n" not in problem
    args = build_parser().parse_args(["--persist"])
    assert unfinished_forget(args, model_config(args)) is None


@pytest.mark.parametrize(
    ("edit", "rule"),
    [
        (
            lambda facts: (
                [
                    *facts,
                    dict(
                        facts[0],
                        key="password",
                        value="hunter2",
                        evidence="password=hunter2",
                        declaration="password=hunter2",
                    ),
                ]
            ),
            "password",
        ),
        (
            lambda facts: (
                facts
                + [
                    dict(facts[0], key=k, value="x", evidence=f"{k}=x", declaration=f"{k}=x")
                    for k in ("product", "priority", "environment", "symptom", "log")
                ]
            ),
            "6 facts; at most 5",
        ),
        (lambda facts: [dict(facts[0], declaration="module=Other")], "does not declare its value"),
        (lambda facts: [dict(facts[0], value="Elsewhere")], "does not contain the value"),
    ],
    ids=["unknown-key", "six-facts", "declaration", "quotation"],
)
async def test_a_hand_edited_memory_that_breaks_the_contract_is_refused_whole(tmp_path, edit, rule):
    directory = tmp_path / DIRECTORY
    runtime = started(directory)
    assert (await runtime.ask("support", "module=Billing")).ok
    quit_(runtime)
    with closing(sqlite3.connect(directory / STATE_FILE)) as db, db:
        (text,) = db.execute("SELECT saved FROM memory").fetchone()
        saved = json.loads(text)
        saved["memory"]["facts"] = edit(saved["memory"]["facts"])
        db.execute("UPDATE memory SET saved = ?", (json.dumps(saved),))
    with pytest.raises(SavedFileError, match=rule) as refused:
        started(directory)
    assert STATE_FILE in str(refused.value) and "contract" in str(refused.value)


async def test_a_turn_asked_while_a_forget_runs_starts_after_it_and_is_kept(tmp_path):
    runtime = started(tmp_path / DIRECTORY)
    assert (await runtime.ask("support", "customer=Contoso")).ok
    entered, release = asyncio.Event(), asyncio.Event()

    async def slow(plan):
        entered.set()
        await release.wait()
        return 0

    runtime.forgetting.register(TextHolder("a slow holder", "item(s)", lambda: [], slow))
    forgetting = asyncio.create_task(runtime.forget(None))
    await entered.wait()
    asking = asyncio.create_task(runtime.ask("support", "Which customer?"))
    await asyncio.sleep(0)
    assert not asking.done()
    release.set()
    await forgetting
    assert (await asking).ok
    assert next(m.text for m in runtime.history("support")) == "Which customer?" or runtime.history("support")[
        0
    ].text.endswith("Which customer?")


async def test_the_headers_resume_counts_go_with_a_forget(tmp_path):
    first = started(tmp_path / DIRECTORY)
    assert (await first.ask("support", "customer=Contoso; module=Billing")).ok
    quit_(first)
    second = started(tmp_path / DIRECTORY)
    assert "resumed: 2 message(s), 2 fact(s)" in second.status.summary
    await second.forget("customer")
    assert "resumed" not in second.status.summary and "persist: on" in second.status.summary
