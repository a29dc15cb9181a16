"""Rich tables as the reports (drift, qualify) print them."""

from __future__ import annotations

from rich.table import Table


def titled_table(title: str, columns: tuple[str, ...]) -> Table:
    """A left-titled table whose cells fold instead of cropping."""
    table = Table(title=title, title_justify="left")
    for column in columns:
        table.add_column(column, overflow="fold")
    return table
