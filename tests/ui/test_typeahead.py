"""Keys that reach the app in one burst (a fast typist, a paste without bracketed-paste mode,
tmux send-keys) must be handled in the order they were typed: Enter sends everything before it."""

from textual import events

from tests.ui.helpers import PaneHost, make_app, reached, scripted_session


def burst(text: str) -> list[events.Key]:
    """The key events a terminal driver posts for `text` read in one chunk (\\r is Enter, \\n Ctrl+J)."""
    named = {"\r": "enter", "\n": "ctrl+j"}
    return [events.Key(named.get(ch, ch), ch) for ch in text]


async def test_enter_in_a_burst_sends_every_key_typed_before_it():
    host = PaneHost(scripted_session())
    async with host.run_test(size=(80, 24)) as pilot:
        host.pane.prompt.focus()
        await pilot.pause()
        for key in burst("priority=high\rcustomer=Contoso"):
            host.post_message(key)  # all at once, as the driver does for one read
        await reached(host.pane, "turns", bool)
        await reached(host.pane, "busy", lambda busy: not busy)
        await host.workers.wait_for_complete()
        await pilot.pause()
        facts = {f.key: f.value for f in host.session.state().memory.facts}
        assert facts == {"priority": "high"}
        assert host.pane.prompt.text == "customer=Contoso"


async def test_a_sent_message_cannot_be_undone_back_into_the_input():
    host = PaneHost(scripted_session())
    async with host.run_test(size=(80, 24)) as pilot:
        prompt = host.pane.prompt
        prompt.focus()
        await pilot.press(*"symptom=ZQXV9931")
        await host.sent(pilot)
        await pilot.press(*"why?")
        await host.sent(pilot)
        await pilot.press("ctrl+z", "ctrl+z", "ctrl+z")
        await pilot.pause()
        assert "ZQXV9931" not in prompt.text and "why?" not in prompt.text
        assert not any("ZQXV9931" in text for text in prompt.undo_texts())


async def test_keys_typed_right_after_tab_go_to_the_input_tab_moved_to():
    """Tab reached the screen's binding only after bubbling up from the input, a message pump at a
    time: letters in the same burst were handed to the input it was leaving (under load, such as a
    long answer streaming in, `abc` typed a moment after Tab went to the other pane)."""
    app = make_app()
    async with app.run_test(size=(140, 40)) as pilot:
        app.pane("support").prompt.focus()
        await pilot.pause()
        for key in [events.Key("tab", "\t"), *burst("abc")]:
            app.post_message(key)
        await pilot.pause()
        assert (app.pane("support").prompt.text, app.pane("logs").prompt.text) == ("", "abc")


async def test_a_new_line_in_a_burst_stays_where_it_was_typed():
    """Ctrl+J reached the composer's binding only after bubbling up to the app, a message pump at a
    time: letters right behind it were typed first, so `module=Payroll` Ctrl+J `free text` became the
    value "Payrollfree text" (seen under load, typing at an ordinary pace)."""
    host = PaneHost(scripted_session())
    async with host.run_test(size=(80, 24)) as pilot:
        prompt = host.pane.prompt
        prompt.focus()
        await pilot.pause()
        for key in burst("module=Payroll\nfree text\nok"):
            host.post_message(key)
        await pilot.pause()
        assert prompt.text == "module=Payroll\nfree text\nok"
