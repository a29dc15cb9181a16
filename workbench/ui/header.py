"""The header's words: the runtime's status in full when it fits, its values alone when it does not."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from workbench.runtime.view import RuntimeStatus

# Columns of Textual's header taken by its icon and clock space, not by the title.
HEADER_CHROME = 18


def header_titles(name: str, status: RuntimeStatus, width: int) -> tuple[str, str]:
    """(title, sub title): the status in words when it fits the header; in a narrow terminal its
    values alone, without the app's name, so that mode and writer stay in view (F1 says what each is)."""
    if len(f"{name} — {status.summary}") <= width - HEADER_CHROME:
        return name, status.summary
    return "", status.compact
