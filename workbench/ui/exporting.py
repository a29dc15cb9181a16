"""The conversation taken elsewhere: exported as a chronology (the palette), or replayed in the drift lab
(F5, the palette). Their screens and the lab's chart library load when first opened, not at start-up."""

from __future__ import annotations

import shlex
from pathlib import Path
from typing import TYPE_CHECKING

from workbench.session.views import clip, visible
from workbench.ui.startup import ERROR_CHARS

if TYPE_CHECKING:
    from textual.app import App

    from workbench.session.controller import SessionController
    from workbench.session.views import Chronology
    from workbench.ui.drift_screen import DriftScreen
    from workbench.ui.export_screen import ExportRequest

# Where "Export conversation as chronology" proposes to write, relative to the working directory.
EXPORT_PATH = "conversation.chronology.json"


def said_path(path: str) -> str:
    """Where a file went, absolute (a relative name says where), quoted for a shell and made visible."""
    return visible(clip(shlex.quote(str(Path(path).absolute())), ERROR_CHARS))


def drift_lab(session: SessionController, chronology: Chronology | None = None) -> DriftScreen:
    """The lab on the session's models, replaying `chronology` (default: the built-in story)."""
    from workbench.ui.drift_screen import DriftScreen  # its chart library loads when the lab opens

    lab = session.lab(chronology)
    return DriftScreen(lab.run, lab.model)


def open_lab_on_conversation(app: App[None], session: SessionController) -> None:
    """The lab replaying this conversation, or why it cannot yet."""
    from workbench.session.views import ChronologyError

    try:
        chronology = session.chronology()
    except ChronologyError as exc:
        app.notify(
            "Ask at least one question (a message that declares nothing) to give the lab a probe. "
            + "; ".join(exc.problems),
            title="Nothing to compare yet",
            severity="warning",
            markup=False,
        )
        return
    app.push_screen(drift_lab(session, chronology))


def ask_to_export(app: App[None], session: SessionController) -> None:
    """Ask where to save and which questions are probes; the session writes the file."""
    from workbench.ui.export_screen import ExportChronology

    if not session.transcript.entries:
        app.notify("Nothing to export yet: the conversation is empty.", severity="warning")
        return

    def save(request: ExportRequest | None) -> None:
        if request is not None:
            _write_chronology(app, session, request)

    app.push_screen(ExportChronology(session.transcript.questions(), EXPORT_PATH), callback=save)


def _write_chronology(app: App[None], session: SessionController, request: ExportRequest) -> None:
    from workbench.session.views import ChronologyError

    def failed(detail: str) -> None:
        app.notify(detail, title="Not exported", severity="error", markup=False)

    try:
        exported = session.export(request.path, request.probes)
    except ChronologyError as exc:
        return failed("\n".join(exc.problems))
    except FileExistsError:
        where = visible(clip(request.path, ERROR_CHARS))
        return failed(f"{where} already exists and was left as it was: export again under another name.")
    except OSError as exc:
        return failed(visible(clip(f"{request.path}: {exc.strerror or exc}", ERROR_CHARS)))
    app.notify(
        f"{exported.steps} steps, {exported.probes} probe(s): workbench drift --chronology {said_path(request.path)}",
        title="Chronology exported",
        markup=False,
    )
