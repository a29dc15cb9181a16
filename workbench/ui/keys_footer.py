"""The footer of every screen: Textual's, redrawn only when the keys it shows change, and where its keys
do not fit the terminal whole, compact, with its long words short and the keys that only open a view
last, so that the keys that act (F8 among them) are in it at 80 columns."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.screen import Screen
from textual.widgets import Footer
from textual.widgets._footer import FooterKey  # the footer's key widgets, as its compose makes them

Shown = tuple[tuple[tuple[Binding, bool, str], ...], bool]

# A key's words where they are long, shortened in a narrow footer (the key's tooltip and F1 say them whole).
SHORT = {
    "Cancel turn": "Cancel",
    "What the model saw": "Model saw",
    "Drift lab": "Drift",
    "Back to the agents": "Back",
    "Forget everything": "Forget all",
}

# The keys that only open a view (F1 and the footer's tooltips name them too): last in a narrow footer.
VIEWS = frozenset({"show_calls", "other_agents", "drift"})


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
        self.compact = shown[1]
        super().bindings_changed(screen)
        if screen.app.app_focus and self.is_attached and screen is self.screen:  # when Footer redraws
            self._drawn = shown

    def on_resize(self) -> None:
        if self.is_attached and self._drawn is not None and self._shown(self.screen) != self._drawn:
            self.bindings_changed(self.screen)

    def compose(self) -> ComposeResult:
        if not self._shown(self.screen)[1]:
            yield from super().compose()
            return
        widgets = list(super().compose())
        for widget in widgets:
            if isinstance(widget, FooterKey) and widget.description in SHORT:
                widget.tooltip = widget.tooltip or widget.description
                widget.description = SHORT[widget.description]
        # What a narrow footer cuts is its end: the keys that open a view go after those that act.
        yield from sorted(widgets, key=lambda w: isinstance(w, FooterKey) and w.action in VIEWS)

    def _shown(self, screen: Screen[object]) -> Shown:
        palette = self.app.COMMAND_PALETTE_BINDING
        keys = tuple(
            (binding, enabled, tooltip)
            for key, (_node, binding, enabled, tooltip) in screen.active_bindings.items()
            if binding.show or key == palette
        )
        # Each key drawn whole: " key words " (the palette's after a one-column rule).
        room = sum(len(self.app.get_key_display(b)) + len(b.description) + 3 for b, _, _ in keys) + 1
        return keys, room > self.app.size.width
