"""The screen draws a change at the next frame slot, also right after a frame that followed a pause:
Textual's timer then waited a slot more, and a key typed just after the streaming reply's redraw was
drawn up to 33 ms later. The timer's clock is a fake one here: it moves only when the timer sleeps or
the test moves it."""

import asyncio

from textual._context import active_app
from textual.app import App

from tests.ui.helpers import make_app
from workbench.ui import frames
from workbench.ui.frames import NextFrameTimer, slots_passed

FRAME = 1 / 60


class FakeClock:
    def __init__(self) -> None:
        self.now = 100.0

    def get_time(self) -> float:
        return self.now

    async def sleep(self, seconds: float) -> None:
        self.now += max(seconds, 0.0)
        await asyncio.sleep(0)


async def settled(condition, turns: int = 1000) -> None:
    for _ in range(turns):
        if condition():
            return
        await asyncio.sleep(0)
    raise AssertionError("the timer did not fire")


def test_the_next_slot_is_the_first_after_now():
    for now in (0.0, 0.001, FRAME, 1.0, 1.0051, 37.4999):
        slot = (slots_passed(0.0, now, FRAME) + 1) * FRAME
        assert now < slot <= now + FRAME


async def test_a_change_right_after_a_frame_that_followed_a_pause_is_drawn_at_the_next_slot(monkeypatch):
    clock = FakeClock()
    monkeypatch.setattr(frames, "get_time", clock.get_time)
    monkeypatch.setattr(frames, "sleep", clock.sleep)
    app: App[None] = App()
    active_app.set(app)
    drawn: list[float] = []

    def draw() -> None:  # as the screen's update does: draw, then pause until something changes
        drawn.append(clock.now)
        timer.pause()

    timer = NextFrameTimer(app, FRAME, name=frames.SCREEN_UPDATE, callback=draw, pause=True)
    timer._start()
    try:
        timer.resume()
        await settled(lambda: len(drawn) == 1)
        clock.now += 1.005  # nothing to draw for a second
        changed = clock.now
        timer.resume()
        await settled(lambda: len(drawn) == 2)
        assert drawn[1] == changed  # drawn at once
        timer.resume()  # a key typed right after that frame
        await settled(lambda: len(drawn) == 3)
        assert drawn[2] - drawn[1] <= FRAME  # Textual's timer: between one and two slots later
    finally:
        timer.stop()


async def test_the_main_screen_draws_on_the_next_slot_timer():
    app = make_app()
    async with app.run_test() as pilot:
        await pilot.pause()
        assert isinstance(app.screen._update_timer, NextFrameTimer)
