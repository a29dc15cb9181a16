"""The footer of every screen: Textual's, redrawn only when the keys it shows change."""

from __future__ import annotations

from textual.binding import Binding
from textual.screen import Screen
from textual.widgets import Footer

Shown = tuple[tuple[Binding, bool, str], ...]


class KeysFooter(Footer):
    """Textual's footer rebuilds all its keys whenever the screen's bindings may have changed: each
    focus move does so twice, and a start three times, about 10 ms each on the project's machine.
    This one rebuilds them only when what it shows differs from what it drew."""

    def __init__(self) -> None:
        super().__init__()
        self._drawn: Shown | None = None

    def bindings_changed(self, screen: Screen[object]) -> None:
        shown = self._shown(screen)
        if shown == self._drawn:
            return
        super().bindings_changed(screen)
        if screen.app.app_focus and self.is_attached and screen is self.screen:  # when Footer redraws
            self._drawn = shown

    def _shown(self, screen: Screen[object]) -> Shown:
        palette = self.app.COMMAND_PALETTE_BINDING
        return tuple(
            (binding, enabled, tooltip)
            for key, (_node, binding, enabled, tooltip) in screen.active_bindings.items()
            if binding.show or key == palette
        )
