"""--recall in the TUI: both agents store and recall for the same user, the pane says so, F2 shows
what was recalled, the header names store and embedder, forget purges, the palette switches it."""

from tests.ui.helpers import PaneHost, ScreenHost, make_recall_app, scripted_session
from workbench.ui.chat_lines import Notice
from workbench.ui.palette import switch_recall
from workbench.ui.screens import CallsScreen


def notices(pane):
    return [str(n.render()) for n in pane.query(Notice)]


def recall_session():
    """A session with recall on, on an in-memory store and the built-in lexical embedder (as --recall)."""
    from workbench.recall.config import RecallConfig
    from workbench.runtime.calls import CallLog

    calls = CallLog()
    return scripted_session(calls=calls, recall=RecallConfig(store="memory").build(calls), recall_on=True)


async def test_forget_all_purges_recall_and_the_ledger_counts_without_values():
    """Through the session, the forget F8 asks for once answered (every fact)."""
    session = recall_session()
    await session.ask("support", "customer=Contoso")
    await session.forget(None)
    await session.ask("logs", "Which customer was it, Contoso?")
    assert not any("Contoso" in r.text for r in session.pane("logs").recalled if r.turn == 1)
    (note,) = [e.describe() for e in session.state().memory.ledger if e.origin == "forget"]
    assert "recall store: 2 stored message(s) deleted" in note and "Contoso" not in note


async def test_the_palette_turns_recall_on_and_off():
    app = make_recall_app(on=False)
    # 160 columns: the labelled status with recall fits the header (narrower, it is shown compact)
    async with app.run_test(size=(160, 40)) as pilot:
        assert "recall" not in app.sub_title
        await switch_recall(app, True)  # what the palette entry runs
        await pilot.pause()
        assert app.sub_title == app.session.state().status.summary and "recall: in memory, lexical" in app.sub_title
        titles = [c.title for c in app.get_system_commands(app.screen)]
        assert "Turn recall off" in titles


async def test_the_logs_agent_recalls_what_the_user_told_support():
    """Through the session: what recall put into the logs agent's turn; on the pane: the line saying so;
    in F2: the recalled messages with their distances."""
    session = recall_session()
    assert session.state().status.summary.endswith("recall: in memory, lexical")
    await session.ask("support", "module=Reporting; database=PostgreSQL")
    recalled = session.pane("logs").recalled
    host = PaneHost(session, "logs")
    async with host.run_test(size=(80, 24)) as pilot:
        host.pane.prompt.insert("Which database holds the logs?")
        host.pane.prompt.focus()
        await host.sent(pilot)
        recalled = session.pane("logs").recalled
        assert "module=Reporting; database=PostgreSQL" in [r.text for r in recalled]
        assert {r.agent for r in recalled} == {"support"} and recalled[0].agent_session == "session 1 of this run"
        assert any("Recall put" in n and "F2 shows them" in n for n in notices(host.pane))
    screen = CallsScreen("logs", session.pane("logs").calls, recalled=recalled)
    async with ScreenHost(screen).run_test(size=(140, 40)) as pilot:
        await pilot.pause()
        assert "distance" in str(pilot.app.screen.query_one("#recalled").render())
