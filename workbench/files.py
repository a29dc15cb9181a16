"""Files the product writes: readable by the user only, whatever the directory's mode or umask.

The one owner of that rule for whole files written at once (exports); stores that keep their own
files (the recall database) create them through `private_file` too."""

from __future__ import annotations

import os
from pathlib import Path

PRIVATE = 0o600


def private_file(path: Path) -> None:
    """Create `path` empty if it does not exist, user-only; make an existing one user-only."""
    descriptor = os.open(path, os.O_WRONLY | os.O_CREAT, PRIVATE)
    try:
        os.fchmod(descriptor, PRIVATE)
    finally:
        os.close(descriptor)


def write_private(path: Path, text: str) -> None:
    """Write `text` (UTF-8) to `path`, created or truncated, readable by the user only. The mode is
    set on the open descriptor before a byte is written, so no other user can open it meanwhile."""
    descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, PRIVATE)
    with os.fdopen(descriptor, "w", encoding="utf-8") as file:
        os.fchmod(descriptor, PRIVATE)
        file.write(text)
