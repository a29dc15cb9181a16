"""A team's contract on screen: the fact panel shows its keys, the help lists them, and the app reads
them from the session (the header names them, `forget KEY` knows them)."""

import io
from datetime import UTC, datetime

from rich.console import Console
from textual.app import App, ComposeResult
from textual.widgets import OptionList, Static

from tests.ui.helpers import say
from workbench.memory import Contract, MemoryTurn, WorkingMemory
from workbench.memory.records import FactCandidate
from workbench.runtime import MemorySnapshot, MemoryUpdate, ModelConfig, build_models
from workbench.runtime.config import Mode, WriterKind
from workbench.runtime.view import RuntimeStatus
from workbench.session.assemble import assemble
from workbench.ui.app import WorkbenchApp
from workbench.ui.facts import FactPanel, FactTable, MemoryView
from workbench.ui.screens import HelpScreen

TEAM = Contract(("service", "region", "owner"), max_facts=3, max_value_chars=64)
WHEN = datetime(2026, 12, 3, 9, 15, tzinfo=UTC)


class Host(App[None]):
    def __init__(self, widget) -> None:
        super().__init__()
        self.widget = widget

    def compose(self) -> ComposeResult:
        yield self.widget


def settle(memory: WorkingMemory, text: str) -> MemoryUpdate:
    turn: MemoryTurn = memory.begin_turn(text, origin="support")
    key, _, value = text.partition("=")
    outcome = memory.admit(turn, [FactCandidate(key=key, value=value, evidence=text)], WHEN)
    return MemoryUpdate(outcome, MemorySnapshot(memory.facts(), tuple(memory.ledger.latest())))


async def test_the_fact_panel_shows_a_key_of_the_teams_contract():
    memory = WorkingMemory(TEAM)
    panel = FactPanel()
    async with Host(panel).run_test(size=(70, 30)) as pilot:
        panel.view = MemoryView.after(settle(memory, "service=billing-api"))
        await pilot.pause()
        table = panel.query_one(FactTable)
        assert [tuple(c.plain for c in table.get_row_at(i)) for i in range(table.row_count)] == [
            ("service", "billing-api", "1", "09:15:00")
        ]
        assert 'service = "billing-api" admitted' in str(panel.query_one("#changes", Static).render())


async def test_the_help_lists_the_teams_keys_and_limits():
    status = RuntimeStatus("scripted", Mode.MANUAL, "host parse", contract=TEAM)
    async with Host(HelpScreen(status)).run_test(size=(100, 40)) as pilot:
        body = "\n".join(str(s.render()) for s in pilot.app.screen.query("#help-body Static"))
    assert "Keys (the contract declared for this run: workbench.toml or --keys): owner, region, service." in body
    assert "At most 3 facts" in body and "A value holds at most 64 characters." in body
    assert "module=Billing" not in body
    assert "keys: the contract declared for this run" in body  # the header's words, explained


async def test_the_app_reads_the_contract_from_the_session():
    app = WorkbenchApp(assemble(build_models(ModelConfig()), memory=WorkingMemory(TEAM), writer=WriterKind.HOST))
    async with app.run_test(size=(140, 40), notifications=True) as pilot:
        await say(pilot, "support", "region=eu-west")
        table = app.query_one(FactTable)
        assert [table.get_row_at(i)[0].plain for i in range(table.row_count)] == ["region"]
        assert "keys: owner, region, service" in f"{app.title} {app.sub_title}"
        await say(pilot, "support", "forget module")
        assert any('"module" is not a key. Keys: owner, region, service.' in n.message for n in app._notifications)
        await say(pilot, "support", "forget regi\u043en")  # a look-alike letter is named, as everywhere
        named = '"regi\u043en" is not a key: it contains U+043E CYRILLIC SMALL LETTER O; keys are matched'
        assert any(n.message.startswith(named) for n in app._notifications)


async def test_the_forget_question_and_f3_show_a_value_as_long_as_the_contract_allows():
    """The displays bound a value by the contract's length (the seed's 256 at least for other lines)."""
    from workbench.runtime.remembered import HeldItem, Remembered, RememberedSystem
    from workbench.ui.confirm import ConfirmForget
    from workbench.ui.remembered_screen import RememberedScreen

    value = "v" * 900
    async with Host(Static("")).run_test(size=(120, 60)) as pilot:
        question = ConfirmForget(["service"], {"service": [value]}, agents=("support", "logs"), value_chars=1000)
        await pilot.app.push_screen(question)
        await pilot.pause()
        shown = str(question.query_one("#question", Static).render())
        assert value in shown and "cut" not in shown
        pilot.app.pop_screen()
        item = HeldItem("fact", "service", "", value, keys=("service",))
        held = Remembered((RememberedSystem("working memory", None, "1 fact", (item,)),))

        class Fixed:
            async def remembered(self) -> Remembered:
                return held

        screen = RememberedScreen(Fixed(), value_chars=1000)
        await pilot.app.push_screen(screen)
        screen.remembered = held
        await pilot.pause()
        listed = screen.query_one(OptionList)
        console = Console(width=2000, record=True, file=io.StringIO())  # unwrapped: the value reads whole
        for index in range(listed.option_count):
            console.print(listed.get_option_at_index(index).prompt)
        assert f'"{value}"' in console.export_text()
