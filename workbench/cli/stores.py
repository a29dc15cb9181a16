"""What a start reaches beyond the process, from its options: the stores a forget's journal records,
those the data directory holds that the options leave out, and a forget a crash cut short that this
start must complete (`workbench.persist.journal`)."""

from __future__ import annotations

import argparse

from workbench.agentmem.config import AGENT_MEMORIES, MEM0
from workbench.build.config import StartConfig
from workbench.runtime.config import ModelConfig


def stores_on_disk(args: argparse.Namespace, config: ModelConfig | StartConfig) -> tuple[str, ...]:
    """The stores a forget of this start reaches beyond the process (`StartConfig.stores_on_disk`)."""
    return StartConfig.of(args, config).stores_on_disk()


def stores_left_out(args: argparse.Namespace, config: ModelConfig | StartConfig) -> list[tuple[str, str]]:
    """What the data directory holds that these options would not open, each as (what and where it is,
    the options that open it): the persisted state (`--persist`) and each agent memory's folder
    (`--agent-memory KIND`). The recall file is reached with recall off too, and a pending forget's
    record is checked by `unfinished_forget`."""
    from pathlib import Path

    from workbench.agentmem.config import default_directory
    from workbench.build.opening import LOCK_FILE, OTHERS_LOCK_FILE
    from workbench.files import data_dir

    def holds_files(folder: Path) -> bool:
        ignored = (LOCK_FILE, OTHERS_LOCK_FILE)
        return folder.is_dir() and any(p.is_file() and p.name not in ignored for p in folder.rglob("*"))

    left: list[tuple[str, str]] = []
    from workbench.persist.sessions import DIRECTORY

    sessions = data_dir() / DIRECTORY
    if not args.persist and holds_files(sessions):
        left.append((f"saved state ({sessions})", "--persist"))
    chosen = StartConfig.of(args, config).agent_memory.folder
    for kind in AGENT_MEMORIES:
        folder = default_directory() / kind
        if (chosen is None or chosen != folder.resolve()) and holds_files(folder):
            left.append((f"{kind} agent memory ({folder})", f"--agent-memory {kind}"))
    return left


def open_left_out(args: argparse.Namespace, config: ModelConfig | StartConfig) -> tuple[list[str], str | None]:
    """A script reaches every store the data directory holds, whatever options it was given: each one
    these options leave out is opened as its own option would open it (the options are set on `args`),
    and said; or, when it cannot be (Mem0 needs its models; one agent memory runs at a time), the one
    line refusing the start, naming the options it needs. Returns what was opened too, and the refusal."""
    opened: list[str] = []
    chosen = StartConfig.of(args, config).agent_memory.kind  # --agent-memory's, or workbench.toml's
    for what, options in stores_left_out(args, config):
        kind = options.removeprefix("--agent-memory ")
        if options == "--persist":
            args.persist = True
        elif kind != options and kind != MEM0 and chosen is None:
            args.agent_memory = chosen = kind
        else:
            runs = chosen
            given = f" (one agent memory at a time: --agent-memory {runs} runs)" if runs else ""
            need = f"{options} --model ... --embedding-model ..." if kind == MEM0 else options
            return opened, (
                f"the data directory holds {what}, which this start cannot open{given}: run again with {need} to "
                "reach it (nothing was done)"
            )
        opened.append(f"{what}, as {options} does")
    return opened, None


def unfinished_forget(args: argparse.Namespace, config: ModelConfig | StartConfig) -> str | None:
    """Why this start cannot go on because of a forget a crash cut short, in one line: its record
    cannot be read, or this start does not open every store it was to reach. None when the start can go
    on (the runtime completes a pending forget before anything else)."""
    from workbench.files import data_dir
    from workbench.persist.journal import FILE_NAME, SavedFileError, read_pending
    from workbench.text import visible

    try:
        pending = read_pending(data_dir() / FILE_NAME)
    except SavedFileError as exc:
        return visible(str(exc))
    if pending is None or not (missing := pending.missing(stores_on_disk(args, config))):
        return None
    return visible(
        f"a forget of {pending.what} asked at {pending.asked_at:%Y-%m-%d %H:%M} UTC was cut short; start with "
        f"the options it ran with to complete it: {' '.join(pending.stores)} (missing now: {' '.join(missing)})"
    )
