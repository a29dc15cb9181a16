"""`workbench remembered` and `workbench forget`: the TUI's F3 and forget for scripts, started as the TUI
starts (`workbench.cli.start`), run by `workbench.scripts`."""

from __future__ import annotations

import argparse
import asyncio
import sys
from collections.abc import Sequence

from workbench.build.config import StartConfig
from workbench.cli.output import say as said
from workbench.cli.start import session_start
from workbench.cli.stores import open_left_out, unfinished_forget
from workbench.loading import LoadedAgent, LoadedWorkflow, LoadFailed
from workbench.memory.shown import quoted


def run_script_command(
    args: argparse.Namespace,
    config: StartConfig,
    loaded: Sequence[LoadedAgent] = (),
    workflows: Sequence[LoadedWorkflow] = (),
    not_loaded: Sequence[LoadFailed] = (),
) -> int:
    """`workbench remembered` and `workbench forget` (`workbench.scripts`), started as the TUI starts
    (`session_start`). A usage error, or a question stdin cannot answer, exits 2 before anything opens;
    a start that cannot open what the options ask exits 1 with one line, as the TUI's does."""
    from workbench import scripts
    from workbench.build.opening import StartFailed

    command: str = args.command

    def say(line: str) -> None:
        said(command, line)

    key: str | None = getattr(args, "key", None)
    contract = config.contract
    if key is not None and not contract.allows(key):
        foreign = contract.foreign_characters(key)
        say(f"{quoted(key, 40)} is not a key{f': {foreign}' if foreign else ''}; the keys: {', '.join(contract.keys)}")
        return 2
    ask = None if command == "remembered" or getattr(args, "yes", False) else _asked
    if ask is not None and not sys.stdin.isatty():
        say("stdin is not a terminal, so what the forget removes cannot be asked: add --yes to forget without asking")
        return 2
    opened_too, refused = open_left_out(args, config)
    if refused is not None:
        say(refused)
        return scripts.NOTHING_DONE
    for what in opened_too:
        say(f"also opened {what}: the data directory holds it")
    if opened_too:  # the options it set on `args`, read as the start configuration
        config = StartConfig.read(args, model=config.model)
    if problem := unfinished_forget(args, config):
        say(problem)
        return scripts.NOTHING_DONE
    try:
        start = session_start(args, config, loaded, workflows, not_loaded)
    except StartFailed as exc:
        say(str(exc))
        return scripts.NOTHING_DONE
    as_json = getattr(args, "json", False)
    try:
        if command == "remembered":
            return asyncio.run(scripts.remembered(start, as_json=as_json, say=say))
        return asyncio.run(scripts.forget(start, key, ask=ask, as_json=as_json, say=say))
    except scripts.Stopped as exc:
        say(str(exc))
        return scripts.NOTHING_DONE


def forget_words(words: Sequence[str], *, everything: bool) -> tuple[str | None, str | None]:
    """`workbench forget`'s KEY and PATH from its words: KEY [PATH], or with --all PATH alone."""
    if everything:
        if len(words) > 1:
            raise ValueError("--all takes no key: forget --all [PATH]")
        return None, words[0] if words else None
    if not 1 <= len(words) <= 2:
        raise ValueError("forget takes a KEY (or --all), then optionally PATH")
    return words[0], words[1] if len(words) == 2 else None


def _asked(question: str) -> bool:
    """`question` on stderr (stdout keeps the report), answered on the terminal: yes, or anything else.
    Ctrl+C stops the command at once (`workbench.command`): asked inside `asyncio.run`, whose own handler
    only cancels its task, the read went on until Enter."""
    import signal

    asyncio_handler = signal.signal(signal.SIGINT, signal.default_int_handler)  # before the question shows
    try:
        print(f"{question}\nForget? [y/N] ", end="", file=sys.stderr, flush=True)
        return sys.stdin.readline().strip().lower() in ("y", "yes")
    finally:
        signal.signal(signal.SIGINT, asyncio_handler)
