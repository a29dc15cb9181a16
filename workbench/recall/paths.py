"""Where the DuckDB recall store keeps its file by default. Light to import: a start that only asks
where the file is loads no DuckDB."""

from __future__ import annotations

from pathlib import Path

from workbench.files import data_dir

FILE_NAME = "recall.duckdb"


def default_path() -> Path:
    return data_dir() / FILE_NAME
