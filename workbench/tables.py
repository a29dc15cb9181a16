"""Rich tables as the reports (drift, qualify) print them."""

from __future__ import annotations

from rich.table import Table
from rich.text import Text

from workbench.memory.shown import visible


def titled_table(title: str, columns: tuple[str, ...]) -> Table:
    """A left-titled table whose cells fold instead of cropping. The title is literal text: it may
    quote a user's question, so no markup in it is interpreted and no escape sequence reaches the
    terminal."""
    table = Table(title=Text(visible(title)), title_justify="left")
    for column in columns:
        table.add_column(column, overflow="fold")
    return table
