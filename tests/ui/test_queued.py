"""Enter on a pane that is still answering: the message leaves the input and waits its turn, in order,
one turn each, so what is typed after it is a message of its own. It was refused with its draft kept,
and the next text typed was appended to it: `database="PostgreSQLContoso Ltd 7731 says the export
fails"` was admitted. A turn that fails keeps its message for F9, which sends it again."""

from __future__ import annotations

import asyncio
from dataclasses import replace

import pytest

from tests.ui.helpers import reached, scripted_session
from workbench.ui.app import WorkbenchApp
from workbench.ui.chat import SEND_AGAIN, ChatPane
from workbench.ui.chat_lines import Notice, UserMessage

CUT_OFF = "the reply was cut off at 1,024 tokens"


class Gated:
    """The session's first turn waits for `gate` (only the wait is the test's; the turn is real), then
    ends as `end` says: answered, failed (the call cut off), refused (the batch), or cancelled (Esc)."""

    def __init__(self, session, end: str) -> None:
        self.gate, self.asked, self.end = asyncio.Event(), asyncio.Event(), end
        real = session.ask

        async def ask(agent, text, on_text=None):
            first = not self.asked.is_set()
            self.asked.set()
            if first:
                await self.gate.wait()
            outcome = await real(agent, text, on_text)
            if first and end == "failed":
                return replace(outcome, result=replace(outcome.result, reply="", error=CUT_OFF), memory=())
            return outcome

        session.ask = ask


FIRST = {
    "answered": "module=Reporting",
    "failed": "hello",
    "cancelled": "hello",
    "refused": "module=Billing; colour=blue",
}


async def over(pilot, pane: ChatPane, turns: int) -> None:
    """Wait until the pane's `turns`-th turn has been drawn to its end."""
    await reached(pane, "turns", lambda n: n >= turns)
    await reached(pane, "busy", lambda busy: not busy)
    await pilot.app.workers.wait_for_complete()
    await pilot.pause()


@pytest.mark.parametrize("end", ["answered", "failed", "cancelled", "refused"])
async def test_enter_on_a_busy_pane_sends_the_message_once_its_turn_ends_and_what_follows_stays_apart(end):
    app = WorkbenchApp(session := scripted_session())
    gated = Gated(session, end)
    async with app.run_test(size=(140, 40), notifications=True) as pilot:
        pane = app.pane("support")
        prompt = pane.prompt
        prompt.focus()
        await pilot.press(*FIRST[end], "enter")
        await asyncio.wait_for(gated.asked.wait(), 10)  # the first turn runs, and waits
        await pilot.press(*"database=PostgreSQL", "enter")  # Enter on the busy pane
        await pilot.pause()
        assert prompt.text == "" and list(prompt.waiting) == ["database=PostgreSQL"]
        await pilot.press(*"Contoso Ltd 7731 says the export fails")  # typed at once after it
        if end == "cancelled":
            await pilot.press("escape")
        else:
            gated.gate.set()
        await reached(pane, "turns", lambda n: n == 2)  # the counter updates: the waiting one is asked
        await pilot.press(*" today")
        await over(pilot, pane, 2)
        facts = {f.key: f.value for f in app.session.state().memory.facts}
        assert facts["database"] == "PostgreSQL"
        assert [m.text for m in pane.query(UserMessage)] == [FIRST[end], "database=PostgreSQL"]
        assert prompt.text == "Contoso Ltd 7731 says the export fails today" and not prompt.waiting


async def test_a_burst_of_typing_sends_each_message_apart():
    """A terminal hands a burst (Enter, the next text, Enter) to the input in one read: the input
    handles all of its keys before the app sees the first Enter. The draft was taken from the input
    only then, so the second Enter sent the first message again with the next text glued on, and
    `database="PostgreSQLContoso Ltd 7731 says the export fails"` was admitted (issue 37, repro 4,
    rerun in a real terminal; pressing key by key, as the tests above do, gives the app its turn)."""
    app = WorkbenchApp(scripted_session())
    async with app.run_test(size=(140, 40), notifications=True) as pilot:
        await reached(app, "ready", bool)
        pane = app.pane("support")
        prompt = pane.prompt
        for text in ("database=PostgreSQL", "Contoso Ltd 7731 says the export fails"):
            prompt.insert(text)  # as the keys of one read are handled: no message in between
            prompt.action_send()
        assert prompt.text == ""
        await over(pilot, pane, 2)
        said = [m.text for m in pane.query(UserMessage)]
        assert said == ["database=PostgreSQL", "Contoso Ltd 7731 says the export fails"]
        assert {f.key: f.value for f in app.session.state().memory.facts} == {"database": "PostgreSQL"}


async def test_a_refused_message_goes_back_in_front_of_what_was_typed_after_it():
    app = WorkbenchApp(scripted_session())
    async with app.run_test(size=(140, 40), notifications=True) as pilot:
        await reached(app, "ready", bool)
        prompt = app.pane("support").prompt
        prompt.insert("x" * 4097)
        prompt.action_send()
        prompt.insert("next")  # typed before the app refused it
        await pilot.pause()
        assert prompt.text == "x" * 4097 + "next" and app.pane("support").turns == 0
        assert any("at most 4,096 are read" in n.message for n in app._notifications)


async def test_messages_sent_while_a_pane_answers_are_asked_in_order_one_turn_each():
    app = WorkbenchApp(session := scripted_session())
    gated = Gated(session, "answered")
    async with app.run_test(size=(140, 40), notifications=True) as pilot:
        pane = app.pane("support")
        pane.prompt.focus()
        await pilot.press(*"customer=Contoso", "enter")
        await asyncio.wait_for(gated.asked.wait(), 10)
        for text in ("module=Billing", "mem", "module=Reporting"):
            await pilot.press(*text, "enter")
        await pilot.pause()
        assert list(pane.prompt.waiting) == ["module=Billing", "mem", "module=Reporting"]
        gated.gate.set()
        await over(pilot, pane, 3)
        said = [m.text for m in pane.query(UserMessage)]
        assert said == ["customer=Contoso", "module=Billing", "module=Reporting"]
        assert any(str(n.render()).startswith("mem: 2 fact(s)") for n in pane.query(Notice))  # between them
        assert {f.key: f.value for f in app.session.state().memory.facts} == {
            "customer": "Contoso",
            "module": "Reporting",
        }


@pytest.mark.parametrize("end", ["failed", "cancelled"])
async def test_a_turn_that_failed_keeps_its_message_and_f9_sends_it_again_leaving_the_draft_as_it_is(end):
    app = WorkbenchApp(session := scripted_session())
    gated = Gated(session, end)
    async with app.run_test(size=(140, 40), notifications=True) as pilot:
        pane = app.pane("support")
        prompt = pane.prompt
        prompt.focus()
        await pilot.press(*"customer=Fabrikam 2040", "enter")
        await asyncio.wait_for(gated.asked.wait(), 10)
        await pilot.press(*"next")
        await pilot.press("escape") if end == "cancelled" else gated.gate.set()
        await over(pilot, pane, 1)
        assert SEND_AGAIN in str(pane.query(Notice).last().render())
        assert prompt.unanswered == "customer=Fabrikam 2040" and prompt.text == "next"
        await pilot.press("f9")
        await over(pilot, pane, 2)
        assert [m.text for m in pane.query(UserMessage)] == ["customer=Fabrikam 2040"] * 2
        assert {f.key: f.value for f in app.session.state().memory.facts} == {"customer": "Fabrikam 2040"}
        assert prompt.text == "next" and prompt.unanswered is None
