"""How a command speaks: its report on stdout (tables, or JSON with --json), its own lines on stderr."""

from __future__ import annotations

import argparse
import sys
from typing import Any


def print_report(args: argparse.Namespace, data: dict[str, Any], renderable: Any) -> None:
    """JSON for machines with --json, else the tables."""
    if getattr(args, "json", False):
        from workbench.text import dumps

        print(dumps(data))
    else:
        from workbench.tables import report_console

        report_console().print(renderable)


def say(command: str, line: str) -> None:
    """One line on stderr; a server's or a file's words in it are shown literally and bounded."""
    from workbench.text import clip, visible

    print(f"workbench {command}: {visible(clip(line, 1000))}", file=sys.stderr)


def stopped(command: str, exc: Exception) -> None:
    say(command, f"stopped: {exc}")
