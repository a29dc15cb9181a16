"""The one start path of the TUI and the scripts: the user's agents loaded, what the options ask to keep
or reach opened and locked (`workbench.opening`), and the session assembled over it
(`workbench.session.assemble`); `build_app` puts the window around that start."""

from __future__ import annotations

import argparse
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from workbench.cli.configs import agent_memory_config, contract_config, recall_config, redis_persist
from workbench.cli.stores import forget_journal
from workbench.loading import Loaded, LoadedAgent, LoadedWorkflow, LoadFailed
from workbench.notes import LibraryLog
from workbench.runtime.config import Mode, ModelConfig, WriterKind

if TYPE_CHECKING:
    from workbench.memory.contract import Contract
    from workbench.persist.redis_histories import RedisHistories
    from workbench.persist.sessions import PersistedSessions
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
    config: ModelConfig,
    found: Sequence[LoadedAgent] | Loaded = (),
    *,
    logged: LibraryLog | None = None,
) -> WorkbenchApp:
    """The TUI as `workbench` opens it: what the options ask it to keep or reach is opened first
    (StartFailed, one line, when it cannot be: `workbench.opening`), then the window, then the agent
    runtime right after its first frame, over what `found` loaded (its agents, workflows, and the
    entries not loaded, which the window says once it opens). `logged`: what the libraries log, said
    in the window while it is open."""
    from workbench.ui.app import WorkbenchApp

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
        start=session_start(args, config, loaded, workflows, not_loaded),
        agents=names or None,
        notice="\n".join(line for line in (found.notice(), on_your_model(config, found)) if line) or None,
        labels=labels,
        hints=hints,
        workflows={flow.name: [agent.name for agent in flow.agents] for flow in workflows},
        logged=logged,
    )


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
    config: ModelConfig,
    loaded: Sequence[LoadedAgent] = (),
    workflows: Sequence[LoadedWorkflow] = (),
    not_loaded: Sequence[LoadFailed] = (),
) -> Callable[[], SessionController]:
    """The one start path of the TUI and the scripts (`workbench remembered`, `workbench forget`): what
    the options ask to keep or reach, opened and locked now (StartFailed, one line, when it cannot be),
    and the function that assembles the session over it (`workbench.session.assemble`), over the user's
    agents when `loaded` holds any."""
    from workbench.opening import open_for_start

    contract = contract_config(args)
    recall = recall_config(args, config)
    agent_memory = agent_memory_config(args, config)
    opened = open_for_start(
        persisted=(lambda: open_persisted(contract)) if args.persist else None,
        agent_memory=agent_memory,
        recall=recall,
        redis=redis_persist(args),
        agents=[item.agent for item in (*loaded, *(a for flow in workflows for a in flow.agents))],
    )

    def start() -> SessionController:
        from workbench.memory import WorkingMemory
        from workbench.runtime import CallLog, build_models
        from workbench.session.assemble import assemble

        built = agent_memory.build()
        calls = CallLog()  # recall's embeddings requests are logged beside the model calls
        session = assemble(
            # Your agents on --model bring their tools (memory files, their own): the model calls them.
            build_models(
                config,
                function_calls=recall.on_demand or (config.is_live and (agent_memory.calls_functions or bool(loaded))),
            ),
            memory=None if opened.persisted is not None else WorkingMemory(contract),
            mode=mode(args, [*loaded, *workflows]),
            writer=writer(args, config, [*loaded, *workflows]),
            timeout=config.timeout,
            calls=calls,
            recall=recall.memory(calls, store=opened.recall_store),
            recall_on=recall.enabled,
            memories=[built] if built is not None else [],
            persisted=opened.persisted,
            journal=forget_journal(args, config),
            agents=[item.agent for item in loaded],
            workflows=[(flow.name, flow.workflow, flow.cannot_run) for flow in workflows],
            not_loaded=[(failed.where, failed.problem) for failed in not_loaded],
            redis=redis_histories(args, opened.persisted),
        )
        session.on_close(opened.close)  # the state file written whole, the folders let go
        return session

    return start


def mode(args: argparse.Namespace, loaded: Sequence[LoadedAgent | LoadedWorkflow]) -> Mode:
    """--mode, else a context provider for the user's agents and manual injection for the built-in ones."""
    chosen = getattr(args, "mode", None)
    return Mode(chosen) if chosen else Mode.PROVIDER if loaded else Mode.MANUAL


def writer(args: argparse.Namespace, config: ModelConfig, loaded: Sequence[LoadedAgent | LoadedWorkflow]) -> WriterKind:
    """--writer, else the writer model; for the user's agents, the host's parse unless --writer-model
    names a model (their model is theirs: the workbench does not send it its writer's prompts)."""
    if chosen := getattr(args, "writer", None):
        return WriterKind(chosen)
    return WriterKind.HOST if loaded and not config.writer_model else WriterKind.MODEL


def open_persisted(contract: Contract) -> PersistedSessions:
    """The persisted sessions in the user's data directory, under `contract`; SavedFileError when a file
    there cannot be read or was saved under a contract this one does not widen, InUse when another
    workbench holds them, OSError when the folder cannot be opened (start-up stops with the reason in one
    line and the files are left as they are)."""
    from workbench.files import data_dir
    from workbench.persist.sessions import DIRECTORY, PersistedSessions

    return PersistedSessions(data_dir() / DIRECTORY, contract=contract)


def redis_histories(args: argparse.Namespace, persisted: PersistedSessions | None) -> RedisHistories | None:
    """The agents' histories on the server `--persist redis://…` names (checked reachable at opening)."""
    if (url := redis_persist(args)) is None or persisted is None:
        return None
    from workbench.persist.redis_histories import RedisHistories

    return RedisHistories(persisted, url)
