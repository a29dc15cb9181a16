"""The command palette's workbench commands (Ctrl+P)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from textual.app import SystemCommand

from workbench.ui import intentions

if TYPE_CHECKING:
    from workbench.ui.app import WorkbenchApp


def workbench_commands(app: WorkbenchApp) -> Iterator[SystemCommand]:
    yield SystemCommand(
        "Forget all facts", "Remove every fact and replace both agents' histories", app.action_forget_all
    )
    if app.ready:
        other = intentions.other_mode(app.session.mode)
        yield SystemCommand(
            f"Switch to {other} mode",
            "Both agents start new, empty sessions (their histories are replaced); the facts are kept",
            lambda: app.run_worker(intentions.switch_mode(app, other)),
        )
        if app.session.writer_failing:
            yield SystemCommand(
                "Use the host parse as the writer",
                "The writer model keeps failing the contract: read declarations with the host's own parse, "
                "no model call, for this session (said in the ledger and the header)",
                lambda: intentions.use_host_parse(app),
            )
        recall_on = app.session.status.recall is not None
        yield SystemCommand(
            f"Turn recall {'off' if recall_on else 'on'}",
            "Retrieved chat-history memory (seed 004): store every message, recall similar ones; "
            "both agents start new sessions",
            lambda: app.run_worker(intentions.switch_recall(app, not recall_on)),
        )
    yield SystemCommand("What the model saw", "The last turn's calls of the focused pane", app.action_show_calls)
    yield SystemCommand(
        "What is remembered",
        "Every memory the agents run and what each holds now, live; forget any of it from there (F3)",
        app.action_remembered,
    )
    yield SystemCommand(
        "Drift lab", "Run the built-in chronology through every context policy and compare", app.action_drift
    )
    yield SystemCommand(
        "Export conversation as chronology",
        "Both panes' messages and every forget, to a file the drift lab runs; questions are probes",
        app.action_export_chronology,
    )
    yield SystemCommand(
        "Run the drift lab on this conversation",
        "Replay both panes' messages and forgets through every context policy",
        app.action_drift_on_conversation,
    )
    yield SystemCommand("Workbench help", "The contract, the commands and the keys", app.action_help)
