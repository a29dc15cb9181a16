"""What the app needs before and right after its first frame: where its stylesheet is, how an error
is shown in one bounded line, the libraries' warnings said once the window is open, and the heap
settled once the runtime has loaded."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import TYPE_CHECKING

from workbench.session.views import clip, settle_heap, visible

if TYPE_CHECKING:
    from textual.app import App

    from workbench.session.views import LibraryLog

# How much of an unexpected error's text a notification shows.
ERROR_CHARS = 300

# Seconds from the start's end to `settle_the_heap`: the frame saying the agents are ready goes first.
SETTLE_AFTER_READY = 0.1


def stylesheet_dir() -> Path:
    """styles/ ships inside the package when installed; a checkout keeps it at the top level."""
    package = Path(__file__).resolve().parent.parent
    shipped = package / "styles"
    return shipped if shipped.is_dir() else package.parent / "styles"


def error_line(exc: BaseException | None) -> str:
    """An error as one bounded line of visible text."""
    return visible(clip(f"{type(exc).__name__}: {exc}", ERROR_CHARS))


def say_library_notes(app: App[None], logged: LibraryLog) -> None:
    """What the libraries log (`workbench.notes`: one line each, made visible), in notices while the window
    is open. Given through the event loop: a record may be logged on any thread."""
    loop = asyncio.get_running_loop()

    def said(line: str) -> None:
        app.notify(line, title="Logged by a library", severity="warning", timeout=15, markup=False)

    def said_soon(line: str) -> None:
        loop.call_soon_threadsafe(said, line)

    for line in logged.send_to(said_soon):
        said(line)


def settle_the_heap() -> None:
    """Load what the first turn needs (Markdown), then freeze every object start-up made.

    Start-up leaves some 140,000 long-lived objects (the OpenAI SDK's types, the framework, Textual)
    that Python's cyclic collector would otherwise walk at each full collection: 250 to 350 ms with
    the UI frozen, several times during a long streamed reply. Young collections then run less
    often, so a frame's short-lived strips and caches die young (`workbench.heap`)."""
    import workbench.ui.replies  # noqa: F401  (its import is a stall of its own at the first turn)

    settle_heap()
