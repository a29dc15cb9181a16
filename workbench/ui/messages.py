"""What travels up: a pane's worker posts its turn's streamed text and the one message that says
what the turn changed to the pane, which draws them and lets the turn's end bubble on to the app;
the session's listener posts memory's other settled batches to the app."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from textual.message import Message

if TYPE_CHECKING:
    from workbench.session.controller import TurnOutcome
    from workbench.session.views import MemoryUpdate, Usage


@dataclass
class Streamed(Message):
    """Posted by a pane's worker to its pane: the next piece of the answer being written."""

    text: str


@dataclass
class TurnEnded(Message):
    """Posted by a pane's worker to its pane, which draws it and lets it bubble to the app: everything
    the turn changed (reply, recall, memory's batches, a refused batch's reasons), or None when it
    was cancelled (`cancelled`) or stopped on an unexpected error, and then whether its facts had been
    admitted first (`applied`); and the pane's usage since start as the turn left it, however it
    ended (None: unknown)."""

    agent: str
    outcome: TurnOutcome | None
    cancelled: bool = False
    usage: Usage | None = None
    applied: bool = False


@dataclass
class MemoryUpdated(Message):
    """A settled batch that is not part of a turn's outcome (a forget, a note, a cancelled turn's)."""

    update: MemoryUpdate
