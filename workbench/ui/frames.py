"""When the screen draws its next frame.

Textual draws a screen's changes on a timer ("screen_update", at most 60 frames a second), paused
while nothing changes. When such a timer has fallen behind its schedule (it was paused: nothing to
draw), Textual's Timer skips to the slot after the next one: the frame after a frame drawn following
a pause came 17 to 33 ms later, not at most 17. While the other pane streams, its reply is redrawn
ten times a second, each such a frame, so a key typed just after one waited up to 33 ms for the next
frame with the event loop idle: echo's worst was 36 to 45 ms (bench/tui_streaming.py), one frame
drawing 3 ms. `NextFrameTimer` wakes at the next slot instead.
"""

from __future__ import annotations

from textual._time import get_time, sleep
from textual.timer import EventTargetGone, Timer

SCREEN_UPDATE = "screen_update"  # the name Textual gives a screen's update timer


def slots_passed(start: float, now: float, interval: float) -> int:
    """How many slots of `interval` from `start` have begun by `now`: the next slot is that number
    plus one, the first one after `now` (Textual's Timer counted one more, and so waited a slot more)."""
    return max(int((now - start) / interval), 0)


class NextFrameTimer(Timer):
    """A repeating timer that, behind its schedule, fires at the next slot: Textual's Timer with only
    the count it skips to changed (`slots_passed`)."""

    async def _run(self) -> None:
        count = 0
        repeat = self._repeat
        interval = self._interval
        await self._active.wait()
        start = get_time()
        while repeat is None or count <= repeat:
            next_timer = start + ((count + 1) * interval)
            now = get_time()
            if self._skip and next_timer < now:
                count = slots_passed(start, now, interval)
                continue
            await sleep(max(0.0, next_timer - get_time()))
            count += 1
            await self._active.wait()
            if self._reset:
                start = get_time()
                count = 0
                self._reset = False
                continue
            try:
                await self._tick(next_timer=next_timer, count=count)
            except EventTargetGone:
                break
