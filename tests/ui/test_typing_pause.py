"""A finished answer is drawn in a pause in typing elsewhere, so keystrokes never wait on it; typing
in the pane's own composer never holds its turn open."""

import asyncio
import time

from textual import events
from textual.widget import Widget

from tests.ui.helpers import make_app
from workbench.ui.replies import AgentAnswer, AgentReply
from workbench.ui.typing import TypingClock


async def test_the_clock_waits_for_a_pause_in_typing_elsewhere_only():
    clock, here, there = TypingClock(), Widget(), Widget()
    started = time.monotonic()
    await clock.pause(here)  # nothing typed yet
    clock.noted(here)
    await clock.pause(here)  # typed here: no wait
    assert time.monotonic() - started < clock.PAUSE / 2
    clock.noted(there)
    assert clock.typing_elsewhere(here) and not clock.typing_elsewhere(there)
    await clock.pause(here)
    assert time.monotonic() - started >= clock.PAUSE and not clock.typing_elsewhere(here)


async def start_support_turn(app, pilot) -> None:
    app.pane("support").prompt.focus()
    await pilot.pause()
    app.post_message(events.Paste("Where are the logs?"))
    await pilot.pause()
    await pilot.press("enter")


def answered(app) -> bool:
    """The runtime has the support agent's answer (the model call finished)."""
    return any(c.finished and c.purpose == "support" for c in app.runtime.last_turn_calls("support"))


async def test_a_finished_answer_waits_while_the_user_types_in_the_other_pane():
    app = make_app(delay=0.02)  # the built-in model streams a word every 20 ms
    async with app.run_test(size=(140, 40)) as pilot:
        support, logs = app.pane("support"), app.pane("logs")
        await start_support_turn(app, pilot)
        logs.prompt.focus()
        typed = ""
        assert not answered(app)
        for _ in range(200):
            if answered(app):
                break
            typed += "a"
            await pilot.press("a")
            await asyncio.sleep(0.02)
        assert answered(app)
        for _ in range(15):  # 0.3 s more of typing after the answer arrived: still the streamed text
            typed += "b"
            await pilot.press("b")
            await asyncio.sleep(0.02)
            assert support.busy and support.query(AgentReply) and not support.query(AgentAnswer)
        await app.workers.wait_for_complete()  # the user stopped typing: the answer is drawn
        await pilot.pause()
        assert not support.busy and not support.query(AgentReply)
        assert "Where are the logs?" in support.query(AgentAnswer).last().text
        assert logs.prompt.text == typed  # every key reached the other pane


async def test_typing_in_the_panes_own_input_does_not_hold_its_answer_back():
    app = make_app(delay=0.02)  # the built-in model streams a word every 20 ms
    async with app.run_test(size=(140, 40)) as pilot:
        support = app.pane("support")
        await start_support_turn(app, pilot)
        for _ in range(200):
            if answered(app):
                break
            await pilot.press("a")
            await asyncio.sleep(0.02)
        for _ in range(50):  # typing on in the same pane: the turn ends all the same
            if not support.busy:
                break
            await pilot.press("b")
            await asyncio.sleep(0.02)
        assert not support.busy and support.query(AgentAnswer)
