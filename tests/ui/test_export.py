"""From the app to the lab: the conversation exported as a chronology replays what the app did."""

import json

from textual.widgets import Input, SelectionList

from tests.ui.helpers import answer, make_app, say, scripted_session
from workbench.drift import lab, load_chronology_file, run_drift
from workbench.drift.tally import LabCallLog
from workbench.runtime import ModelConfig, build_models
from workbench.runtime.calls import CallLog
from workbench.runtime.scripted import split_block
from workbench.ui.drift_screen import DriftScreen
from workbench.ui.export_screen import ExportChronology


def blocks(calls: CallLog, purposes: set[str], origin: str | None = None) -> list[tuple[str, str | None]]:
    """Each agent call in order: which agent made it, and the working-memory block it carried last."""
    found = []
    for call in calls.records(origin=origin):
        if call.purpose in purposes:
            block, _ = split_block("\n".join(m.text for m in call.messages))
            found.append(("logs" if "the logs agent" in call.instructions else "support", block))
    return found


async def test_export_from_both_panes_with_a_forget_writes_the_conversation_and_says_where(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    app = make_app()
    async with app.run_test(size=(140, 40)) as pilot:
        await say(pilot, "support", "module=Reporting; database=PostgreSQL")
        await say(pilot, "logs", "log=/var/log/billing.log")
        await say(pilot, "support", "customer=Contoso")
        await say(pilot, "support", "forget customer", typed=True)
        await answer(pilot, "y")
        await say(pilot, "logs", "Where can I find logs?")
        await say(pilot, "support", "Which module and database are affected?")

        commands = {c.title: c for c in app.get_system_commands(app.screen)}
        commands["Export conversation as chronology"].callback()
        await pilot.pause()
        dialog = app.screen
        assert isinstance(dialog, ExportChronology)
        probes = dialog.query_one(SelectionList)
        assert probes.selected == [4, 5]  # both questions ticked by default, no declaration is
        probes.deselect(4)
        dialog.query_one("#export-path", Input).value = "mine.json"
        await pilot.click("#save")
        await pilot.pause()
        (shown,) = [n for n in app._notifications if n.title == "Chronology exported"]
        assert shown.message.endswith(f"workbench drift --chronology {tmp_path / 'mine.json'}")  # where it went

    path = tmp_path / "mine.json"
    data = json.loads(path.read_text(encoding="utf-8"))
    assert data["steps"] == [
        {"say": "module=Reporting; database=PostgreSQL"},
        {"say": "log=/var/log/billing.log", "agent": "logs"},
        {"say": "customer=(forgotten)"},
        {"forget": "customer"},
        {"say": "Where can I find logs?", "agent": "logs"},
        {"say": "Which module and database are affected?", "probe": "q6"},
    ]
    assert "Contoso" not in path.read_text(encoding="utf-8")  # forgotten means gone, in the export too
    assert "Contoso" not in repr(app.session.transcript)


async def test_an_exported_conversation_replays_the_same_requests_in_the_lab(tmp_path, monkeypatch):
    """Through the session, the conversation above: the lab replays its export, and the bounded facts,
    shared by both agents, carry the same block at every turn as the live calls did."""
    session = scripted_session()
    calls = session.runtime.calls
    await session.ask("support", "module=Reporting; database=PostgreSQL")
    await session.ask("logs", "log=/var/log/billing.log")
    await session.ask("support", "customer=Contoso")
    # A forget empties the call log (its records quote the forgotten value): read it before.
    before_forget = blocks(calls, {"support", "logs"})
    await session.forget("customer")
    assert calls.records() == []
    await session.ask("logs", "Where can I find logs?")
    await session.ask("support", "Which module and database are affected?")
    live = before_forget + blocks(calls, {"support", "logs"})
    path = tmp_path / "mine.json"
    session.export(str(path), [5])

    recorded: list[CallLog] = []

    class Recording(LabCallLog):  # the lab keeps only its latest calls: this one keeps them all
        def __init__(self, *args, **kwargs) -> None:
            super().__init__(*args, **{**kwargs, "capacity": 1_000})
            recorded.append(self)

    monkeypatch.setattr(lab, "LabCallLog", Recording)
    report = await run_drift(build_models(ModelConfig()), chronology=load_chronology_file(path))
    assert not report.partial and list(report.scores["facts"]) == ["q6"]
    replayed = blocks(recorded[0], {"agent"}, origin="facts")
    assert replayed == live and [a for a, _ in live] == ["support", "logs", "support", "logs", "support"]
    cell = report.scores["facts"]["q6"]
    assert cell.answer_score.expected == {"PostgreSQL": True, "Reporting": True}


async def test_an_export_to_a_file_that_exists_says_so_and_leaves_it(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "mine.json").write_text("{}")
    app = make_app()
    async with app.run_test(size=(140, 40)) as pilot:
        await say(pilot, "support", "Where are the logs?")
        commands = {c.title: c for c in app.get_system_commands(app.screen)}
        commands["Export conversation as chronology"].callback()
        await pilot.pause()
        app.screen.query_one("#export-path", Input).value = "mine.json"
        await pilot.click("#save")
        await pilot.pause()
        (shown,) = [n for n in app._notifications if n.title == "Not exported"]
        assert "mine.json already exists" in shown.message and "left as it was" in shown.message
    assert (tmp_path / "mine.json").read_text() == "{}"


async def test_run_the_drift_lab_on_this_conversation(tmp_path):
    app = make_app()
    async with app.run_test(size=(160, 45)) as pilot:
        commands = {c.title: c for c in app.get_system_commands(app.screen)}
        commands["Run the drift lab on this conversation"].callback()
        await pilot.pause()
        assert not isinstance(app.screen, DriftScreen)  # nothing asked yet: a notice, no screen
        await say(pilot, "support", "module=Billing")
        await say(pilot, "logs", "Where are the logs for the module?")
        commands["Run the drift lab on this conversation"].callback()
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert isinstance(app.screen, DriftScreen)
        await app.workers.wait_for_complete()  # the lab's own run, started once its screen mounted
        await pilot.pause()
        assert "2 turns" in str(app.screen.query_one("#drift-status").render())
