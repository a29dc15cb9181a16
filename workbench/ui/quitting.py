"""Quitting: nothing admitted is lost in silence. A save that failed is tried once more; if it fails
again, the user is asked what to do (stay, export the conversation and go, or go). SIGTERM and SIGHUP
quit as Ctrl+Q does."""

from __future__ import annotations

import asyncio
import signal
from collections.abc import Callable
from functools import partial
from typing import TYPE_CHECKING

from workbench.session.views import clip, visible
from workbench.ui.exporting import EXPORT_PATH, said_path
from workbench.ui.startup import ERROR_CHARS

if TYPE_CHECKING:
    from textual.app import App

    from workbench.session.controller import SessionController
    from workbench.ui.quit_screen import QuitAnswer

NOT_SAVED_EXIT = 1  # the exit status of a quit that left something admitted unsaved
QUIT_SIGNALS = (signal.SIGTERM, signal.SIGHUP)  # quit as Ctrl+Q does (SIGHUP: the window closed)


class Quitting:
    """The app's quit, asked by Ctrl+Q, the palette or a signal."""

    def __init__(self, app: App[None]) -> None:
        self.app = app
        self.not_saved: str | None = None
        """What the quit left unsaved, in one line, once the user chose to go without it (or nobody was left
        to ask): the command prints it and exits non-zero."""
        self.signals: list[signal.Signals] = []

    def on_signals(self, asked: Callable[[str], object]) -> None:
        """SIGTERM and SIGHUP quit as Ctrl+Q does (`asked` with the signal's name): by default they ended the
        process at once, the terminal left as the app had set it and nothing saved that a failed save had left."""
        try:
            loop = asyncio.get_running_loop()
            for handled in QUIT_SIGNALS:
                loop.add_signal_handler(handled, asked, handled.name)
                self.signals.append(handled)
        except (NotImplementedError, RuntimeError, ValueError):  # not the main thread, or no such signal here
            return

    def off_signals(self) -> None:
        loop = asyncio.get_running_loop()
        for handled in self.signals:
            loop.remove_signal_handler(handled)

    def ask(self, session: SessionController | None, signalled: str | None = None) -> None:
        """Quit once everything admitted is on disk: a save that failed is tried once more; if it fails
        again, ask what to do (stay, export the conversation and go, or go), unless the window closed
        (SIGHUP: nobody is left to answer) or a second signal came while asking."""
        from workbench.ui.quit_screen import QuitUnsaved  # loads when a quit finds something unsaved

        asked = next((s for s in self.app.screen_stack if isinstance(s, QuitUnsaved)), None)
        if asked is not None:
            if signalled is not None:
                self._leave(asked.unsaved)
            return
        unsaved = session.unsaved() if session is not None else None
        if unsaved is None:
            self.app.exit()
        elif signalled == "SIGHUP":
            self._leave(unsaved)
        else:
            assert session is not None
            why = f"{signalled} received. " if signalled else ""
            answered = partial(self._answered, session, unsaved)
            self.app.push_screen(QuitUnsaved(unsaved, EXPORT_PATH, why), callback=answered)

    def _answered(self, session: SessionController, unsaved: str, answer: QuitAnswer | None) -> None:
        if answer is None:
            return  # stays: the save is retried meanwhile
        if answer.export is None:
            return self._leave(unsaved)
        where = visible(clip(answer.export, ERROR_CHARS))
        try:
            session.export(answer.export, checked=False)
        except FileExistsError:
            detail = f"{where} already exists and was left as it was: quit again and export under another name."
        except OSError as exc:
            detail = f"{where}: {visible(clip(exc.strerror or str(exc), ERROR_CHARS))}. Nothing was exported."
        else:
            return self._leave(f"{unsaved}; the conversation was exported to {said_path(answer.export)}")
        self.app.notify(detail, title="Not exported: still running", severity="error", markup=False)

    def _leave(self, unsaved: str) -> None:
        """Quit without what is unsaved: the command says it in one line and exits non-zero."""
        self.not_saved = unsaved
        self.app.exit(return_code=NOT_SAVED_EXIT)
