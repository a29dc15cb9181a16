"""Typing never forgets anything; the composer takes lines and pastes; values are shown as typed;
memory comes back to the screen as one update per batch; failures are shown, not swallowed."""

from typing import cast

from textual import events
from textual.widgets import Static

from tests.ui.helpers import PaneHost, answer, make_app, pushed, say, scripted_session, start_ended
from workbench.memory import EventKind
from workbench.ui.app import WorkbenchApp
from workbench.ui.chat_lines import Notice, UserMessage
from workbench.ui.confirm import ConfirmForget
from workbench.ui.facts import FactPanel, FactTable, MemoryView
from workbench.ui.screens import CallsScreen, HelpScreen


async def test_a_sentence_typed_right_after_a_click_forget_is_sent_and_forgets_nothing():
    app = make_app()
    async with app.run_test(size=(140, 40)) as pilot:
        await say(pilot, "logs", "customer=Contoso; module=Billing")
        assert await pilot.click(FactTable, offset=(3, 2))  # rows: customer, module
        await pilot.pause()
        assert isinstance(app.screen, ConfirmForget) and app.screen.keys == ("module",)
        await answer(pilot, "y")
        assert [f.key for f in app.session.state().memory.facts] == ["customer"]
        assert app.focused is app.pane("logs").prompt  # back in the input last typed in
        await pilot.press(*"Is my customer right?", "enter")
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert not isinstance(app.screen, ConfirmForget)
        assert [f.key for f in app.session.state().memory.facts] == ["customer"]
        assert [str(m.render()) for m in app.pane("logs").query(UserMessage)] == ["Is my customer right?"]


async def test_printable_keys_on_the_fact_table_go_to_the_last_input_and_enter_is_sent_there():
    app = make_app()
    async with app.run_test(size=(140, 40)) as pilot:
        await say(pilot, "support", "customer=Contoso")
        app.query_one(FactTable).focus()
        await pilot.press(*"why my app?", "enter")
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert not isinstance(app.screen, ConfirmForget)
        assert [f.key for f in app.session.state().memory.facts] == ["customer"]
        assert [str(m.render()) for m in app.pane("support").query(UserMessage)][-1] == "why my app?"


async def test_tab_does_not_stop_on_the_forget_all_button_and_the_fact_panel_shows_focus():
    app = make_app()
    async with app.run_test(size=(140, 40)) as pilot:
        await pilot.press("tab", "tab")
        assert app.focused is app.query_one(FactTable)
        assert app.query_one(FactPanel).has_pseudo_class("focus-within")
        await pilot.press("tab", "tab")  # the latest change, then the ledger: both scroll with the arrow keys
        assert app.focused is app.query_one("#ledger-scroll")
        await pilot.press("tab")
        assert app.focused is cast(object, app.pane("support").prompt)  # focus moved on: mypy narrowed it


async def test_the_pane_typed_in_is_drawn_focused_from_the_first_frame_and_follows_the_focus():
    app = make_app()
    async with app.run_test(size=(140, 40)) as pilot:
        focused = lambda: [a for a in ("support", "logs") if app.pane(a).has_class("-focused")]  # noqa: E731
        assert focused() == ["support"]
        await pilot.press("tab")
        assert app.focused is cast(object, app.pane("logs").prompt) and focused() == ["logs"]
        await pilot.press("tab")
        assert app.focused is app.query_one(FactTable) and focused() == []


async def test_a_forget_answer_typed_before_the_question_appeared_is_ignored():
    app = make_app()
    async with app.run_test(size=(140, 40), notifications=True) as pilot:
        await say(pilot, "support", "customer=Contoso")
        app.query_one(FactTable).focus()
        await pilot.pause()
        # Both keys arrive before the question is drawn, as when typing on after an Enter.
        app.post_message(events.Key("enter", "\r"))
        app.post_message(events.Key("y", "y"))
        await pushed(app, ConfirmForget)
        assert [f.key for f in app.session.state().memory.facts] == ["customer"]
        await answer(pilot, "y")
        assert app.session.state().memory.facts == ()
        assert app.focused is app.pane("support").prompt


async def test_focus_returns_to_the_last_input_after_every_modal():
    app = make_app()
    async with app.run_test(size=(140, 40)) as pilot:
        await say(pilot, "logs", "module=Billing")
        for key, screen in (("f1", HelpScreen), ("f2", CallsScreen), ("f8", ConfirmForget)):
            app.query_one(FactTable).focus()
            await pilot.press(key)
            await pilot.pause()
            assert isinstance(app.screen, screen)
            assert not isinstance(app.screen, CallsScreen) or app.screen.agent == "logs"  # the pane typed in
            await pilot.press("escape")
            await pilot.pause()
            assert app.focused is app.pane("logs").prompt, key


async def test_values_are_shown_as_typed_in_one_style_everywhere():
    app = make_app()
    async with app.run_test(size=(140, 40)) as pilot:
        await say(pilot, "support", "customer=O'Brien \\ Sons")
        table = app.query_one(FactTable)
        assert table.get_row_at(0)[1].plain == "O'Brien \\ Sons"
        expected = '"O\'Brien \\ Sons"'
        assert f"customer = {expected} admitted" in str(app.query_one("#changes", Static).render())
        assert f"customer = {expected} admitted" in str(app.query_one("#ledger", Static).render())
        assert f"quoting {expected[:-1]}" not in str(app.query_one("#ledger", Static).render())  # no doubled backslash
        assert '"customer=O\'Brien \\ Sons"' in str(app.query_one("#evidence", Static).render())
        await say(pilot, "support", "mem")
        assert f"customer = {expected} (turn 1)" in str(app.pane("support").query(Notice).last().render())
        table.focus()
        await pilot.press("delete")
        await pilot.pause()
        assert f"Forget customer = {expected}?" in str(app.screen.query_one("#question", Static).render())


async def test_one_panel_update_per_settled_batch(monkeypatch):
    renders = []
    original = FactPanel.watch_view

    def recording(self: FactPanel, view: MemoryView) -> None:
        renders.append(view)
        original(self, view)

    monkeypatch.setattr(FactPanel, "watch_view", recording)
    app = make_app()
    async with app.run_test(size=(140, 40)) as pilot:
        await pilot.pause()
        renders.clear()
        await say(pilot, "support", "customer=Contoso; module=Billing; database=Oracle; version=7; log=/x")
        await say(pilot, "logs", "environment=production")  # admits one and evicts one: one batch
        await say(pilot, "support", "forget")
        await answer(pilot, "y")
        kinds = [[e.kind for e in view.batch] for view in renders]
        # The forget, then what it reached (counts per holder), as two settled batches.
        assert kinds == [
            [EventKind.ADMITTED] * 5,
            [EventKind.ADMITTED, EventKind.EVICTED],
            [EventKind.FORGOTTEN],
            [EventKind.NOTE],
        ]


async def test_a_turn_that_raises_unexpectedly_is_shown_and_the_pane_keeps_working(monkeypatch):
    host = PaneHost(scripted_session())
    async with host.run_test(size=(80, 24), notifications=True) as pilot:
        runtime = host.session.runtime
        real_ask = runtime.ask

        async def broken(*args, **kwargs):
            raise KeyError("a defect")

        monkeypatch.setattr(runtime, "ask", broken)
        await host.say(pilot, "module=Billing")
        assert any("KeyError" in n.message and "a defect" in n.message for n in host._notifications)
        assert "unexpected error" in str(host.pane.query(Notice).last().render())
        assert not host.pane.busy
        monkeypatch.setattr(runtime, "ask", real_ask)
        await host.say(pilot, "module=Billing")
        assert [f.value for f in runtime.snapshot().facts] == ["Billing"]


async def test_a_failed_start_up_says_it_failed_and_why():
    app = WorkbenchApp(start=lambda: (_ for _ in ()).throw(RuntimeError("no models today")))
    async with app.run_test(size=(140, 40), notifications=True) as pilot:
        await start_ended(pilot)
        assert "could not start: RuntimeError: no models today" in app.sub_title
        await say(pilot, "support", "module=Billing")
        last = app._notifications.last if hasattr(app._notifications, "last") else list(app._notifications)[-1]
        assert "could not start" in last.message and "no models today" in last.message
        assert "Still starting" not in " ".join(n.message for n in app._notifications)
        assert app.pane("support").prompt.text == "module=Billing"
