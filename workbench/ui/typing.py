"""When and where the user last typed, so drawing that can wait waits for a pause in typing.

Drawing a long finished answer lays out and repaints its pane: tens of milliseconds in which a
keystroke typed in the other pane is not echoed. The answer's text is already on screen (the streamed
tail) and stored, so the swap can wait until the user stops typing elsewhere for a moment, instead of
making their keystrokes wait. Keys typed in the pane's own composer do not hold it back: the user is
then typing the next message to that agent, and it must not stay busy.
"""

from __future__ import annotations

import asyncio
import math
import time
from collections.abc import Callable

from textual.widget import Widget


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
