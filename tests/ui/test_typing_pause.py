"""A finished answer, and the facts its turn settled, are drawn in a pause in typing elsewhere, so
keystrokes never wait on them; typing in the pane's own input never holds its turn open. The
typing clock is a fake one here: the user "stops typing" when the test moves it on."""

import asyncio
import time

from textual import events
from textual.widget import Widget
from textual.widgets import Static

from tests.ui.helpers import FIXED, PaneHost, answer, make_app, pushed, reached
from workbench.memory import WorkingMemory
from workbench.runtime import ModelConfig, build_models
from workbench.session.assemble import assemble
from workbench.ui.chat import ChatPane
from workbench.ui.confirm import ConfirmForget
from workbench.ui.facts import FactPanel, FactTable
from workbench.ui.replies import AgentAnswer, AgentReply
from workbench.ui.typing import PauseScheduler, TypingClock


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


class Stopwatch:
    """A typing clock that moves only when told to."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now

    def stop_typing(self) -> None:
        self.now += 10


async def send(app, pilot, agent: str, text: str) -> None:
    app.pane(agent).prompt.focus()
    await pilot.pause()
    app.post_message(events.Paste(text))
    await pilot.pause()
    await pilot.press("enter")


async def ask_support_while_typing_in_logs(app, pilot, text: str) -> None:
    """Send `text` to the support agent, type a key in the logs pane while it answers, and wait until
    the pane has its answer (stored, facts and all) and a little more, with the user still "typing"
    (the clock stands still)."""
    await send(app, pilot, "support", text)
    app.pane("logs").prompt.focus()
    await pilot.pause()
    await pilot.press("a")
    await reached(app.pane("support"), "answered", bool)
    await pilot.pause(0.3)


async def panel_shows(app, keys: list[str]) -> None:
    await reached(app.query_one(FactPanel), "view", lambda view: [f.key for f in view.memory.facts] == keys)


def panel_keys(app) -> list[str]:
    table = app.query_one(FactTable)
    return [str(table.get_row_at(i)[0]) for i in range(table.row_count)]


def pane_alone() -> PaneHost:
    """The support pane alone, on the built-in model with its words streamed slowly."""
    return PaneHost(
        assemble(build_models(ModelConfig(), scripted_delay=0.05), memory=WorkingMemory(clock=lambda: FIXED))
    )


async def answer_waits(host: PaneHost, pilot, watch: Stopwatch, text: str) -> ChatPane:
    """Send `text` from the pane alone while the user types in another pane (noted as the app notes a
    key, on the clock `watch`), and wait until it has its answer (stored), and a little more."""
    pane = host.pane
    pane.scheduler.typing.clock = watch
    pane.prompt.focus()
    pane.prompt.insert(text)
    await pilot.press("enter")
    pane.scheduler.typing.noted(Widget())  # a key typed in another pane
    await reached(pane, "answered", bool)
    await pilot.pause(0.3)
    return pane


async def test_a_finished_answer_waits_while_the_user_types_in_the_other_pane():
    app = make_app(delay=0.05)
    app.typing.clock = watch = Stopwatch()
    async with app.run_test(size=(140, 40)) as pilot:
        support, logs = app.pane("support"), app.pane("logs")
        await ask_support_while_typing_in_logs(app, pilot, "Where are the logs?")
        assert support.busy and support.query(AgentReply) and not support.query(AgentAnswer)
        assert str(support.query_one(".working", Static).render()) == ChatPane.READY
        await pilot.press("b")
        watch.stop_typing()
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert not support.busy and not support.query(AgentReply)
        assert "Where are the logs?" in support.query(AgentAnswer).last().text
        assert logs.prompt.text == "ab"  # every key reached the other pane


async def test_typing_in_the_panes_own_input_does_not_hold_its_answer_back():
    host = pane_alone()
    async with host.run_test(size=(80, 24)) as pilot:
        support = host.pane
        support.scheduler.typing.clock = Stopwatch()  # never moves: the user types on and on
        support.prompt.focus()
        support.prompt.insert("Where are the logs?")
        await pilot.press("enter")
        await pilot.press("a")  # in the support pane's own input
        support.scheduler.typing.noted(support.prompt)  # as the app notes a key where the focus is
        await reached(support, "busy", lambda busy: not busy)
        await host.workers.wait_for_complete()
        await pilot.pause()
        assert not support.busy and support.query(AgentAnswer) and support.prompt.text == "a"


async def test_a_turns_facts_reach_the_panel_in_a_pause_and_a_forget_draws_everything_at_once():
    app = make_app(delay=0.05)
    app.typing.clock = watch = Stopwatch()
    async with app.run_test(size=(140, 40)) as pilot:
        logs = app.pane("logs")
        await ask_support_while_typing_in_logs(app, pilot, "customer=Contoso; module=Billing")
        assert panel_keys(app) == []  # stored, not drawn while the user types in the other pane
        watch.stop_typing()
        await panel_shows(app, ["customer", "module"])

        await ask_support_while_typing_in_logs(app, pilot, "module=Reporting")
        assert "Reporting" not in str(app.query_one("#changes", Static).render())
        logs.prompt.clear()
        app.post_message(events.Paste("forget customer"))  # typed in the logs pane while still "typing"
        await pilot.pause()
        await pilot.press("enter")  # typed: asked as a click is
        await pushed(app, ConfirmForget)
        await answer(pilot, "y")
        await panel_shows(app, ["module"])
        assert "Contoso" not in str(app.query_one("#ledger", Static).render())
        assert "Reporting" in str(app.query_one("#ledger", Static).render()) and not app.scheduler.waiting("fact panel")


async def test_cancelling_a_turn_whose_answer_waits_shows_the_stored_answer():
    host = pane_alone()
    async with host.run_test(size=(80, 24)) as pilot:
        # The user never stops typing in the other pane.
        support = await answer_waits(host, pilot, Stopwatch(), "Where are the logs?")
        assert support.busy and not support.query(AgentAnswer)
        support.action_cancel()
        await reached(support, "busy", lambda busy: not busy)
        assert not support.busy and "Where are the logs?" in support.query(AgentAnswer).last().text
        assert not support.query(AgentReply)


async def test_a_forget_while_an_answer_waits_clears_that_turn_from_the_pane():
    """The turn was answered and stored before the forget replaced its history: neither its message
    nor its answer may appear after the forget (nor would a reply still streaming, see test_widgets)."""
    watch = Stopwatch()
    host = pane_alone()
    async with host.run_test(size=(80, 24)) as pilot:
        support = await answer_waits(host, pilot, watch, "customer=Contoso")
        assert support.busy  # answered and stored, waiting for a pause
        await host.session.forget("customer")
        await support.replace_history("History replaced by forget customer.")  # as the app does after a forget
        watch.stop_typing()
        await reached(support, "busy", lambda busy: not busy)
        await pilot.pause()
        shown = [str(w.render()) for w in support.conversation.children if not isinstance(w, AgentAnswer)]
        assert not support.query(AgentAnswer) and not support.query(AgentReply)
        assert not any("Contoso" in text for text in shown) and "History replaced by forget customer" in shown[0]
        assert host.session.state().memory.facts == ()


async def drawn_when(condition, turns: int = 400) -> None:
    for _ in range(turns):
        if condition():
            return
        await asyncio.sleep(0.01)
    raise AssertionError("not drawn")


async def test_a_key_typed_while_one_piece_is_drawn_holds_the_next_back_until_the_next_pause():
    """A turn's answer and its facts wait for the same pause. They are drawn one at a time, the next
    looked at once the frame of the first is on screen and the loop has run a moment more: a key
    typed while that frame was drawn holds the second back until the user pauses again (both were
    drawn one after the other, a key typed as they began waiting for every frame)."""
    watch = Stopwatch()
    clock, pane, other = TypingClock(watch), Widget(), Widget()
    lanes: list[asyncio.Future[None]] = []
    scheduler = PauseScheduler(clock, lambda work, lane: lanes.append(asyncio.ensure_future(work)))
    drawn: list[str] = []

    def piece(name: str):
        def draw(hurry: bool) -> None:
            drawn.append(name)
            # A key typed in another pane while this piece's frame is drawn, handled just after it.
            asyncio.get_running_loop().call_later(0.001, clock.noted, other)

        return draw

    clock.noted(other)
    scheduler.later("pane", pane, piece("answer"))
    scheduler.later("facts", pane, piece("facts"))
    watch.stop_typing()
    await drawn_when(lambda: drawn)
    await asyncio.sleep(0.3)  # the other lane looked again, and more
    assert len(drawn) == 1
    watch.stop_typing()
    await asyncio.gather(*lanes)
    assert sorted(drawn) == ["answer", "facts"]


async def test_a_piece_waiting_for_a_pause_once_more_lets_another_lane_draw():
    """A pane's answer waits once more if a key came while it was rendered; meanwhile the other
    pane's answer, which keys typed in its own input never hold back, is drawn."""
    watch = Stopwatch()
    clock, first, second = TypingClock(watch), Widget(), Widget()
    lanes: list[asyncio.Future[None]] = []
    scheduler = PauseScheduler(clock, lambda work, lane: lanes.append(asyncio.ensure_future(work)))
    drawn: list[str] = []

    async def first_answer(hurry: bool) -> None:
        clock.noted(second)  # the user types in the second pane while this answer renders
        await scheduler.pause(first)
        drawn.append("first")

    scheduler.later("first", first, first_answer)
    await asyncio.sleep(0.05)
    scheduler.later("second", second, lambda hurry: drawn.append("second"))
    await drawn_when(lambda: drawn)
    assert drawn == ["second"]
    watch.stop_typing()
    await asyncio.gather(*lanes)
    assert drawn == ["second", "first"]
