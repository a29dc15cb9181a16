"""The header's words: the runtime's status in full when it fits, else its parts by what matters first."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from workbench.session.views import RuntimeStatus

# Columns of Textual's header taken by its icon and clock space, not by the title.
HEADER_CHROME = 18
SEPARATOR = " · "


def header_titles(name: str, status: RuntimeStatus, width: int) -> tuple[str, str]:
    """(title, sub title): the status in words when it fits the header; else its parts by what matters
    first, every one whole, with the app's name and each part named if they fit, else without (the
    memories by name, else counted: their descriptions are what make the status long); in a narrow
    terminal, as many of those parts as fit, the first that does not cut, two memories or more counted
    (F1 says what each is)."""
    room = width - HEADER_CHROME
    if len(f"{name} — {status.summary}") <= room:
        return name, status.summary
    for title, labelled in ((name, True), ("", False)):
        for named in (True, False):  # the memories by name, else counted: every part whole
            shown = SEPARATOR.join(status.shortened(labelled=labelled, memories_named=named))
            if len(f"{title} — {shown}" if title else shown) <= room:
                return title, shown
    # Several memories' names would take the room of the model: counted, they leave it in view.
    return "", fitted(status.shortened(labelled=False, memories_named=len(status.memories) < 2), room)


def fitted(parts: tuple[str, ...], room: int) -> str:
    """As many of `parts` as fit in `room` columns, in order, each whole; the first that does not fit is
    cut, or only marked, with "…" (a part is never left out while a later one is shown)."""
    shown = ""
    for part in parts:
        joined = f"{shown}{SEPARATOR}{part}" if shown else part
        if len(joined) <= room:
            shown = joined
            continue
        cut = room - len(shown) - (len(SEPARATOR) if shown else 0) - 1
        if cut > 0:
            return f"{joined[: len(joined) - len(part)]}{part[:cut]}…"
        return f"{shown} …" if len(shown) + 2 <= room else shown  # more, which F1 says
    return shown
