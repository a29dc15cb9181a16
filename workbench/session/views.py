"""What the UI draws, in one place: the value types the session hands it (views of the runtime's state,
records of its calls, the memory's events and contract, the drift lab's report) and the words that say
them (usage, sizes, the changes' names, the lab's report and chart, text shown literally). The UI
imports these from here, and asks the session for the rest; the import-linter contract
`ui-through-the-session` (pyproject.toml) holds it to that.

Each name loads its module on first use, as the runtime's and the memory's packages do: the TUI's first
frame takes only the light ones (the call records, the context split, the chronology and the lab bring
the framework, pydantic or the chart library, and the UI imports them inside the functions that need
them)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from workbench.lazy import lazy_exports

if TYPE_CHECKING:
    from workbench.chronology import Chronology, ChronologyError
    from workbench.drift import DriftReport
    from workbench.drift.chart import legend, plot_sizes
    from workbench.drift.lab import Progress
    from workbench.drift.report import render, stop_line
    from workbench.memory.contract import MAX_MESSAGE_CHARS, MAX_VALUE_CHARS, Contract
    from workbench.memory.forget import PlanChanged
    from workbench.memory.ledger import MAX_KEY_ECHO, EventKind, MemoryEvent
    from workbench.memory.shown import quoted, visible_controls
    from workbench.notes import LibraryLog
    from workbench.runtime.calls import CallRecord
    from workbench.runtime.config import Mode
    from workbench.runtime.context import ContextSplit
    from workbench.runtime.forget_preview import ForgetPreview
    from workbench.runtime.remembered import HeldItem, Remembered, RememberedSystem, describe_size
    from workbench.runtime.usage import UNKNOWN, Usage, describe_usage, estimate_tokens
    from workbench.runtime.view import (
        NOT_SAVED,
        SAVED_AGAIN,
        WRITER_FAILING,
        WRITER_SWITCHED,
        MemorySnapshot,
        MemoryUpdate,
        RecalledMessage,
        ResumedHistory,
        RuntimeStatus,
        joined,
    )
    from workbench.session.pane import Completed, PaneView, SessionState
    from workbench.tables import literal
    from workbench.text import clip, visible

_EXPORTS = {
    # The conversation as a chronology (export, the lab on this conversation), and why it is not one yet.
    "Chronology": "workbench.chronology",
    "ChronologyError": "workbench.chronology",
    # The drift lab's report (`SessionController.lab` runs it), its progress, chart, legend and words.
    "DriftReport": "workbench.drift",
    "Progress": "workbench.drift.lab",
    "legend": "workbench.drift.chart",
    "plot_sizes": "workbench.drift.chart",
    "render": "workbench.drift.report",
    "stop_line": "workbench.drift.report",
    # A forget: its preview (holding the one plan the answer Forget applies), and why a confirmed plan is
    # asked again. A pane's agent, and what start-up completed, as the session composes them.
    "ForgetPreview": "workbench.runtime.forget_preview",
    "PlanChanged": "workbench.memory.forget",
    "PaneView": "workbench.session.pane",
    "Completed": "workbench.session.pane",
    "SessionState": "workbench.session.pane",
    # The memory: its contract, its events, and a value or key shown quoted, its controls visible.
    "Contract": "workbench.memory.contract",
    "MAX_MESSAGE_CHARS": "workbench.memory.contract",
    "MAX_VALUE_CHARS": "workbench.memory.contract",
    "EventKind": "workbench.memory.ledger",
    "MAX_KEY_ECHO": "workbench.memory.ledger",
    "MemoryEvent": "workbench.memory.ledger",
    "quoted": "workbench.memory.shown",
    "visible_controls": "workbench.memory.shown",
    # The libraries' notes, said once the window is open.
    "LibraryLog": "workbench.notes",
    # The runtime's state and records, and the words for them.
    "CallRecord": "workbench.runtime.calls",
    "Mode": "workbench.runtime.config",
    "ContextSplit": "workbench.runtime.context",
    "HeldItem": "workbench.runtime.remembered",
    "Remembered": "workbench.runtime.remembered",
    "RememberedSystem": "workbench.runtime.remembered",
    "describe_size": "workbench.runtime.remembered",
    "UNKNOWN": "workbench.runtime.usage",
    "Usage": "workbench.runtime.usage",
    "describe_usage": "workbench.runtime.usage",
    "estimate_tokens": "workbench.runtime.usage",
    "NOT_SAVED": "workbench.runtime.view",
    "SAVED_AGAIN": "workbench.runtime.view",
    "WRITER_FAILING": "workbench.runtime.view",
    "WRITER_SWITCHED": "workbench.runtime.view",
    "MemorySnapshot": "workbench.runtime.view",
    "MemoryUpdate": "workbench.runtime.view",
    "RecalledMessage": "workbench.runtime.view",
    "ResumedHistory": "workbench.runtime.view",
    "RuntimeStatus": "workbench.runtime.view",
    "joined": "workbench.runtime.view",
    # Text shown literally: never read as markup, its controls made visible, cut to a length.
    "literal": "workbench.tables",
    "clip": "workbench.text",
    "visible": "workbench.text",
}
__all__ = [
    "MAX_KEY_ECHO",
    "MAX_MESSAGE_CHARS",
    "MAX_VALUE_CHARS",
    "NOT_SAVED",
    "SAVED_AGAIN",
    "UNKNOWN",
    "WRITER_FAILING",
    "WRITER_SWITCHED",
    "CallRecord",
    "Chronology",
    "ChronologyError",
    "Completed",
    "ContextSplit",
    "Contract",
    "DriftReport",
    "EventKind",
    "ForgetPreview",
    "HeldItem",
    "LibraryLog",
    "MemoryEvent",
    "MemorySnapshot",
    "MemoryUpdate",
    "Mode",
    "PaneView",
    "PlanChanged",
    "Progress",
    "RecalledMessage",
    "Remembered",
    "RememberedSystem",
    "ResumedHistory",
    "RuntimeStatus",
    "SessionState",
    "Usage",
    "clip",
    "describe_size",
    "describe_usage",
    "estimate_tokens",
    "joined",
    "legend",
    "literal",
    "plot_sizes",
    "quoted",
    "render",
    "settle_heap",
    "stop_line",
    "visible",
    "visible_controls",
]


def settle_heap() -> None:
    """Once the TUI has loaded everything: collect start-up's garbage and freeze what it keeps
    (`workbench.heap.settle`)."""
    from workbench import heap

    heap.settle()


__getattr__ = lazy_exports(__name__, _EXPORTS, globals())
