"""The session without the app: one forget reaches every holder, and the export keeps values whole."""

import asyncio
import json
import os
import secrets
import stat
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest
from agent_framework import HistoryProvider, InMemoryHistoryProvider

from tests.support.recall_files import UNREADABLE, earlier_recall, unreadable
from tests.support.residue import residue
from workbench.drift import load_chronology_file
from workbench.memory.forget import ForgetReport
from workbench.recall.config import RecallConfig
from workbench.runtime import MemoryUpdate, ModelConfig, build_models
from workbench.runtime.config import WriterKind
from workbench.runtime.histories import InMemoryHistories
from workbench.session.assemble import assemble
from workbench.session.controller import SessionController

CORRECTION = "module=Billing; database=SQL Server 2022; version=2"
SIX_KEYS = "priority=P9; module=A; database=B; version=C; environment=D; customer=E"


def session() -> SessionController:
    return assemble(build_models(ModelConfig()))


async def test_every_holder_of_text_is_registered_with_the_one_forget():
    assert session().runtime.forgetting.holders == (
        "agent sessions",
        "call log",
        "transcript",
        "turns in flight",
        "input undo",
    )


async def test_the_export_after_forget_version_keeps_sql_server_2022_whole(tmp_path: Path):
    controller = session()
    await controller.ask("support", CORRECTION)
    rejected = await controller.ask("support", SIX_KEYS)
    assert rejected.result.ok and "P9" not in {f.value for f in controller.runtime.memory.facts()}
    await controller.ask("logs", "Which database is affected?")
    report = await controller.forget("version")
    assert set(report.counts) == {"agent sessions", "call log", "transcript", "turns in flight", "input undo"}
    assert not report.failures
    await controller.forget("priority")  # P9 was never admitted: a rejected batch declared it

    path = tmp_path / "conversation.json"
    exported = controller.export(str(path), [2])
    text = path.read_text(encoding="utf-8")
    steps = json.loads(text)["steps"]
    assert steps[0] == {"say": "module=Billing; database=SQL Server 2022; version=(forgotten)"}
    assert "version=2" not in text and "P9" not in text and "SQL Server 2022" in text
    assert exported.steps == len(steps) == 5

    lab = await controller.lab(load_chronology_file(path)).run()  # the lab on the session's models
    (expectation,) = lab.chronology.expectations
    assert expectation.current.get("database") == "SQL Server 2022"

    found = residue(["version=2", "P9"], controller)
    assert found == {}, found


class SlowHistories(InMemoryHistories):
    """Histories whose saving, at the end of a turn (after its batch settled), takes a while: long
    enough for the user to forget something meanwhile (`meanwhile` runs then)."""

    def __init__(self) -> None:
        self.meanwhile: list[Callable[[], Awaitable[object]]] = []

    def provider(self, agent: str) -> HistoryProvider:
        histories = self

        class Saving(InMemoryHistoryProvider):
            async def after_run(self, **kwargs: Any) -> None:
                while histories.meanwhile:
                    await histories.meanwhile.pop()()
                await super().after_run(**kwargs)

        return Saving()


async def test_a_forget_while_a_turn_runs_reaches_the_batches_that_turn_already_settled():
    histories = SlowHistories()
    controller = assemble(build_models(ModelConfig()), histories=histories)
    version, module = f"V-{secrets.token_hex(4)}", f"Billing-{secrets.token_hex(4)}"
    reports: list[ForgetReport] = []

    async def forget_version() -> None:
        reports.append(await controller.forget("version"))

    histories.meanwhile.append(forget_version)
    outcome = await controller.ask("support", f"module={module}; version={version}")
    assert outcome.result.ok and reports and reports[0].removed["turns in flight"] == 1
    assert residue([version], outcome.memory) == {}
    assert residue([module], outcome.memory)  # the other fact is still in the turn's view
    assert residue([version], controller) == {}


async def test_an_export_is_readable_by_the_user_only_whatever_the_umask(tmp_path: Path):
    controller = session()
    await controller.ask("support", "Where are the logs?")
    folder = tmp_path / "shared"
    folder.mkdir(mode=0o755)
    previous = os.umask(0o022)
    try:
        controller.export(str(folder / "out.json"), [0])
    finally:
        os.umask(previous)
    assert stat.S_IMODE((folder / "out.json").stat().st_mode) == 0o600


async def test_an_export_never_overwrites_a_file(tmp_path: Path):
    """A name typed in the export dialog that already names a file (a typo, a README) leaves the file
    as it was: the export replaced it whole, and made it readable by the user only."""
    controller = session()
    await controller.ask("support", "Where are the logs?")
    mine = tmp_path / "notes.md"
    mine.write_text("my own notes\n")
    mine.chmod(0o644)
    with pytest.raises(FileExistsError):
        controller.export(str(mine), [0])
    assert mine.read_text() == "my own notes\n" and stat.S_IMODE(mine.stat().st_mode) == 0o644
    assert not list(tmp_path.glob("notes.md?*"))  # and nothing written beside it


async def test_a_message_the_contract_cannot_read_is_refused_in_words():
    assert session().refusal("x" * 5000) == "the message has 5,000 characters; at most 4,096 are read"
    assert session().refusal("fine") is None


async def test_a_turn_brings_back_its_own_batches_and_the_listeners_get_the_others():
    controller, heard = session(), list[MemoryUpdate]()
    controller.subscribe(heard.append)
    outcome = await controller.ask("support", SIX_KEYS)
    assert [u.outcome.status.name for u in outcome.memory] == ["REJECTED"] and outcome.refused
    assert heard == []  # the turn's batch came back in its outcome, not to the listeners
    await controller.forget(None)
    assert [e.kind.name for u in heard for e in u.outcome.events] == ["FORGOTTEN", "NOTE"]


async def test_a_turn_cancelled_after_its_facts_were_admitted_is_told_apart():
    """Esc while history saves (after extraction): the batch stays; the pane must not say nothing was stored."""
    histories = SlowHistories()
    controller = assemble(build_models(ModelConfig()), histories=histories)
    asking = asyncio.create_task(controller.ask("support", "module=Billing"))

    async def escape() -> None:
        asking.cancel()
        await asyncio.sleep(0)

    histories.meanwhile.append(escape)
    with pytest.raises(asyncio.CancelledError):
        await asking
    assert asking.cancelled() and controller.pane("support").applied_unfinished
    assert [f.value for f in controller.runtime.memory.facts()] == ["Billing"]
    assert (await controller.ask("support", "Anything else?")).result.ok
    assert not controller.pane("support").applied_unfinished


async def test_the_forget_preview_is_the_forgets_own_plan_with_what_the_holders_declare():
    """A rejected batch's value is known only to the holders' texts; the preview asks the same plan the
    forget applies, so a fact whose value holds it is named before the question is answered."""
    controller = assemble(build_models(ModelConfig()), writer=WriterKind.HOST)
    assert (await controller.ask("support", "priority=P9; colour=teal")).refused  # unknown key: rejected
    assert (await controller.ask("support", "module=Billing; log=/var/log/P9/export.log")).result.ok
    preview = await controller.forget_preview(["priority"])
    assert (preview.removed, preview.also, preview.kept) == (("log",), ("log",), 1)
    assert preview.reaches == ()  # no memory beside working memory and the histories
    await controller.forget("priority")
    assert [f.key for f in controller.runtime.memory.facts()] == ["module"]
    everything = await controller.forget_preview(None)
    assert (everything.keys, everything.removed, everything.kept) == (None, ("module",), 0)


@pytest.mark.parametrize("how", UNREADABLE)
async def test_an_earlier_recall_store_that_cannot_be_read_is_named_and_every_other_holder_forgets(tmp_path, how):
    """Recall off, an earlier run's store that cannot be opened: the question names it with why, the
    forget reaches every other holder and reports the store as NOT reached, one line of reason."""
    path = tmp_path / "recall.duckdb"
    value = f"Contoso-{secrets.token_hex(4)}"
    await earlier_recall(path, f"customer={value}")
    with unreadable(path, how) as why:
        controller = assemble(
            build_models(ModelConfig()), recall=RecallConfig(store=str(path)).memory(), writer=WriterKind.HOST
        )
        assert (await controller.ask("support", f"customer={value}; module=Billing")).result.ok

        preview = await controller.forget_preview(["customer"])
        assert (preview.removed, preview.kept) == (("customer",), 1)
        (unreached,) = preview.unreached
        assert unreached.startswith("recall store (could not be read: IOException: ") and why in unreached
        assert "\n" not in unreached and "recall store" not in preview.reaches

        report = await controller.forget("customer")
        assert list(report.failures) == ["recall store"] and why in report.failures["recall store"]
        assert "\n" not in report.failures["recall store"] and report.unreached == {}
        assert report.removed["agent sessions"] == 2 and report.removed["transcript"] == 1
        assert [f.key for f in controller.state().memory.facts] == ["module"]
        assert "recall store NOT reached (IOException: " in report.describe()
        assert residue([value], controller) == {}
