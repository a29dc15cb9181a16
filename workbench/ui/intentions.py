"""What the user asks of the session (forget, export, the drift lab, mode and recall switches), sent
through the SessionController, and what the app says back. The app's keys, console commands and
palette call these; none of them draws memory (that comes back as messages)."""

from __future__ import annotations

import shlex
from collections.abc import Mapping, Sequence
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING

from workbench.memory import ALLOWED_KEYS
from workbench.memory.ledger import MAX_KEY_ECHO
from workbench.memory.shown import quoted
from workbench.runtime.config import Mode
from workbench.text import clip, visible
from workbench.ui.confirm import ConfirmForget
from workbench.ui.console import Forget, ShowMemory
from workbench.ui.startup import ERROR_CHARS

if TYPE_CHECKING:
    from workbench.drift import Chronology
    from workbench.ui.chat import ChatPane
    from workbench.ui.drift_screen import DriftScreen
    from workbench.ui.export_screen import ExportRequest
    from workbench.ui.turn_flow import TurnFlow

AGENTS = ("support", "logs")
# Where "Export conversation as chronology" proposes to write, relative to the working directory.
EXPORT_PATH = "conversation.chronology.json"


async def console(app: TurnFlow, pane: ChatPane, command: ShowMemory | Forget) -> None:
    if isinstance(command, ShowMemory):
        facts = app.session.snapshot().facts
        lines = [f"mem: {len(facts)} fact(s)"] + [
            f"{f.key} = {quoted(f.value)} (turn {f.turn}) quoting {quoted(f.evidence)}" for f in facts
        ]
        await pane.notice("\n".join(lines))
    elif command.key is not None and command.key not in ALLOWED_KEYS:
        app.notify(
            f"{quoted(command.key, MAX_KEY_ECHO)} is not a key. Keys: {', '.join(sorted(ALLOWED_KEYS))}.",
            title="Nothing forgotten",
            severity="error",
            markup=False,
        )
    elif command.key is None:
        await ask_to_forget(app, None)
    else:  # asked even when no fact holds the key now: its values may be in a history or another memory
        values = [f.value for f in app.session.snapshot().facts if f.key == command.key]
        await ask_to_forget(app, [command.key], {command.key: values})


async def ask_to_forget(
    app: TurnFlow, keys: Sequence[str] | None, held: Mapping[str, Sequence[str]] | None = None
) -> None:
    """Ask before forgetting `keys` (None: everything), one question at a time; forget only on the
    answer Forget. Without `held` the keys are facts' (the fact panel's), named with their values; a
    key no longer stored then asks nothing."""
    if any(isinstance(s, ConfirmForget) for s in app.screen_stack):
        return
    facts = {f.key: f for f in app.session.snapshot().facts}
    if held is None:
        if keys is not None and not all(key in facts for key in keys):
            return
        held = {key: (facts[key].value,) for key in keys or ()}

    async def confirmed(answer: bool | None) -> None:
        if answer:
            await forget(app, keys)

    preview = await app.session.forget_preview(keys)  # the forget's own plan: the holders' texts are read
    if any(isinstance(s, ConfirmForget) for s in app.screen_stack):
        return  # another question came first meanwhile
    question = ConfirmForget(keys, held, kept=preview.kept, also=preview.also, reaches=preview.reaches)
    app.push_screen(question, callback=confirmed)


async def forget(app: TurnFlow, keys: Sequence[str] | None) -> None:
    """Forget through the one forget, key by key (memory and every registered holder), then clear both panes."""
    before = [f.key for f in app.session.snapshot().facts]
    for key in keys if keys is not None else [None]:
        await app.session.forget(key)
    after = {f.key for f in app.session.snapshot().facts}
    also = [k for k in before if k not in after and k not in (keys or ())]  # their values held a forgotten one
    what = f"forget {', '.join(keys)}" if keys else "forget (every fact)"
    for agent in AGENTS:
        await app.pane(agent).replace_history(
            f"History replaced by {what}: the {agent} agent starts a new session and no longer sees "
            "the messages that were here."
        )
    went = f" and {', '.join(also)} ({'its value' if len(also) == 1 else 'their values'} held one)" if also else ""
    app.notify(f"{'Forgot ' + ', '.join(keys) + went if keys else 'Forgot every fact'}; both histories replaced.")


def show_resumed(app: TurnFlow) -> None:
    """Each pane shows what its agent resumed from disk (`--persist`), if anything."""
    for agent in AGENTS:
        if history := app.session.resumed(agent):
            app.pane(agent).show_resumed(history)


def show_help(app: TurnFlow) -> None:
    from workbench.ui.screens import HelpScreen  # loads when first opened, not at start-up

    app.push_screen(HelpScreen(app.session.status if app.ready else None))


def show_remembered(app: TurnFlow) -> None:
    from workbench.ui import remembered_screen  # loads when first opened, not at start-up

    remembered_screen.show(app)


def open_drift_lab(app: TurnFlow) -> None:
    app.push_screen(drift_lab(app))


def show_calls(app: TurnFlow, agent: str) -> None:
    from workbench.ui.screens import CallsScreen  # loads when first opened, not at start-up

    runtime = app.session
    app.push_screen(
        CallsScreen(
            agent,
            runtime.last_turn_calls(agent),
            splits=runtime.context_by_turn(agent),
            recalled=runtime.recalled(agent),
        )
    )


def export_chronology(app: TurnFlow) -> None:
    """Ask where to save and which questions are probes; the session writes the file."""
    from workbench.ui.export_screen import ExportChronology

    if not app.session.transcript.entries:
        app.notify("Nothing to export yet: the conversation is empty.", severity="warning")
        return

    def save(request: ExportRequest | None) -> None:
        if request is not None:
            _write_chronology(app, request)

    app.push_screen(ExportChronology(app.session.transcript.questions(), EXPORT_PATH), callback=save)


def _write_chronology(app: TurnFlow, request: ExportRequest) -> None:
    from workbench.drift import ChronologyError

    try:
        exported = app.session.export(request.path, request.probes)
    except ChronologyError as exc:
        app.notify("\n".join(exc.problems), title="Not exported", severity="error", markup=False)
        return
    except FileExistsError:
        where = visible(clip(request.path, ERROR_CHARS))
        app.notify(
            f"{where} already exists and was left as it was: export again under another name.",
            title="Not exported",
            severity="error",
            markup=False,
        )
        return
    except OSError as exc:
        where = visible(clip(f"{request.path}: {exc.strerror or exc}", ERROR_CHARS))
        app.notify(where, title="Not exported", severity="error", markup=False)
        return
    where = visible(clip(shlex.quote(str(Path(request.path).absolute())), ERROR_CHARS))  # a relative name says where
    app.notify(
        f"{exported.steps} steps, {exported.probes} probe(s): workbench drift --chronology {where}",
        title="Chronology exported",
        markup=False,
    )


def drift_on_conversation(app: TurnFlow) -> None:
    from workbench.drift import ChronologyError

    try:
        chronology = app.session.chronology()
    except ChronologyError as exc:
        app.notify(
            "Ask at least one question (a message that declares nothing) to give the lab a probe. "
            + "; ".join(exc.problems),
            title="Nothing to compare yet",
            severity="warning",
            markup=False,
        )
        return
    app.push_screen(drift_lab(app, chronology))


def drift_lab(app: TurnFlow, chronology: Chronology | None = None) -> DriftScreen:
    """The lab on the session's models, replaying `chronology` (default: the built-in story)."""
    from workbench.drift import run_drift
    from workbench.ui.drift_screen import DriftScreen  # its chart library loads when the lab opens

    models = app.session.models
    return DriftScreen(partial(run_drift, models, chronology=chronology), models.agent_label)


async def switch_mode(app: TurnFlow, mode: Mode) -> None:
    if app.turns_running():
        app.notify("Wait for the running turns to finish before switching mode.", severity="warning")
        return
    app.session.set_mode(mode)
    app.show_status()
    for agent in AGENTS:
        await app.pane(agent).replace_history(
            f"Switched to {mode} mode: the {agent} agent starts a new session; the facts are kept."
        )


async def switch_recall(app: TurnFlow, on: bool) -> None:
    if app.turns_running():
        app.notify("Wait for the running turns to finish before switching recall.", severity="warning")
        return
    if not app.session.set_recall(on):
        app.notify("This session was started without recall.", severity="warning")
        return
    app.show_status()
    state = "on: both agents recall from every earlier message of yours" if on else "off"
    for agent in AGENTS:
        await app.pane(agent).replace_history(
            f"Recall {state}. The {agent} agent starts a new session; the facts are kept."
        )


def other_mode(mode: Mode) -> Mode:
    return Mode.PROVIDER if mode is Mode.MANUAL else Mode.MANUAL


def use_host_parse(app: TurnFlow) -> None:
    """The writer model keeps failing the contract: switch this session to the host's own parse."""
    if app.session.use_host_parse():
        app.show_status()
