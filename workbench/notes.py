"""What the libraries log, said where the workbench says things. Agent Framework warns when a user's
agent's chat client has no function-calling layer ("The provided chat client does not support
function invoking, this might limit agent capabilities."), psycopg's pool each time it cannot
reconnect; with no logging set up, Python's last-resort handler wrote each one raw to the terminal:
before the TUI's window (left in the scrollback when it closed) and between a command's own lines.
Here each is one line, once, given to whoever says things now: the TUI's notices, or a command's
stderr lines."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable

from workbench.text import clip, visible

LINE_CHARS = 300
_installed: list[LibraryLog] = []


class LibraryLog(logging.Handler):
    """Every record of WARNING and above, as `logger: first line of the message`, once per process
    (a pool retrying every second says it once), given to `say`; kept until a `say` is set. What it
    remembers of a line already said is its hash, not its text: a record may quote the user's words."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self._said: set[int] = set()
        self._waiting: list[str] = []
        self._say: Callable[[str], None] | None = None
        self._guard = threading.Lock()

    def emit(self, record: logging.LogRecord) -> None:
        try:
            line = said(record)
        except Exception:
            self.handleError(record)
            return
        with self._guard:
            if hash(line) in self._said:
                return
            self._said.add(hash(line))
            say = self._say
            if say is None:
                self._waiting.append(line)
                return
        say(line)

    def send_to(self, say: Callable[[str], None] | None) -> list[str]:
        """From now on, lines go to `say` (None: kept); returns the lines kept until now, for it to say."""
        with self._guard:
            self._say = say
            waiting, self._waiting = self._waiting, []
        return waiting


def said(record: logging.LogRecord) -> str:
    """A record as one line: its logger's name and its message's first line, made visible and bounded."""
    message = next((line.strip() for line in record.getMessage().splitlines() if line.strip()), "")
    return visible(clip(f"{record.name}: {message}", LINE_CHARS))


def library_log() -> LibraryLog:
    """The process's one LibraryLog, on the root logger from the first call: with a handler there,
    Python's last-resort handler writes nothing."""
    if not _installed:
        handler = LibraryLog()
        logging.getLogger().addHandler(handler)
        _installed.append(handler)
    return _installed[0]
