"""The values the session composes for the UI from the runtime's state, each read in one call: what the
fact panel and the header draw (`SessionController.state`), a pane's agent (`SessionController.pane`),
what start-up completed (`SessionController.start`) and the drift lab on the session's models
(`SessionController.lab`)."""

from __future__ import annotations

from collections.abc import Awaitable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from workbench.drift import DriftReport
    from workbench.drift.lab import Progress
    from workbench.memory.forget import ForgetReport
    from workbench.runtime.calls import CallRecord
    from workbench.runtime.context import ContextSplit
    from workbench.runtime.usage import Usage
    from workbench.runtime.view import MemorySnapshot, RecalledMessage, ResumedHistory, RuntimeStatus


@dataclass(frozen=True)
class SessionState:
    """What the fact panel and the header draw, read at one moment: working memory (`memory`: its facts
    and the ledger's latest events) and the status (`status`: the models, the mode, the writer and whether
    it keeps failing, recall, the other memories, the persisted sessions, what start-up completed and the
    contract)."""

    memory: MemorySnapshot
    status: RuntimeStatus


@dataclass(frozen=True)
class PaneView:
    """One pane's agent as the session holds it now: the reported usage of every call made for it since
    start (None once any call's is unknown: a failed or cancelled call was made, or a workflow's agents'
    calls are not all recorded), why some calls are not recorded, whether its last turn, cancelled or
    stopped by an error, had its facts admitted first; what it resumed from disk at start (`--persist`;
    None once that session was replaced); and its last turn as the model saw it (F2): every call of it,
    oldest first, how its latest requests split into instructions, facts block, history and message, and
    what recall put into it."""

    agent: str
    usage: Usage | None
    unrecorded: str | None
    applied_unfinished: bool
    resumed: ResumedHistory | None
    calls: tuple[CallRecord, ...]
    splits: tuple[ContextSplit, ...]
    recalled: tuple[RecalledMessage, ...]


@dataclass(frozen=True)
class Completed:
    """The forget a crash cut short, completed at start before any turn: in words (`said`: "completed the
    forget of 'customer' cut short at ..."), and what it did."""

    said: str
    report: ForgetReport


class LabRun(Protocol):
    """The lab's run: each policy's turns go to `progress` as they run."""

    def __call__(self, *, progress: Progress | None = None) -> Awaitable[DriftReport]: ...


@dataclass(frozen=True)
class Lab:
    """The drift lab on the session's models: the model it runs its policies on (as the lab names it),
    and its run over the story it was given."""

    model: str
    run: LabRun
