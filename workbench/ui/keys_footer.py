"""The footer of every screen: Textual's, redrawn only when the keys it shows change, and in a narrow
terminal compact, with its long words short, so that every key it shows fits 80 columns."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.screen import Screen
from textual.widgets import Footer
from textual.widgets._footer import FooterKey  # the footer's key widgets, as its compose makes them

Shown = tuple[tuple[tuple[Binding, bool, str], ...], bool]

NARROW = 110  # below this width (the app's narrow breakpoint) the footer is compact and its words short
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
        if self.is_attached and self._drawn is not None and self._narrow != self._drawn[1]:
            self.bindings_changed(self.screen)

    @property
    def _narrow(self) -> bool:
        return self.app.size.width < NARROW

    def compose(self) -> ComposeResult:
        if not self._narrow:
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
        return keys, self._narrow
