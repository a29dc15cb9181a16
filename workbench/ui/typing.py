"""When and where the user last typed, and the one scheduler of drawing that waits for a pause in it.

Drawing a long finished answer lays out and repaints its pane, and redrawing the fact panel lays the
screen out: tens of milliseconds in which a keystroke typed in the other pane is not echoed. The
answer's text is already on screen (the streamed tail) and stored, so such drawing waits until the
user stops typing elsewhere for a moment, instead of making their keystrokes wait. Keys typed in the
widget the drawing belongs to do not hold it back: the user is then typing the next message to that
agent, and it must not stay busy.
"""

from __future__ import annotations

import asyncio
import contextlib
import math
import time
from collections import deque
from collections.abc import Awaitable, Callable, Coroutine
from typing import TYPE_CHECKING, Any

from textual.widget import Widget

if TYPE_CHECKING:
    from textual.app import App

# One piece of drawing. Called with hurry=True when it must be drawn at once, without waiting or
# rendering ahead (its lane was cancelled, or a forget needs everything before it on screen).
Draw = Callable[[bool], Awaitable[None] | None]
# Runs a lane's loop as a worker of the app, in the lane's worker group (the app owns the workers).
RunLane = Callable[[Coroutine[Any, Any, None], str], object]
# Returns once what was just drawn is on screen (the app: after its next refresh).
Drawn = Callable[[], Awaitable[None]]


async def _next_turn_of_the_loop() -> None:
    await asyncio.sleep(0)


class TypingClock:
    PAUSE = 0.25  # seconds without a key that count as a pause

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self.clock = clock
        self._at = -math.inf
        self._where: Widget | None = None

    def noted(self, where: Widget | None) -> None:
        """A key (or a paste) arrived while `where` had focus."""
        self._at = self.clock()
        self._where = where

    def typing_elsewhere(self, here: Widget) -> bool:
        return self._where is not here and self.clock() - self._at < self.PAUSE

    async def pause(self, here: Widget) -> None:
        """Return once no key has been typed outside `here` for PAUSE seconds (at once if none was).
        After a wait the loop is let run once before the last look: keys that arrived while it was
        busy are noted only when handled, and they are not a pause."""
        while self.typing_elsewhere(here):
            await asyncio.sleep(min(max(self._at + self.PAUSE - self.clock(), 0.01), self.PAUSE))
            if not self.typing_elsewhere(here):
                await asyncio.sleep(0)


class PauseScheduler:
    """Decides what waits for a pause in typing: drawing queued in lanes (a pane's answer, the fact
    panel's views), each lane drawn in order, each piece once nobody types outside its widget.

    One piece is drawn at a time, across lanes, and the next is looked at only once that one is on
    screen (`drawn`) and the loop has run a moment more: a key typed while it was drawn then holds the
    rest back until the next pause. (When a turn ended, its answer and its facts were drawn in the
    same pause, one frame after another, each a layout of tens of milliseconds: a key typed as they
    began waited for all of them.)"""

    SETTLE = 0.01  # seconds the loop runs after a piece is on screen, for keys typed meanwhile to be handled

    def __init__(self, typing: TypingClock, run: RunLane, drawn: Drawn = _next_turn_of_the_loop) -> None:
        self.typing = typing
        self._run = run
        self._drawn = drawn
        self._lanes: dict[str, deque[tuple[Widget, Draw]]] = {}
        self._running: set[str] = set()
        self._holder: asyncio.Task[Any] | None = None  # the lane drawing a piece: one at a time, across lanes
        self._free = asyncio.Event()  # set while no lane draws
        self._free.set()

    @classmethod
    def of_app(cls, typing: TypingClock, app: App[Any]) -> PauseScheduler:
        """Its lanes run as `app`'s workers (their failures end in the app's Worker.StateChanged handler);
        a piece is on screen once the app was refreshed (at most half a second: a screen that is not
        refreshed, the app closing, holds nothing back)."""

        def run(work: Coroutine[Any, Any, None], lane: str) -> None:
            app.run_worker(work, name=lane, group=lane, exit_on_error=False)

        async def drawn() -> None:
            shown = asyncio.Event()
            app.call_after_refresh(shown.set)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(shown.wait(), 0.5)

        return cls(typing, run, drawn)

    def later(self, lane: str, here: Widget, draw: Draw) -> None:
        """Draw in a pause in typing outside `here`, after what the lane already holds."""
        self._lanes.setdefault(lane, deque()).append((here, draw))
        if lane not in self._running:
            self._running.add(lane)
            self._run(self._drain(lane), lane)

    def waiting(self, lane: str) -> bool:
        """Whether the lane holds drawing not done yet."""
        return bool(self._lanes.get(lane))

    async def pause(self, here: Widget) -> None:
        """Wait for a pause in typing outside `here` (for drawing that must wait once more). A piece
        that waits so lets other lanes draw meanwhile."""
        if self._holder is None or self._holder is not asyncio.current_task():
            await self.typing.pause(here)
            return
        self._give()
        try:
            await self.typing.pause(here)
        finally:
            await self._take()

    async def now(self, lane: str) -> None:
        """Draw what the lane holds at once, in order (a forget is drawn after every view before it)."""
        queue = self._lanes.get(lane, deque())
        while queue:
            here, draw = queue.popleft()
            if here.is_attached:  # else the app is closing: nothing left to draw on
                await _done(draw(True))

    async def _take(self) -> None:
        """Wait until no other lane draws, then draw."""
        while self._holder is not None:
            await self._free.wait()
        self._holder = asyncio.current_task()
        self._free.clear()

    def _give(self) -> None:
        if self._holder is asyncio.current_task():
            self._holder = None
            self._free.set()

    async def _drain(self, lane: str) -> None:
        queue = self._lanes[lane]
        try:
            while queue:
                here, draw = queue[0]
                await self.typing.pause(here)
                await self._take()
                try:
                    if self.typing.typing_elsewhere(here):
                        continue  # a key came while another lane's piece was drawn: wait for the next pause
                    if queue and queue[0][1] is draw:  # else `now` drew it meanwhile
                        queue.popleft()
                        await _done(draw(False))
                        await self._drawn()
                        await asyncio.sleep(self.SETTLE)
                finally:
                    self._give()
        except asyncio.CancelledError:  # the lane was cancelled (Esc): what it held is drawn at once
            await self.now(lane)
            raise
        finally:
            self._running.discard(lane)


async def _done(drawn: Awaitable[None] | None) -> None:
    if drawn is not None:
        await drawn
