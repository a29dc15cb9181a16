"""The main screen, styled once on the way to the first frame."""

from __future__ import annotations

from textual import events
from textual.binding import Binding
from textual.screen import Screen
from textual.timer import Timer, TimerCallback

from workbench.ui.frames import SCREEN_UPDATE, NextFrameTimer


class MainScreen(Screen[object]):
    """The screen the app composes into. It starts with its width's breakpoint class (of `breakpoints`):
    Textual sets that at the first resize, after the first styling, and a class set on a screen
    restyles every widget again. And its first resume does not restyle every widget: they were
    styled as they were mounted, just before, and nothing they are styled by has changed since.
    Later resumes (back from a modal or the drift lab) restyle as Textual decides."""

    BINDINGS = [
        # Moved as the key arrives, not once it has bubbled up from the focused widget (Screen's own
        # binding): keys typed right behind a Tab went to the input it was leaving.
        Binding("tab", "app.focus_next", show=False, priority=True),
        Binding("shift+tab", "app.focus_previous", show=False, priority=True),
    ]

    def __init__(self, width: int, breakpoints: list[tuple[int, str]]) -> None:
        size_class = next(name for least, name in reversed(breakpoints) if width >= least)
        super().__init__(id="_default", classes=size_class)  # Textual's own id for the default screen
        self._resumed = False

    def set_interval(
        self,
        interval: float,
        callback: TimerCallback | None = None,
        *,
        name: str | None = None,
        repeat: int = 0,
        pause: bool = False,
    ) -> Timer:
        """Textual's, but the screen's update timer draws at the next frame slot (`workbench.ui.frames`)."""
        timer = super().set_interval(interval, callback, name=name, repeat=repeat, pause=pause)
        if name == SCREEN_UPDATE:
            timer.__class__ = NextFrameTimer  # its task has not run yet: it runs NextFrameTimer's loop
        return timer

    def on_screen_resume(self, event: events.ScreenResume) -> None:
        # Runs before Screen's own handler (subclass handlers come first), which reads this flag.
        if not self._resumed:
            self._resumed = True
            event.refresh_styles = False
