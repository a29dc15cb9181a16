"""The composers' undo history as a holder of text: it keeps every message sent (and what was typed
and deleted), so it registers with the one forget, and a forget from anywhere clears it."""

from __future__ import annotations

from collections.abc import Callable, Iterable

from workbench.memory.forget import ForgetPlan, TextHolder
from workbench.ui.composer import Composer


def input_undo(composers: Callable[[], Iterable[Composer]]) -> TextHolder:
    def texts() -> list[str]:
        return [text for composer in composers() for text in composer.undo_texts()]

    def forget(_plan: ForgetPlan) -> int:
        # Undo steps are pieces of typing, not whole texts a plan could scrub: every one of them goes.
        return sum(composer.forget_undo() for composer in composers())

    return TextHolder("input undo", "edit(s) cleared", texts, forget)
