"""An answer's stream shares the event loop with everything else the program does."""

import asyncio
from itertools import pairwise

from tests.runtime.helpers import live
from tests.support.openai_server import Canned
from workbench.runtime import turns


async def test_a_stream_already_received_still_lets_the_rest_of_the_program_run_between_pieces(loopback, monkeypatch):
    """A fast server's long answer arrives before the agent reads it: each piece is then read from
    the buffer without waiting on the socket. Read in one go, it held the event loop for up to a
    second, and keys typed in the other pane waited. With no time to a slice, the loop gets a turn
    after every piece."""
    monkeypatch.setattr(turns, "STREAM_SLICE_SECONDS", 0)
    runtime = live(loopback.base_url)
    loopback.enqueue(Canned(text="word " * 4000))
    ticks = 0

    async def tick() -> None:
        nonlocal ticks
        while True:
            ticks += 1
            await asyncio.sleep(0)

    seen: list[int] = []
    ticker = asyncio.create_task(tick())
    try:
        result = await runtime.ask("support", "hello", on_text=lambda _text: seen.append(ticks))
    finally:
        ticker.cancel()
    assert result.ok and len(seen) > 1000
    assert all(later > earlier for earlier, later in pairwise(seen))
