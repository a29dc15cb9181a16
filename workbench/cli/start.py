"""The one start path of the TUI and the scripts: the user's agents loaded, and the start the one builder
makes of the options (`workbench.build`: what they ask to keep or reach opened and locked, the session
built over it); `build_app` puts the window around that start."""

from __future__ import annotations

import argparse
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from workbench.build.config import StartConfig
from workbench.loading import Loaded, LoadedAgent, LoadedWorkflow, LoadFailed
from workbench.notes import LibraryLog
from workbench.runtime.config import ModelConfig

if TYPE_CHECKING:
    from workbench.session.controller import SessionController
    from workbench.ui.app import WorkbenchApp


def load(args: argparse.Namespace, given: Sequence[object] = ()) -> Loaded:
    """The user's agents and workflows: PATH's (every entry that loads, each one that does not in
    `skipped`; all or nothing with --strict), --agents', and those handed to `workbench.serve`;
    LoadFailed (one line) when nothing of PATH loads or anything else cannot be. None of them: the
    built-in agents run."""
    path, references = getattr(args, "path", None), getattr(args, "agents", None) or []
    if path is None and not references and not given:
        return Loaded()
    from pathlib import Path

    from workbench.loading import checked, from_objects, from_reference, load_folder

    folder = load_folder(Path(path), strict=getattr(args, "strict", False)) if path is not None else Loaded()
    loaded = [*folder.agents, *from_objects(given)]
    agents = checked([*loaded, *(agent for reference in references for agent in from_reference(reference))])
    checked(agents, folder.workflows)
    return Loaded(agents, folder.workflows, folder.skipped, folder.root)


def load_agents(args: argparse.Namespace, given: Sequence[object] = ()) -> tuple[LoadedAgent, ...]:
    """The user's agents (`load`'s)."""
    return load(args, given).agents


def build_app(
    args: argparse.Namespace,
    config: ModelConfig | StartConfig,
    found: Sequence[LoadedAgent] | Loaded = (),
    *,
    logged: LibraryLog | None = None,
) -> WorkbenchApp:
    """The TUI as `workbench` opens it: what the options ask it to keep or reach is opened first
    (StartFailed, one line, when it cannot be: `workbench.build.opening`), then the window, then the agent
    runtime right after its first frame, over what `found` loaded (its agents, workflows, and the
    entries not loaded, which the window says once it opens). `logged`: what the libraries log, said
    in the window while it is open."""
    from workbench.ui.app import WorkbenchApp

    start = StartConfig.of(args, config)
    if not isinstance(found, Loaded):
        found = Loaded(tuple(found))
    loaded, workflows, not_loaded = found.agents, found.workflows, found.skipped

    names = [*(item.name for item in loaded), *(flow.name for flow in workflows)]
    labels = {item.name: item.label for item in loaded if item.named_by}
    labels |= {flow.name: f"{flow.label} · workflow" for flow in workflows}
    hints = {
        flow.name: f"{flow.name}: {flow.cannot_run}"
        if flow.cannot_run
        else f"{flow.name}: your workflow as you built it: your message goes in, its agents' outputs stream out. "
        "Declare facts as key=value; every pane shares them. F1 shows help."
        for flow in workflows
    }
    return WorkbenchApp(
        start=session_start(args, start, loaded, workflows, not_loaded),
        agents=names or None,
        notices=notices(start, found),
        labels=labels,
        hints=hints,
        workflows={flow.name: [agent.name for agent in flow.agents] for flow in workflows},
        logged=logged,
    )


def notices(start: StartConfig, found: Loaded) -> dict[str, str]:
    """What the window says once it opens, by title: what loading the user's agents had to say, and where
    the model came from when a workbench.toml named it."""
    yours = "\n".join(line for line in (found.notice(), on_your_model(start.model, found)) if line)
    said = {"Your agents": yours, "workbench.toml": named_in_file(start)}
    return {title: text for title, text in said.items() if text}


def named_in_file(start: StartConfig) -> str | None:
    """Where the model came from when workbench.toml's [start] named it, not the command line: a model
    named there is a model run (and billed), so the window says which file named it."""
    if start.model_from is None:
        return None
    return f"the model {start.model.model} is named in {start.model_from}; --model on the command line comes first"


def on_your_model(config: ModelConfig, found: Loaded) -> str | None:
    """What --model does to the user's agents, in a line of the window's notice: they answer on it
    instead of their own clients, as the drift lab runs them (the header names each pane's model); a
    workflow's agents keep theirs. None without --model or agents of the user's."""
    if not config.is_live or not found.agents:
        return None
    flows = "; your workflows' agents answer on their own" if found.workflows else ""
    return (
        f"--model {config.model}: your agents answer on it instead of their own clients, as workbench drift runs "
        f"them{flows}; without --model each answers on its own (the header names what each answers on)"
    )


def session_start(
    args: argparse.Namespace,
    config: ModelConfig | StartConfig,
    loaded: Sequence[LoadedAgent] = (),
    workflows: Sequence[LoadedWorkflow] = (),
    not_loaded: Sequence[LoadFailed] = (),
) -> Callable[[], SessionController]:
    """The one start path of the TUI and the scripts (`workbench remembered`, `workbench forget`): the
    options read as the start configuration (`config`, or `workbench.build.config.StartConfig` read with
    `config` the model's),
    what they ask to keep or reach opened and locked now (StartFailed, one line, when it cannot be), and the
    function that builds the session over it (`workbench.build.builder.starting`)."""
    from workbench.build.builder import starting
    from workbench.session.controller import SessionController

    return starting(StartConfig.of(args, config), SessionController, loaded, workflows, not_loaded)
