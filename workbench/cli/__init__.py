"""The `workbench` command line: `parser` reads the words, `configs` turns them into the typed
configurations, `start` opens and assembles what they ask (the TUI's and the scripts' one start path,
with `stores`), and `dispatch` runs the command: the TUI, `lab` (drift, qualify) or `scripted`
(remembered, forget). `output` is how a command speaks."""

from workbench.cli.dispatch import main

__all__ = ["main"]
