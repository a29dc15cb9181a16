"""Rich text and tables as the reports (drift, qualify) and the TUI show them."""

from __future__ import annotations

from rich.console import Console
from rich.table import Table
from rich.text import Text

from workbench.text import clip, visible

# What a table cell or a JSON field shows at most of one text a model or a user wrote.
MAX_SHOWN_CHARS = 4000
# The width reports are laid out for when stdout is not a terminal: wide enough that no table row
# is wrapped, so a file or a pipe gets each number whole on its line.
UNWRAPPED_WIDTH = 100_000


def report_console() -> Console:
    """Where reports are printed: the terminal's width on a terminal; piped, lines as long as they are."""
    console = Console()
    if not console.is_terminal:
        console = Console(width=UNWRAPPED_WIDTH)
    return console


def literal(text: str, style: str = "", *, limit: int | None = None) -> Text:
    """A Rich Text that shows `[bold]`, `:emoji:` codes and escape sequences as the characters
    they are, cut at `limit` characters with a marker that gives the original length."""
    return Text(visible(clip(text, limit) if limit is not None else text), style=style)


def titled_table(title: str, columns: tuple[str, ...]) -> Table:
    """A left-titled table whose cells fold instead of cropping. The title is literal text: it may
    quote a user's question, so no markup in it is interpreted."""
    table = Table(title=literal(title, limit=MAX_SHOWN_CHARS), title_justify="left")
    for column in columns:
        table.add_column(column, overflow="fold")
    return table
