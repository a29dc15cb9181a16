"""Bad input, failures, cancellation, the model-call view, the command palette."""

import asyncio
import gc
import io

from rich.console import Console
from textual.widgets import DataTable, Static

from tests.support.openai_server import Canned
from tests.ui.helpers import PaneHost, PanelHost, make_app, reached, say, scripted_session, start_ended
from workbench.memory import EventKind, WorkingMemory
from workbench.runtime import Mode, ModelConfig, build_models
from workbench.session.assemble import assemble
from workbench.ui.app import WorkbenchApp
from workbench.ui.chat_lines import Notice, UserMessage
from workbench.ui.facts import MemoryView
from workbench.ui.replies import AgentAnswer

HOSTILE = "[bold]loud[/bold] [link=https://example.com]x[/link] \x1b[31mred\x1b[0m\nmodule=[red]x"


async def test_text_from_people_and_models_is_shown_literally():
    host = PaneHost(scripted_session())
    async with host.run_test(size=(80, 24)) as pilot:
        await host.say(pilot, HOSTILE)  # pasted: escape characters cannot be typed
        (user,) = host.pane.query(UserMessage)
        shown = str(user.render())
        assert "[bold]loud[/bold]" in shown and "[link=https://example.com]" in shown
        assert "\x1b" not in shown and "\\x1b[31mred" in shown
        (reply,) = host.pane.query(AgentAnswer)
        assert "\x1b" not in reply.text and "[bold]loud[/bold]" in reply.text
    async with PanelHost(MemoryView(host.session.state().memory)).run_test(size=(70, 30)) as pilot:
        table = pilot.app.query_one("#fact-table", DataTable)
        assert table.get_row_at(0)[1].plain == "[red]x"


async def test_a_message_over_the_limit_is_refused_and_the_draft_kept():
    app = make_app()
    async with app.run_test(size=(140, 40), notifications=True) as pilot:
        prompt = app.pane("support").prompt
        prompt.text = "x" * 4097
        prompt.focus()
        await pilot.press("enter")
        await pilot.pause()
        assert prompt.text == "x" * 4097
        assert app.pane("support").turns == 0 and app.session.runtime.calls.records() == []
        assert any("at most 4,096 are read" in n.message for n in app._notifications)


async def test_an_empty_message_does_nothing():
    app = make_app()
    async with app.run_test(size=(140, 40)) as pilot:
        await say(pilot, "support", "   ")
        assert app.pane("support").turns == 0 and not app.pane("support").query(UserMessage)


async def test_a_model_error_shows_in_the_pane_and_the_ledger_and_the_pane_keeps_working(loopback):
    config = ModelConfig(model="loopback-model", base_url=loopback.base_url, max_retries=0)
    host = PaneHost(assemble(build_models(config), mode=Mode.PROVIDER))
    async with host.run_test(size=(38, 30)) as pilot:  # a pane 38 wide, as at 140 columns: the words go first
        loopback.enqueue(Canned(status=500, body={"error": {"message": "boom"}}))
        await host.say(pilot, "module=Billing")
        pane, session = host.pane, host.session
        (notice,) = pane.query(Notice)
        assert "HTTP 500" in str(notice.render()) and "unchanged" in str(notice.render())
        assert not pane.query(AgentAnswer)
        assert session.runtime.memory.ledger.latest(1)[0].kind is EventKind.ABANDONED
        async with PanelHost(MemoryView(session.state().memory)).run_test(size=(70, 30)) as panel:
            assert "HTTP 500" in str(panel.app.query_one("#ledger", Static).render())
        await host.say(pilot, "module=Billing")
        assert [f.value for f in session.state().memory.facts] == ["Billing"]
        assert (pane.border_subtitle or "").startswith("2 turns · ")
        # The failed call was made, and what it used is not known: the total is unknown, never a count
        # that leaves it out (it was 0 in / 0 out plus the second turn's).
        assert (pane.border_subtitle or "").endswith("tokens unknown")


async def test_escape_cancels_a_running_turn():
    # Each streamed word waits 30 s: the turn is still running when Esc comes.
    host = PaneHost(assemble(build_models(ModelConfig(), scripted_delay=30.0), memory=WorkingMemory()))
    async with host.run_test(size=(38, 30)) as pilot:  # a pane 38 wide, as at 140 columns
        pane = host.pane
        pane.prompt.focus()
        pane.prompt.insert("module=Billing")
        await pilot.press("enter")
        await reached(pane, "busy", bool)
        assert pane.turns == 1 and pane.busy and pane.query_one(".working").display
        # No call has reported anything yet: nothing says the provider counted 0 in / 0 out.
        assert pane.border_subtitle == "1 turn · tokens unknown"  # at this width the words go first
        await pilot.press("escape")
        await host.workers.wait_for_complete()
        await pilot.pause()
        assert not pane.busy
        assert "Cancelled" in str(pane.query(Notice).last().render())
        session = host.session
        assert session.state().memory.facts == () and session.runtime.history("support") == []
        # The cancelled call was made and what it used is unknown: so is the pane's total, not "0 in / 0 out".
        assert session.pane("support").usage is None
        assert (pane.border_subtitle or "").endswith("tokens unknown")


async def test_command_palette_switches_mode_and_says_what_happens_to_histories():
    app = make_app()
    async with app.run_test(size=(140, 40)) as pilot:
        await say(pilot, "support", "module=Billing")
        commands = {c.title: c for c in app.get_system_commands(app.screen)}
        assert "Forget all facts" in commands
        switch = commands["Switch to provider mode"]
        assert "histories are replaced" in switch.help and "facts are kept" in switch.help
        switch.callback()
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert app.session.state().status.mode is Mode.PROVIDER and "mode: provider" in app.sub_title
        assert [f.key for f in app.session.state().memory.facts] == ["module"]
        assert app.session.runtime.history("support") == []
        assert "Switched to provider mode" in str(app.pane("support").query(Notice).first().render())


async def test_the_drift_screen_runs_without_blocking_and_goes_back():
    from workbench.ui.drift_screen import DriftScreen

    app = make_app()
    async with app.run_test(size=(160, 50)) as pilot:
        await say(pilot, "support", "module=Billing")
        commands = {c.title: c for c in app.get_system_commands(app.screen)}
        # It names no count of policies: the lab runs every one the catalog builds (it said six; there are more).
        assert "through every context policy" in commands["Drift lab"].help
        commands["Drift lab"].callback()
        await pilot.pause()  # the screen mounts and starts its worker
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert isinstance(app.screen, DriftScreen)
        console = Console(width=200, record=True, file=io.StringIO())
        console.print(app.screen.query_one("#drift-body", Static).content)
        body = console.export_text()
        assert 'probe "restart"' in body and "bounded facts" in body
        await pilot.press("escape")
        await pilot.pause()
        assert not isinstance(app.screen, DriftScreen)
        assert [f.value for f in app.session.state().memory.facts] == ["Billing"]  # the lab has its own memory


async def test_a_writer_format_step_down_shows_in_the_header_and_the_ledger(loopback):
    from tests.live.helpers import is_writer, live_session, response_format_type

    loopback.state.responder = lambda body: (
        Canned(status=500, body={"error": {"message": "response_format json_schema unsupported"}})
        if is_writer(body) and response_format_type(body) == "json_schema"
        else None
    )
    app = WorkbenchApp(live_session(loopback.base_url, "auto"))
    async with app.run_test(size=(160, 40)) as pilot:
        assert "writer: json_schema (auto)" in app.sub_title
        await say(pilot, "support", "module=Billing")
        assert "writer: json_object_schema (auto)" in app.sub_title
        assert [f.value for f in app.session.state().memory.facts] == ["Billing"]
        assert "using json_object_schema from now on" in str(app.query_one("#ledger", Static).render())


async def test_tab_moves_from_input_to_input_to_the_fact_table():
    app = make_app()
    async with app.run_test(size=(140, 40)) as pilot:
        assert app.focused is app.pane("support").prompt
        await pilot.press("tab")
        assert app.focused is app.pane("logs").prompt
        await pilot.press("tab")
        assert app.focused is app.query_one("#fact-table")
        await pilot.press("shift+tab", "shift+tab")
        assert app.focused is app.pane("support").prompt


async def test_the_window_opens_before_the_runtime_and_keeps_a_draft_until_it_is_ready(held_collections):
    from workbench.cli.configs import model_config
    from workbench.cli.parser import build_parser
    from workbench.cli.start import build_app

    args = build_parser().parse_args(["--mode", "provider"])
    app = build_app(args, model_config(args))
    async with app.run_test(size=(140, 40), notifications=True) as pilot:
        await start_ended(pilot)
        await reached(app, "settled", bool)
        assert gc.isenabled(), "the runtime has loaded: the heap is settled and collected again"
        assert app.ready and app.session.state().status.mode.value == "provider"
        assert "mode: provider" in app.sub_title
        await say(pilot, "support", "module=Billing")
        assert [f.value for f in app.session.state().memory.facts] == ["Billing"]


async def test_before_the_runtime_is_ready_a_message_waits_in_the_input(held_collections):
    app = WorkbenchApp(start=lambda: (_ for _ in ()).throw(RuntimeError("no models today")))
    async with app.run_test(size=(140, 40), notifications=True) as pilot:
        await start_ended(pilot)
        await reached(app, "settled", bool)
        assert gc.isenabled(), "a start that failed settles the heap too"
        assert not app.ready and app.start_failed and "could not start" in app.sub_title
        assert any("no models today" in n.message for n in app._notifications)
        prompt = app.pane("support").prompt
        prompt.focus()
        prompt.insert("module=Billing")
        await pilot.press("enter")
        await pilot.pause()
        assert prompt.text == "module=Billing" and not app.pane("support").query(UserMessage)


def gated_start(monkeypatch, gate: asyncio.Event, *, fails: bool = False):
    """A start whose last step (completing a forget a crash cut short) waits for `gate`: the window runs,
    its keys are handled, the agents are not ready yet. Only the wait is the test's; the session is real."""
    session = scripted_session()

    async def completing() -> None:
        await gate.wait()
        if fails:
            raise OSError(28, "No space left on device")

    monkeypatch.setattr(session, "start", completing)
    return session


async def type_and_send(pilot, prompt, text: str) -> None:
    prompt.focus()
    await pilot.press(*text, "enter")
    await pilot.pause()


async def test_a_message_sent_before_the_agents_are_ready_is_asked_once_they_are_and_what_follows_stays_apart(
    monkeypatch, held_collections
):
    """Keys queue up on a busy machine: Enter before the agents are ready sends the message once they are,
    and what is typed after it is a message of its own. It was refused and the next Enter sent both as
    one, admitting module = "Billinghello"."""
    gate = asyncio.Event()
    session = gated_start(monkeypatch, gate)
    app = WorkbenchApp(start=lambda: session)
    async with app.run_test(size=(140, 40), notifications=True) as pilot:
        await reached(app, "sub_title", lambda title: "completing a forget" in title)
        prompt = app.pane("support").prompt
        await type_and_send(pilot, prompt, "customer=Contoso; module=Billing")
        await type_and_send(pilot, prompt, "hello")  # a second Enter while the first waits: it waits too
        await pilot.press(*"and")
        assert prompt.text == "and" and not app.ready
        gate.set()
        await start_ended(pilot)
        await reached(app.pane("support"), "turns", lambda turns: turns == 2)
        await reached(app.pane("support"), "busy", lambda busy: not busy)
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert {f.key: f.value for f in app.session.state().memory.facts} == {
            "customer": "Contoso",
            "module": "Billing",
        }
        said = [m.text for m in app.pane("support").query(UserMessage)]
        assert said == ["customer=Contoso; module=Billing", "hello"]  # in order, one turn each
        assert prompt.text == "and"


async def test_a_message_sent_before_a_start_that_fails_is_back_in_its_input(monkeypatch, held_collections):
    gate = asyncio.Event()
    app = WorkbenchApp(start=lambda: gated_start(monkeypatch, gate, fails=True))
    async with app.run_test(size=(140, 40), notifications=True) as pilot:
        await reached(app, "sub_title", lambda title: "completing a forget" in title)
        prompt = app.pane("support").prompt
        await type_and_send(pilot, prompt, "customer=Contoso")
        await pilot.press(*" and more")
        assert prompt.text == " and more"
        gate.set()
        await start_ended(pilot)
        assert app.start_failed and prompt.text == "customer=Contoso\n and more"  # each on a line of its own


async def test_a_writer_that_keeps_failing_is_said_once_and_the_palette_switches_to_the_host_parse(loopback):
    """SmolLM2 invented keys on every declaring turn. After three such rejections in a row the app
    says so once, and a palette entry switches the writer to the host's parse for the session."""
    from tests.live.helpers import is_writer, live_session
    from workbench.memory import EventKind

    invented = '{"facts": [{"key": "product", "value": "Life,", "evidence": "Life,"}]}'
    loopback.state.responder = lambda body: Canned(text=invented) if is_writer(body) else None
    app = WorkbenchApp(live_session(loopback.base_url, "json_schema"))
    async with app.run_test(size=(160, 40)) as pilot:
        titles = lambda: {c.title for c in app.get_system_commands(app.screen)}  # noqa: E731
        for value in ("A", "B", "C"):
            assert "Use the host parse as the writer" not in titles()
            await say(pilot, "support", f"module={value}")
        assert "Use the host parse as the writer" in titles()
        await say(pilot, "support", "module=D")
        notes = [e for e in app.session.state().memory.ledger if e.kind is EventKind.NOTE]
        assert len(notes) == 1 and "failed the contract 3 times in a row" in notes[0].describe()
        assert app.session.state().memory.facts == ()
        commands = {c.title: c for c in app.get_system_commands(app.screen)}
        commands["Use the host parse as the writer"].callback()
        await pilot.pause()
        assert "writer: host parse" in app.sub_title
        assert "the writer is now the host's own parse" in str(app.query_one("#ledger", Static).render())
        writer_calls = sum(1 for body in loopback.requests if is_writer(body))
        await say(pilot, "support", "module=Billing")
        assert [f.value for f in app.session.state().memory.facts] == ["Billing"]
        assert sum(1 for body in loopback.requests if is_writer(body)) == writer_calls
        assert "Use the host parse as the writer" not in titles()
