"""Widgets on their own, each in a tiny host app: the fact panel renders the one view it is given,
and a chat pane draws the turn it is sent as messages, from start to finish, failure or cancellation."""

import asyncio
from datetime import UTC, datetime

import pytest
from rich.console import Console
from textual import events
from textual.app import App, ComposeResult
from textual.widgets import Static

from tests.ui.helpers import PaneHost, reached, scripted_session
from tests.ui.helpers import ScreenHost as OneScreen
from workbench.memory import MemoryTurn, Outcome, Status, WorkingMemory
from workbench.memory.records import FactCandidate
from workbench.runtime import MemorySnapshot, MemoryUpdate, Mode, ModelConfig, TurnResult, build_models
from workbench.runtime.calls import CallRecord
from workbench.runtime.view import ResumedHistory, ResumedMessage
from workbench.session.assemble import assemble
from workbench.session.controller import TurnOutcome
from workbench.ui.app import WorkbenchApp
from workbench.ui.chat import ChatPane
from workbench.ui.chat_lines import HiddenNote, Hint, Notice, ResumedOpening, UserMessage
from workbench.ui.composer import Composer
from workbench.ui.facts import FactPanel, FactTable, MemoryView
from workbench.ui.messages import Streamed, TurnEnded
from workbench.ui.paste import PASTED_ESC
from workbench.ui.replies import AgentAnswer, AgentReply, PreRendered
from workbench.ui.screens import CallsScreen, HelpScreen
from workbench.ui.startup import stylesheet_dir

WHEN = datetime(2026, 11, 30, 9, 15, tzinfo=UTC)


class Host(App[None]):
    def __init__(self, widget) -> None:
        super().__init__()
        self.widget = widget
        self.seen: list = []

    def compose(self) -> ComposeResult:
        yield self.widget

    def on_turn_ended(self, event: TurnEnded) -> None:
        self.seen.append(event)

    def on_fact_panel_typed(self, event: FactPanel.Typed) -> None:
        self.seen.append(event)

    def on_composer_sent(self, event: Composer.Sent) -> None:
        self.seen.append(event)


def support_pane() -> ChatPane:
    return ChatPane("support", title="support", placeholder="type", hint="hint")


def settle(memory: WorkingMemory, text: str, *pairs: tuple[str, str]) -> MemoryUpdate:
    turn: MemoryTurn = memory.begin_turn(text, origin="support")
    candidates = [FactCandidate(key=k, value=v, evidence=f"{k}={v}") for k, v in pairs]
    outcome: Outcome = memory.admit(turn, candidates, WHEN)
    return MemoryUpdate(outcome, MemorySnapshot(memory.facts(), tuple(memory.ledger.latest())))


def answered(agent: str, reply: str, **more) -> TurnOutcome:
    return TurnOutcome(TurnResult(agent, MemoryTurn(0, 1, "hi"), reply=reply), **more)


def rows(panel: FactPanel) -> list[tuple[str, ...]]:
    table = panel.query_one(FactTable)
    return [tuple(c.plain for c in table.get_row_at(i)) for i in range(table.row_count)]


async def test_the_fact_panel_renders_the_view_it_is_given():
    memory = WorkingMemory()
    panel = FactPanel()
    async with Host(panel).run_test(size=(70, 30)) as pilot:
        assert rows(panel) == [] and "No facts" in str(panel.query_one("#evidence", Static).render())
        panel.view = MemoryView.after(settle(memory, "module=Reporting", ("module", "Reporting")))
        await pilot.pause()
        update = settle(memory, "module=Billing", ("module", "Billing"))
        assert update.outcome.status is Status.APPLIED
        panel.view = MemoryView.after(update)
        await pilot.pause()
        assert rows(panel) == [("module", "Reporting -> Billing", "2", "09:15:00")]
        changes = str(panel.query_one("#changes", Static).render())
        assert 'module replaced: "Reporting" -> "Billing"' in changes
        assert panel.query_one("#changes-box").has_class("-replaced")
        ledger = str(panel.query_one("#ledger", Static).render()).splitlines()
        assert ledger[0].startswith("[t2 support] module replaced") and ledger[1].startswith("[t1 support]")


async def test_a_printable_key_on_the_fact_panel_is_sent_up_not_lost():
    panel = FactPanel()
    host = Host(panel)
    async with host.run_test(size=(70, 30)) as pilot:
        panel.query_one(FactTable).focus()
        await pilot.press("m", "y", "space")
        assert [e.character for e in host.seen] == ["m", "y", " "]


async def test_a_chat_pane_draws_its_turn_from_the_messages_it_is_sent():
    pane = support_pane()
    async with Host(pane).run_test(size=(80, 24)) as pilot:
        await pane.begin("hi")
        pane.post_message(Streamed("Hello "))
        await pilot.pause()
        assert pane.busy and pane.turns == 1 and pane.query(AgentReply)
        pane.post_message(Streamed("there"))
        pane.post_message(TurnEnded("support", answered("support", "Hello there")))
        await pane.app.workers.wait_for_complete()
        await pilot.pause()
        assert not pane.busy and not pane.query(AgentReply)
        assert [a.text for a in pane.query(AgentAnswer)] == ["Hello there"]
        assert [str(u.render()) for u in pane.query(UserMessage)] == ["hi"]
        assert [type(m) for m in pane.app.seen] == [TurnEnded]  # it goes on to the app


async def test_a_chat_pane_says_when_the_batch_of_its_turn_was_refused_after_the_answer():
    pane = support_pane()
    async with Host(pane).run_test(size=(80, 24)) as pilot:
        six = [
            ("module", "A"),
            ("database", "B"),
            ("customer", "C"),
            ("version", "1"),
            ("environment", "E"),
            ("log", "F"),
        ]
        text = "; ".join(f"{k}={v}" for k, v in six)
        update = settle(WorkingMemory(), text, *six)
        assert update.outcome.status is Status.REJECTED
        await pane.begin(text)
        pane.post_message(TurnEnded("support", answered("support", "Noted.", memory=(update,))))
        await pane.app.workers.wait_for_complete()
        await pilot.pause()
        shown = list(pane.conversation.children)
        assert isinstance(shown[-2], AgentAnswer) and isinstance(shown[-1], Notice)
        assert "Batch refused (" in str(shown[-1].render()) and "at most 5 facts" in str(shown[-1].render())


async def test_a_chat_pane_shows_a_failed_turn_and_keeps_nothing_of_it():
    pane = ChatPane("logs", title="logs", placeholder="type", hint="hint")
    async with Host(pane).run_test(size=(80, 24)) as pilot:
        await pane.begin("hi")
        pane.post_message(Streamed("partial"))
        failed = TurnOutcome(TurnResult("logs", MemoryTurn(0, 1, "hi"), error="HTTP 500 from the server"))
        pane.post_message(TurnEnded("logs", failed))
        await pane.app.workers.wait_for_complete()
        await pilot.pause()
        assert not pane.query(AgentAnswer) and not pane.query(AgentReply) and not pane.busy
        assert "HTTP 500" in str(pane.query(Notice).last().render())


async def test_a_chat_pane_runs_its_turn_through_the_session_and_posts_its_end_up():
    """The pane's own worker asks the session; the answer is drawn here and TurnEnded reaches the app."""
    session = assemble(build_models(ModelConfig()), memory=WorkingMemory(clock=lambda: WHEN))
    pane = support_pane()
    host = Host(pane)
    async with host.run_test(size=(80, 24)) as pilot:
        await pane.ask(session, "module=Billing")
        await reached(pane, "busy", lambda busy: not busy)
        await pilot.pause()
        assert not pane.busy and pane.turns == 1 and "Billing" in pane.query_one(AgentAnswer).text
        [ended] = [m for m in host.seen if isinstance(m, TurnEnded)]
        assert ended.outcome is not None and [f.value for f in ended.outcome.memory[-1].memory.facts] == ["Billing"]


async def test_escape_cancels_the_panes_turn_and_a_cancelled_turn_says_so():
    session = assemble(build_models(ModelConfig(), scripted_delay=30.0), memory=WorkingMemory())
    pane = support_pane()
    host = Host(pane)
    async with host.run_test(size=(80, 24)) as pilot:
        await pane.ask(session, "hi")
        pane.prompt.focus()
        await pilot.press("escape")
        await reached(pane, "busy", lambda busy: not busy)
        await pilot.pause()
        [ended] = [m for m in host.seen if isinstance(m, TurnEnded)]
        assert ended.cancelled and ended.outcome is None
        assert not pane.busy and "Cancelled" in str(pane.query(Notice).last().render())


@pytest.mark.parametrize("how", ["cancelled", "failed"])
async def test_a_turn_that_ended_after_its_facts_were_admitted_does_not_claim_they_are_unchanged(how):
    """Esc, or another memory's failed call, after extraction: the batch stays admitted (the ledger says so)."""
    pane = support_pane()
    async with Host(pane).run_test(size=(80, 24)) as pilot:
        await pane.begin("module=Billing")
        if how == "cancelled":
            pane.post_message(TurnEnded("support", None, cancelled=True, applied=True))
        else:
            admitted = MemoryUpdate(Outcome(Status.APPLIED, ()), MemorySnapshot())
            result = TurnResult("support", MemoryTurn(0, 1, "module=Billing"), error="HTTP 500 from the server")
            pane.post_message(TurnEnded("support", TurnOutcome(result, memory=(admitted,))))
        await pane.app.workers.wait_for_complete()
        await pilot.pause()
        said = str(pane.query(Notice).last().render())
        assert "facts were admitted" in said and "Nothing from this turn was stored" not in said
        assert said.startswith("Cancelled. Its facts" if how == "cancelled" else "The support agent's call failed")
        assert "Facts and history are unchanged" not in said


async def test_escape_while_the_finished_answer_renders_shows_it_and_ends_the_turn(monkeypatch):
    rendering, rendered = asyncio.Event(), AgentAnswer.rendered

    async def long_render(text, console, options):  # a long answer takes about a second to render
        rendering.set()
        await asyncio.sleep(30)
        return await rendered(text, console, options)

    monkeypatch.setattr(AgentAnswer, "rendered", long_render)
    pane = support_pane()
    async with Host(pane).run_test(size=(80, 24)) as pilot:
        await pane.begin("hi")
        pane.post_message(Streamed("Hello there"))
        pane.post_message(TurnEnded("support", answered("support", "Hello there")))
        await rendering.wait()
        pane.prompt.focus()
        await pilot.press("escape")
        await pilot.pause()
        # The answer was stored, so it is shown; the pane takes messages again and a forget clears the turn.
        assert [a.text for a in pane.query(AgentAnswer)] == ["Hello there"] and not pane.query(AgentReply)
        assert not pane.busy
        await pane.replace_history("forgotten")
        assert not pane.query(UserMessage) and not pane.query(AgentAnswer)


async def test_a_forget_during_a_streaming_reply_takes_the_turn_off_the_pane_and_its_answer_is_not_drawn():
    pane = support_pane()
    async with Host(pane).run_test(size=(80, 24)) as pilot:
        await pane.begin("customer=Contoso; why?")
        pane.post_message(Streamed("Contoso is"))
        await pilot.pause()
        await pane.replace_history("History replaced by forget customer.")
        pane.post_message(Streamed(" a customer"))  # the turn goes on, on the old session
        pane.post_message(TurnEnded("support", answered("support", "Contoso is a customer")))
        await pilot.pause()
        await pilot.pause()
        shown = " ".join(str(w.render()) for w in pane.conversation.children)
        assert "Contoso" not in shown and "turn under way is not shown" in shown
        assert not pane.busy and not pane.query(UserMessage) and not pane.query(AgentReply)


async def test_the_composer_does_not_blink_ctrl_j_starts_a_line_and_enter_sends_the_whole_draft():
    composer = Composer("type")
    host = Host(composer)
    async with host.run_test(size=(60, 10)) as pilot:
        assert not composer.cursor_blink
        composer.focus()
        await pilot.press(*"module=Billing", "ctrl+j", *"database=Oracle", "enter")
        assert [e.text for e in host.seen] == ["module=Billing\ndatabase=Oracle"]
        assert composer.text == "" and not composer.undo_texts()[0]  # it left the input, and its history


async def test_the_composer_draws_in_no_width_and_its_placeholder_once_it_has_room():
    """A terminal too narrow for the pane, or a layout made with the breakpoint's old styles (a resize
    from 140 to 80 columns squeezes three panes into 16 columns for a frame), leaves no column inside
    the input: it draws nothing there and its placeholder again once there is room."""
    composer = Composer("Ask · Ctrl+J new line")
    composer.styles.padding = (0, 1)
    composer.styles.width = 2  # the padding only: no column for text
    host = Host(composer)
    async with host.run_test(size=(60, 10)) as pilot:
        await pilot.pause()
        assert composer.content_size.width == 0 and composer.render_line(0).text == ""
        composer.styles.width = 30
        await pilot.pause()
        assert composer.render_line(0).text.startswith("Ask · Ctrl+J new line")


class ShortPane(ChatPane):
    MAX_SHOWN, SHOW_MORE = 6, 2


async def test_a_long_conversation_keeps_only_the_latest_messages_on_screen_and_shows_more_on_a_click():
    pane = ShortPane("support", title="support", placeholder="type", hint="hint")
    async with Host(pane).run_test(size=(80, 24)) as pilot:
        for i in range(5):
            await pane.begin(f"question {i}")
            pane.post_message(TurnEnded("support", answered("support", f"answer {i}")))
            await pilot.pause()
            await pane.app.workers.wait_for_complete()
        await pilot.pause()
        assert [str(w.render()) for w in pane.query(UserMessage)] == ["question 2", "question 3", "question 4"]
        note = pane.query_one(HiddenNote)
        assert str(note.render()).startswith("4 earlier message(s) are not shown")
        assert "Click here to show 2 more." in str(note.render())

        pane.conversation.scroll_home(animate=False)
        await pilot.pause()
        await pilot.click(HiddenNote)
        await pilot.pause()
        assert [str(w.render()) for w in pane.query(UserMessage)] == [f"question {i}" for i in range(1, 5)]
        assert "answer 1" in pane.query(AgentAnswer).first().text
        assert str(pane.query_one(HiddenNote).render()).startswith("2 earlier message(s)")
        await pilot.click(HiddenNote)
        await pilot.pause()
        assert [str(w.render()) for w in pane.query(UserMessage)] == [f"question {i}" for i in range(5)]
        assert not pane.query(HiddenNote)  # nothing hidden any more

        await pane.replace_history("History replaced by forget")  # nothing kept to show again
        assert not pane.query(UserMessage) and not pane.query(HiddenNote)


async def test_a_streaming_reply_is_redrawn_in_batches_and_shows_only_its_latest_text():
    reply = AgentReply()
    async with Host(reply).run_test(size=(80, 24)) as pilot:
        for i in range(400):
            await reply.add(f"line {i} of a long answer\n")
        await pilot.pause(2 / AgentReply.REDRAW_HZ)
        shown = str(reply.render())
        assert shown.startswith("[... ") and "characters so far" in shown
        assert "line 399 of a long answer" in shown and "line 0 of" not in shown
        assert len(shown) <= AgentReply.TAIL_CHARS + 100
        # At its full height the reply stops growing: later redraws repaint it without a layout.
        assert reply.size.height == len(shown.splitlines()) == AgentReply.TAIL_LINES
        await reply.add("one more line\n")
        await pilot.pause(2 / AgentReply.REDRAW_HZ)
        assert "one more line" in str(reply.render()) and reply.size.height == AgentReply.TAIL_LINES


class StyledHost(Host):
    """A host with the app's stylesheet: the conversation's stream layout sizes replies by content."""

    CSS_PATH = [stylesheet_dir() / "workbench.tcss"]


async def test_a_streaming_reply_ends_with_its_newest_line_in_a_narrow_pane_and_after_a_resize():
    pane = support_pane()
    async with StyledHost(pane).run_test(size=(40, 40)) as pilot:
        await pane.begin("hi")
        await pilot.pause()
        reply = pane.query_one(AgentReply)
        sent = 0

        async def stream(words: int) -> list[str]:
            nonlocal sent
            for _ in range(words):
                sent += 1
                await reply.add(f"w{sent:04d} ")
            await pilot.pause(2 / AgentReply.REDRAW_HZ)
            shown = ["".join(s.text for s in strip).rstrip() for strip in reply.render_lines(reply.region.reset_offset)]
            # The reply is as tall as what it draws (nothing cut off below, no blank rows) and ends with the newest word.
            assert len(shown) == len(str(reply.render()).splitlines()) and shown[-1].endswith(f"w{sent:04d}")
            return shown

        await stream(1)
        per_row = (reply.content_size.width + 1) // len("w0000 ")  # the last word's space may overhang
        await stream(9 * per_row - 1)  # nine rows
        await stream(per_row)  # ten: TAIL_LINES, no banner yet
        shown = await stream(per_row)  # the banner takes three rows at this width
        assert shown[0].strip().startswith("[... ") and len(shown) == AgentReply.TAIL_LINES
        await pilot.resize_terminal(100, 40)
        await stream(5)
        await pilot.resize_terminal(50, 40)
        assert len(await stream(5)) == AgentReply.TAIL_LINES


async def test_an_answer_rendered_ahead_draws_exactly_as_rendered_on_screen():
    text = "# Logs\n\nCheck the **recent** entries first.\n\n- one\n- two\n\n```text\nlevel=warn\n```\n" * 5
    plain = AgentAnswer(text)
    async with Host(plain).run_test(size=(60, 80)) as pilot:
        app = pilot.app
        size, lines = plain.size, plain.render_lines(plain.region.reset_offset)
        options = app.console_options.update_width(plain.content_size.width)
        ahead = await AgentAnswer.rendered(text, app.console, options)
        await plain.remove()
        await app.mount(ahead)
        await pilot.pause()
        assert isinstance(ahead.content, PreRendered) and ahead.content.width == ahead.content_size.width
        assert ahead.size == size and ahead.render_lines(ahead.region.reset_offset) == lines
        await pilot.resize_terminal(45, 80)  # another width: rendered again, as a plain answer is
        await pilot.pause()
        plain = AgentAnswer(text)
        await app.mount(plain)
        await pilot.pause()
        assert ahead.content_size.width != ahead.content.width and ahead.size == plain.size
        assert ahead.render_lines(ahead.region.reset_offset) == plain.render_lines(plain.region.reset_offset)


async def test_an_answer_is_rendered_in_slices_that_let_other_work_run(monkeypatch):
    """Each slice ends with a yield to the event loop, where typed keys are handled."""
    yields = 0
    sleep = asyncio.sleep

    async def counting(delay: float) -> None:
        nonlocal yields
        yields += 1
        await sleep(delay)

    monkeypatch.setattr(AgentAnswer, "SLICE_SECONDS", 0.0)
    monkeypatch.setattr(asyncio, "sleep", counting)
    console = Console(width=60)
    answer = await AgentAnswer.rendered("- a point worth making\n" * 300, console, console.options)
    assert isinstance(answer.content, PreRendered) and yields >= len(answer.content.lines) // 2 > 100


async def test_a_finished_answer_hides_nothing_the_model_wrote():
    """Rich's Markdown drops HTML and comments, a link's address and title, reference definitions, a
    code fence's info string and a table row's cells beyond the header's, and decodes entities into the
    characters they name: all shown as sent, line by line."""
    hidden = [
        '[the docs](http://evil.example/?k=1 "a title")',
        "<b>tag</b>",
        "<!-- a comment -->",
        "![an image](http://img.example/x.png)",
        "<http://auto.example>",
        "[ref]: http://ref.example",
        "&#x202E;&amp;",
        "run this first",
    ]
    text = f"{hidden[0]} {hidden[1]} {hidden[2]}\n\n<div>a block</div>\n\n{hidden[3]} {hidden[4]}\n\n"
    text += f"{hidden[5]}\n\n{hidden[6]} and **bold**\n\n```python {hidden[7]}\nprint(1)\n```\n"
    text += "\n| a |\n|---|\n| b | a cell beyond the header's |\n\nline one\nline two\n"
    console = Console(width=200, color_system=None)
    answer = await AgentAnswer.rendered(text, console, console.options)
    assert isinstance(answer.content, PreRendered)
    shown = "\n".join("".join(segment.text for segment in line).rstrip() for line in answer.content.lines)
    for sent in [*hidden, "<div>a block</div>", "print(1)", "| b | a cell beyond the header's |"]:
        assert sent in shown
    assert "line one\nline two" in shown  # each line as sent
    assert "**" not in shown and "bold" in shown and "\u202e" not in shown  # Markdown still drawn


async def test_a_finished_answer_changes_nothing_the_model_wrote():
    """Rich's Markdown took `2*3*4` for emphasis (234), dropped an escape's backslash, renumbered a
    list from its first number and dropped every number's dot."""
    text = "2*3*4 and x**2**y, but *this* is emphasis\n\n\\*starred\\* C:\\temp\\\nnext\n\n"
    text += "1. first\n1. again\n7. seven\n\n3) three\n"
    console = Console(width=80, color_system=None)
    answer = await AgentAnswer.rendered(text, console, console.options)
    assert isinstance(answer.content, PreRendered)
    shown = [("".join(segment.text for segment in line)).strip() for line in answer.content.lines]
    assert "2*3*4 and x**2**y, but this is emphasis" in shown
    assert "\\*starred\\* C:\\temp\\" in shown and "next" in shown
    assert [line for line in shown if line[:2] in ("1.", "7.")] == ["1. first", "1. again", "7. seven"]
    assert "3) three" in shown


@pytest.mark.parametrize(
    ("text", "width"),
    [
        ("".join("  " * depth + f"- level {depth}\n" for depth in range(12)) + "  " * 12 + "- the secret word\n", 200),
        ("> " * 25 + "the secret word", 200),
        ("> " * 12 + "the secret word", 40),
        ("".join("  " * depth + f"- level {depth}\n" for depth in range(8)) + "  " * 8 + "- the secret word\n", 30),
    ],
    ids=["list deeper than the parser goes", "quote deeper than the parser goes", "quote too deep", "list too deep"],
)
async def test_a_reply_nested_too_deep_is_shown_as_typed(text, width):
    """Beyond its nesting limit the parser dropped the rest of the block; nested deeper than the width
    allows, Rich drew the text in no columns: either way the words vanished."""
    console = Console(width=width, color_system=None)
    answer = await AgentAnswer.rendered(text, console, console.options)
    assert isinstance(answer.content, PreRendered)
    shown = " ".join("".join(segment.text for segment in line) for line in answer.content.lines).split()
    assert " ".join(text.split()) in " ".join(shown)  # every word, in order, wrapped or not


async def test_what_the_model_saw_before_any_call_says_so_once():
    class ScreenHost(App[None]):
        def on_mount(self) -> None:
            self.push_screen(CallsScreen("logs", []))

    async with ScreenHost().run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        shown = [str(w.render()) for w in pilot.app.screen.query(Static)]
        assert sum(s.count("No call of the logs agent to show") for s in shown) == 1
        assert not pilot.app.screen.query("#context-bar")


@pytest.mark.parametrize(
    ("screen", "body"),
    [
        (lambda: HelpScreen(), "#help-body"),
        (
            lambda: CallsScreen("support", [CallRecord(1, "support", 1, "support", "m", "i", (("user", "a\n" * 80),))]),
            "#calls",
        ),
    ],
    ids=["help", "what the model saw"],
)
async def test_a_long_screen_scrolls_with_the_keyboard_as_soon_as_it_opens(screen, body):
    """The app focuses its support input by AUTO_FOCUS, which matched nothing on these screens: with
    nothing focused, PageDown and the arrows did nothing until Tab, and the text below stayed out of reach."""

    class ScreenHost(App[None]):
        AUTO_FOCUS = WorkbenchApp.AUTO_FOCUS

        def on_mount(self) -> None:
            self.push_screen(screen())

    async with ScreenHost().run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        await pilot.press("pagedown")
        await pilot.pause()
        assert pilot.app.screen.query_one(body).scroll_y > 0


async def test_the_drift_report_scrolls_with_the_keyboard_as_soon_as_the_lab_is_done():
    """As for help and what the model saw: the app's AUTO_FOCUS matched nothing on the drift screen, so
    at 80x24, where six lines of the report show, PageDown did nothing until Tab."""
    from tests.ui.helpers import built_in_lab

    class DriftHost(App[None]):
        AUTO_FOCUS = WorkbenchApp.AUTO_FOCUS
        CSS_PATH = [stylesheet_dir() / "workbench.tcss"]

        def on_mount(self) -> None:
            self.push_screen(built_in_lab())

    async with DriftHost().run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        await pilot.app.workers.wait_for_complete()
        await pilot.pause()
        await pilot.press("pagedown")
        await pilot.pause()
        assert pilot.app.screen.query_one("#drift-report").scroll_y > 0


async def test_the_export_dialog_takes_the_file_name_as_soon_as_it_opens():
    """Typing names the file and Enter saves: with nothing focused (the app's AUTO_FOCUS matched nothing
    here) the keys went nowhere and Enter did nothing."""
    from workbench.ui.export_screen import ExportChronology, ExportRequest

    answers: list[ExportRequest | None] = []

    class ExportHost(App[None]):
        AUTO_FOCUS = WorkbenchApp.AUTO_FOCUS
        CSS_PATH = [stylesheet_dir() / "workbench.tcss"]

        def on_mount(self) -> None:
            self.push_screen(ExportChronology([(1, "support", "Which module?")], "talk.json"), answers.append)

    async with ExportHost().run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        await pilot.press("end", "backspace", "backspace", "backspace", "backspace", "j", "s", "o", "n", "l")
        await pilot.press("enter")
        await pilot.pause()
        assert answers == [ExportRequest("talk.jsonl", [1])]


async def test_earlier_resumed_messages_shown_again_come_back_below_the_resumed_divider(monkeypatch):
    monkeypatch.setattr(ChatPane, "MAX_SHOWN", 6)
    monkeypatch.setattr(ChatPane, "SHOW_MORE", 3)
    said = tuple(ResumedMessage("user" if n % 2 == 0 else "assistant", f"message {n}") for n in range(10))
    pane = support_pane()
    async with Host(pane).run_test(size=(80, 40)) as pilot:
        pane.show_resumed(ResumedHistory("support", "/tmp/kept", None, said))
        await pilot.pause()

        def order() -> list[str]:
            kinds = {HiddenNote: "hidden", ResumedOpening: "opening", Notice: "closing"}
            return [
                next((name for cls, name in kinds.items() if isinstance(w, cls)), None)
                or (w.text if isinstance(w, AgentAnswer) else str(w.render()))
                for w in pane.conversation.children
                if not isinstance(w, Hint)
            ]

        assert order() == ["opening", "hidden", "message 6", "message 7", "message 8", "message 9", "closing"]
        for _ in range(2):
            pane.query_one(HiddenNote).post_message(HiddenNote.ShowMore())
            await pilot.pause()
        assert order() == ["opening", *(f"message {n}" for n in range(10)), "closing"]


async def test_the_panes_footer_never_cuts_its_token_count():
    """At 140 columns (a pane 38 wide) the footer read "since start: 1 turn · tokens un…": the words go first."""
    from workbench.runtime.usage import Usage

    pane = support_pane()
    async with StyledHost(pane).run_test(size=(38, 20)) as pilot:
        pane.turns = 1
        await pilot.pause()
        assert pane.border_subtitle == "1 turn · tokens unknown"
        pane.usage = Usage(123_456, 7_890)
        await pilot.pause()
        assert pane.border_subtitle == "123,456 in / 7,890 out tokens"
        assert len(pane.border_subtitle) <= pane.size.width - 4
        await pilot.resize_terminal(88, 20)
        await pilot.pause()
        assert pane.border_subtitle == "since start: 1 turn · 123,456 in / 7,890 out tokens"


async def test_the_reply_to_a_refused_batch_is_followed_by_a_line_saying_the_facts_did_not_change():
    session = assemble(build_models(ModelConfig()), memory=WorkingMemory(clock=lambda: WHEN))
    pane = support_pane()
    host = StyledHost(pane)
    async with host.run_test(size=(80, 24)) as pilot:
        for text in ("module=Reporting", "module=A; database=B; customer=C; version=1; environment=prod; log=/var"):
            await pane.ask(session, text)
            await reached(pane, "busy", lambda busy: not busy)  # its answer drawn
        await pilot.pause()
        shown = list(pane.conversation.children)
        answers = [i for i, w in enumerate(shown) if isinstance(w, AgentAnswer)]
        refused = [i for i, w in enumerate(shown) if isinstance(w, Notice) and "refused" in str(w.render())]
        assert len(answers) == 2 and refused == [answers[1] + 1] == [len(shown) - 1]
        line = str(shown[refused[0]].render())
        assert "at most 5 facts" in line and "the facts were not changed" in line
        assert [f.value for f in session.state().memory.facts] == ["Reporting"]


async def test_a_multi_line_paste_keeps_its_lines_and_declares_every_line():
    host = PaneHost(scripted_session())
    async with host.run_test(size=(80, 24)) as pilot:
        host.pane.prompt.focus()
        host.post_message(events.Paste("version=7.1\nlog=/var/log/app.log\r\nconstraint=no restarts"))
        await pilot.pause()
        await host.sent(pilot)
        assert {f.key: f.value for f in host.session.state().memory.facts} == {
            "version": "7.1",
            "log": "/var/log/app.log",
            "constraint": "no restarts",
        }
        (user,) = host.pane.query(UserMessage)
        assert str(user.render()).splitlines() == ["version=7.1", "log=/var/log/app.log", "constraint=no restarts"]


async def test_control_characters_in_a_paste_are_shown_and_the_user_is_told():
    host = PaneHost(scripted_session())
    async with host.run_test(size=(80, 24), notifications=True) as pilot:
        prompt = host.pane.prompt
        prompt.focus()
        prompt.insert("symptom=before ")
        host.post_message(events.Paste("\x1b[31mRED\x1b[0m after bell\x07"))
        await pilot.pause()
        assert prompt.text == "symptom=before \\x1b[31mRED\\x1b[0m after bell\\x07"
        assert any("3 control or invisible character(s)" in n.message for n in host._notifications)
        await host.sent(pilot)
        (fact,) = host.session.state().memory.facts
        assert fact.value == "before \\x1b[31mRED\\x1b[0m after bell\\x07"
        host.post_message(events.Paste(f"{PASTED_ESC}[1m"))  # an ESC as the terminal reader hands it over
        await pilot.pause()
        assert prompt.text == "\\x1b[1m"


async def test_what_the_model_saw_for_an_agent_its_calls_and_the_context_of_its_last_request():
    session = scripted_session(Mode.PROVIDER)
    await session.ask("support", "module=Billing")
    await session.ask("logs", "Where can I find logs?")

    def calls_of(agent: str) -> CallsScreen:
        pane = session.pane(agent)
        return CallsScreen(agent, pane.calls, splits=pane.splits, recalled=pane.recalled)

    async with OneScreen(calls_of("logs")).run_test(size=(140, 40)) as pilot:
        await pilot.pause()
        screen = pilot.app.screen
        shown = str(screen.query_one("#calls Static", Static).render())
        assert "logs call" in shown and "You are the logs agent" in shown
        assert "reported usage: unknown" in shown
        assert "an estimate, not a bill" in shown
        assert 'module = "Billing"' in shown and "Where can I find logs?" in shown
        assert "writer call" not in shown  # the logs turn declared nothing: no writer call
        bar = str(screen.query_one("#context-bar").render())
        assert "Context of the last request (turn 2)" in bar and "facts block" in bar and "history 0" in bar
        assert "(characters/4, an estimate)" in bar and "reported input tokens: unknown" in bar
    async with OneScreen(calls_of("support")).run_test(size=(140, 40)) as pilot:
        await pilot.pause()
        shown = str(pilot.app.screen.query_one("#calls Static", Static).render())
        assert "support call" in shown and "writer call" in shown


async def test_a_turn_cancelled_before_its_worker_ran_ends_as_cancelled_and_asks_nothing():
    session = scripted_session()
    pane = support_pane()
    host = Host(pane)
    async with host.run_test(size=(80, 24)) as pilot:
        await pane.ask(session, "module=Billing")
        pane.action_cancel()  # in the same tick: the worker has not started
        await reached(pane, "busy", lambda busy: not busy)
        await pilot.pause()
        [ended] = [m for m in host.seen if isinstance(m, TurnEnded)]
        assert ended.cancelled and "Cancelled" in str(pane.query(Notice).last().render())
        assert session.state().memory.facts == () and not session.transcript.entries
