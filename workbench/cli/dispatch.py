"""`workbench`'s one entry: the words parsed, the agents loaded, every configuration checked, then the
command run (the TUI when none is named)."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from functools import partial

from workbench.build.config import StartConfig
from workbench.cli.lab import run_drift_command, run_qualify_command
from workbench.cli.output import say
from workbench.cli.parser import parse
from workbench.cli.scripted import forget_words, run_script_command
from workbench.cli.start import build_app, load, named_in_file
from workbench.cli.stores import unfinished_forget
from workbench.heap import release_collections
from workbench.loading import Loaded, LoadFailed
from workbench.notes import LibraryLog, library_log
from workbench.runtime.config import ConfigError
from workbench.runtime.telemetry import TelemetryError, TelemetrySettings, start_telemetry


def main(argv: list[str] | None = None, *, agents: Sequence[object] = ()) -> int:
    """Every command; the TUI's window settles the collector `workbench.command` held, the others
    release it before they run. `agents`: the user's agents handed in from Python (`workbench.serve`).
    What the libraries log is said once per line (`workbench.notes`): a command's on stderr as its own
    lines are, the TUI's in its window (kept until it opens), anything left after it on stderr."""
    args = parse(argv)
    logged = library_log()
    logged.send_to(None if args.command is None else partial(say, args.command))
    try:
        return _main(args, agents, logged)
    finally:
        for line in logged.send_to(None):
            print(f"workbench: {line}", file=sys.stderr)


def _main(args: argparse.Namespace, agents: Sequence[object], logged: LibraryLog) -> int:
    if args.command == "forget":
        try:
            words = getattr(args, "words", [])
            args.key, args.path = forget_words(words, everything=getattr(args, "all", False))
        except ValueError as exc:
            say("forget", f"{exc} (see --help)")
            return 2
    found = _loaded(args, agents)
    if isinstance(found, int):
        return found
    config = _checked(args)
    if isinstance(config, int):
        return config
    if args.command is not None:
        release_collections()
        if line := named_in_file(config):  # the window's notice says it for the TUI
            say(args.command, line)
    if args.command == "drift":
        for flow in found.workflows:
            say("drift", f"workflow {flow.label} ({flow.source}) left out: the drift lab runs agents, not workflows")
        return run_drift_command(args, config, found.agents)
    if args.command == "qualify":
        return run_qualify_command(args, config)
    if args.command in ("remembered", "forget"):
        return run_script_command(args, config, found.agents, found.workflows, found.skipped)
    return _window(args, config, found, logged)


def _loaded(args: argparse.Namespace, agents: Sequence[object]) -> Loaded | int:
    """The user's agents and workflows (`load`), each entry that did not load said in one line; 2 when
    nothing of PATH loads or anything else cannot be."""
    try:
        found = load(args, agents)
    except LoadFailed as exc:
        for failed in exc.skipped:
            print(f"workbench: not loaded: {failed}", file=sys.stderr)
        print(f"workbench: {exc}", file=sys.stderr)
        return 2
    for failed in found.skipped:  # the folder's other entries load: each one that did not, in one line
        print(f"workbench: not loaded: {failed}", file=sys.stderr)
    return found


def _checked(args: argparse.Namespace) -> StartConfig | int:
    """The start configuration, read and checked here so a bad one stops every command before it runs (2,
    with its one line: `StartConfig.read`), and traces started."""
    from workbench.contract_file import ContractFileError

    try:
        start = StartConfig.read(args)
        traces = TelemetrySettings.from_options(otel=args.otel, sensitive=args.otel_sensitive, environ=os.environ)
        start_telemetry(traces)
    except (ContractFileError, ConfigError, TelemetryError) as exc:
        print(f"workbench: {exc}", file=sys.stderr)
        return 2
    return start


def _window(args: argparse.Namespace, config: StartConfig, found: Loaded, logged: LibraryLog) -> int:
    """The TUI, once what it opens is opened (1 with one line when it cannot be, before any window)."""
    from workbench.build.opening import StartFailed

    if problem := unfinished_forget(args, config):
        print(f"workbench: {problem}", file=sys.stderr)
        return 1
    try:
        app = build_app(args, config, found, logged=logged)
    except StartFailed as exc:
        print(f"workbench: {exc}", file=sys.stderr)
        return 1
    app.run()
    if app.not_saved is not None:  # the user chose to quit without it, or the window closed
        from contextlib import suppress

        with suppress(OSError):  # the terminal went with the window
            print(f"workbench: NOT saved: {app.not_saved}", file=sys.stderr)
    # Textual's code after an error that ended the app (or a quit that left something unsaved); 1 too
    # when the agents never started.
    return app.return_code or int(app.start_failed)
