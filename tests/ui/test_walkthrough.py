"""The seed's walk-through driven through the TUI: typing, a real click on a fact row,
the confirmation, the forget-all binding."""

from textual.widgets import Static

from tests.ui.helpers import answer, make_app, read_question, say
from workbench.memory import EventKind
from workbench.ui.chat_lines import Notice, UserMessage
from workbench.ui.confirm import ConfirmForget
from workbench.ui.facts import FactTable
from workbench.ui.replies import AgentAnswer


def table_rows(app):
    table = app.query_one(FactTable)
    return [tuple(cell.plain for cell in table.get_row_at(i)) for i in range(table.row_count)]


def texts(app, agent, kind):
    return [str(w.render()) if not isinstance(w, AgentAnswer) else w.text for w in app.pane(agent).query(kind)]


async def test_correct_then_forget_through_the_ui():
    app = make_app()
    async with app.run_test(size=(140, 40)) as pilot:
        runtime = app.session.runtime
        await say(pilot, "support", "module=Reporting; database=PostgreSQL", typed=True)
        assert table_rows(app) == [
            ("database", "PostgreSQL", "1", "09:15:00"),
            ("module", "Reporting", "1", "09:15:00"),
        ]

        await say(pilot, "support", "mem", typed=True)
        (snapshot,) = texts(app, "support", Notice)
        assert (
            "mem: 2 fact(s)" in snapshot
            and 'database = "PostgreSQL" (turn 1) quoting "database=PostgreSQL"' in snapshot
        )

        await say(pilot, "support", "module=Billing; database=SQL Server 2022")
        assert table_rows(app) == [
            ("database", "PostgreSQL -> SQL Server 2022", "2", "09:15:00"),
            ("module", "Reporting -> Billing", "2", "09:15:00"),
        ]
        changes = str(app.query_one("#changes", Static).render())
        assert 'module replaced: "Reporting" -> "Billing" (turn 2, quoting "module=Billing").' in changes
        assert 'database replaced: "PostgreSQL" -> "SQL Server 2022"' in changes

        await say(pilot, "logs", "Where can I find logs?", typed=True)
        assert [r[0] for r in table_rows(app)] == ["database", "module"]
        (logs_reply,) = texts(app, "logs", AgentAnswer)
        assert "module=Billing" in logs_reply and "Reporting" not in logs_reply
        assert len(runtime.history("logs")) == 2 and len(runtime.history("support")) == 4
        assert app.pane("logs").turns == 1 and app.pane("support").turns == 2

        # A real mouse click on the module row (rows: database, then module) asks to confirm.
        assert await pilot.click(FactTable, offset=(3, 2))
        await pilot.pause()
        assert isinstance(app.screen, ConfirmForget) and app.screen.keys == ("module",)
        await read_question(pilot)
        await pilot.click("#yes")
        await pilot.pause()
        assert [f.key for f in runtime.memory.facts()] == ["database"]
        assert runtime.history("support") == [] and runtime.history("logs") == []
        for agent in ("support", "logs"):
            assert texts(app, agent, UserMessage) == []
            assert "History replaced by forget module" in texts(app, agent, Notice)[0]

        await pilot.press("f8")
        await pilot.pause()
        assert isinstance(app.screen, ConfirmForget) and app.screen.keys is None
        await answer(pilot, "y")
        assert runtime.memory.facts() == () and table_rows(app) == []

        await say(pilot, "support", "Which module and database do I use?")
        (reply,) = texts(app, "support", AgentAnswer)
        for value in ("Billing", "Reporting", "SQL Server 2022", "PostgreSQL"):
            assert value not in reply
        assert runtime.memory.facts() == ()
        assert runtime.memory.ledger.latest(1)[0].kind is EventKind.NOTHING_DECLARED


async def test_keeping_a_fact_in_the_confirmation_changes_nothing():
    app = make_app()
    async with app.run_test(size=(140, 40)) as pilot:
        await say(pilot, "support", "module=Billing")
        app.query_one(FactTable).focus()
        await pilot.press("delete")
        await pilot.pause()
        assert isinstance(app.screen, ConfirmForget)
        await pilot.press("n")
        await pilot.pause()
        assert [f.key for f in app.session.state().memory.facts] == ["module"]
        assert len(app.session.runtime.history("support")) == 2


async def test_typed_forget_commands_ask_the_same_question_as_a_click():
    app = make_app()
    async with app.run_test(size=(140, 40)) as pilot:
        await say(pilot, "logs", "module=Billing; database=SQL Server 2022")
        await say(pilot, "logs", "forget module")
        question = app.screen
        assert isinstance(question, ConfirmForget) and (question.keys, question.held) == (
            ("module",),
            {"module": ("Billing",)},
        )
        await answer(pilot, "n")
        assert [f.key for f in app.session.state().memory.facts] == ["database", "module"]
        await say(pilot, "logs", "forget module")
        await answer(pilot, "y")
        assert [f.key for f in app.session.state().memory.facts] == ["database"]
        await say(pilot, "support", "forget password")  # not a key: refused, nothing asked
        assert not isinstance(app.screen, ConfirmForget) and [f.key for f in app.session.state().memory.facts] == [
            "database"
        ]
        await say(pilot, "support", "forget")
        question = app.screen
        assert isinstance(question, ConfirmForget) and question.keys is None
        assert app.session.state().memory.facts != ()
        await answer(pilot, "y")
        assert app.session.state().memory.facts == ()
        await say(pilot, "support", "forget customer")  # no fact holds it: still asked, a history may
        question = app.screen
        assert isinstance(question, ConfirmForget) and question.held == {"customer": ()}
        await answer(pilot, "n")
