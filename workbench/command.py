"""The `workbench` command. Its first step holds Python's cyclic collector off, before any import
(`workbench.heap`): the TUI settles the heap once its runtime has loaded, the other commands release
it before they run (`workbench.cli.dispatch.main`), and it runs again however the command ends. Output piped
into a reader that stops early (`| head`) ends the command quietly, as it ends a Unix tool; so does
Ctrl+C, anywhere: one line, and the status a shell gives a command SIGINT stopped."""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence

from workbench.heap import hold_collections, release_collections

# 128 + SIGPIPE: the status a shell reports for a tool a closed pipe stopped (`yes | head`).
READER_GONE = 141
# 128 + SIGINT: Ctrl+C.
INTERRUPTED = 130


def main(argv: list[str] | None = None, *, agents: Sequence[object] = ()) -> int:
    """`agents`: the user's agents handed in from Python (`workbench.serve`)."""
    hold_collections()
    try:
        from workbench.cli import main as run  # after the hold: these imports are start-up's first objects

        return run(argv, agents=agents)
    except KeyboardInterrupt:  # not a traceback of whatever was importing, asking or running
        after_echo = "\n" if sys.stderr.isatty() else ""  # the terminal's ^C ends no line
        print(f"{after_echo}workbench: interrupted (Ctrl+C)", file=sys.stderr, flush=True)
        return INTERRUPTED
    except BrokenPipeError:
        # Python flushes stdout once more at exit, which would fail and print again: /dev/null takes it.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return READER_GONE
    finally:
        # However the command ended (the window closed before the heap was settled, a start that
        # failed): a program that called `workbench.serve` goes on with its collector running.
        release_collections()
