"""The `workbench` command. Its first step holds Python's cyclic collector off, before any import
(`workbench.heap`): the TUI settles the heap once its runtime has loaded, the other commands release
it before they run (`workbench.cli.main`)."""

from __future__ import annotations

from workbench.heap import hold_collections


def main(argv: list[str] | None = None) -> int:
    hold_collections()
    from workbench.cli import main as run  # after the hold: these imports are start-up's first objects

    return run(argv)
