"""What a server writes reaches the screen literally: a failure that echoes escape sequences and
markup shows them as text in the notification, the pane and the ledger, never as controls."""

from textual.widgets import Static

from tests.support.openai_server import Canned
from tests.ui.helpers import PaneHost, PanelHost
from workbench.runtime import ModelConfig, build_models
from workbench.session.assemble import assemble
from workbench.ui.chat_lines import Notice
from workbench.ui.facts import MemoryView

ECHO = "bad input \x1b]0;pwned\x07\x1b[2J [bold red]loud[/] \u202eevil"


async def test_a_server_error_with_escape_sequences_is_shown_as_text(loopback):
    config = ModelConfig(model="loopback-model", base_url=loopback.base_url, max_retries=0)
    host = PaneHost(assemble(build_models(config)))
    async with host.run_test(size=(80, 24), notifications=True) as pilot:
        loopback.enqueue(Canned(status=400, body={"error": {"message": ECHO}}))
        await host.say(pilot, "module=Billing")
        shown = [n.message for n in host._notifications] + [str(w.render()) for w in host.pane.query(Notice)]
    async with PanelHost(MemoryView(host.session.state().memory)).run_test(size=(70, 30)) as pilot:
        shown.append(str(pilot.app.query_one("#ledger", Static).render()))
    assert any("[bold red]loud[/]" in text for text in shown)
    for text in shown:
        assert not any(ch in text for ch in "\x1b\x07\u202e"), text
    assert any("\\x1b]0;pwned\\x07" in text for text in shown)


async def test_a_message_that_cannot_be_encoded_is_not_sent_and_stays_in_the_input():
    from tests.ui.helpers import make_app

    app = make_app()
    async with app.run_test(size=(140, 40), notifications=True) as pilot:
        prompt = app.pane("support").prompt
        prompt.insert("customer=Zo\udce9")
        prompt.focus()
        await pilot.press("enter")
        await pilot.pause()
        assert app.pane("support").turns == 0 and app.session.runtime.calls.records() == []
        assert any("half of a surrogate pair" in n.message for n in app._notifications)
