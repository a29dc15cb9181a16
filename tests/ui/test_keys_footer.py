"""The footer alone in a small host app: focus moving between inputs with the same keys leaves its keys
as drawn; a key that goes away is redrawn at once. Textual's own footer, under the same steps, rebuilds
at every move: the control that shows the steps would see a needless rebuild."""

import asyncio

import pytest
from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.reactive import var
from textual.widgets import Footer, Input

from tests.ui.helpers import TIMEOUT
from workbench.ui.keys_footer import KeysFooter


def counting(base: type[Footer]) -> type[Footer]:
    class Counting(base):  # type: ignore[valid-type,misc]
        """Counts its rebuilds; `hidden` is set once it has drawn the keys without F9."""

        def __init__(self) -> None:
            super().__init__()
            self.rebuilds = 0
            self.hidden = asyncio.Event()

        def compose(self) -> ComposeResult:
            keys = list(super().compose())
            self.rebuilds += bool(keys)
            if keys and not any(getattr(key, "key", None) == "f9" for key in keys):
                self.hidden.set()
            yield from keys

    return Counting


class Host(App[None]):
    BINDINGS = [Binding("f9", "nothing", "Optional"), Binding("ctrl+q", "quit", "Quit")]
    offered: var[bool] = var(True)

    def __init__(self, footer: type[Footer]) -> None:
        super().__init__()
        self.footer = footer()

    def compose(self) -> ComposeResult:
        yield Input(id="one")
        yield Input(id="two")
        yield self.footer

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool:
        return self.offered if action == "nothing" else True


@pytest.mark.parametrize(("footer", "moves_rebuild"), [(KeysFooter, False), (Footer, True)])
async def test_focus_moves_keep_the_keys_a_change_redraws_them(footer: type[Footer], moves_rebuild: bool) -> None:
    app = Host(counting(footer))
    async with app.run_test() as pilot:
        await pilot.pause()
        drawn = app.footer.rebuilds  # type: ignore[attr-defined]
        for target in ("#two", "#one", "#two"):
            app.query_one(target, Input).focus()
            await pilot.pause()
        app.offered = False
        app.refresh_bindings()
        await asyncio.wait_for(app.footer.hidden.wait(), TIMEOUT)  # type: ignore[attr-defined]
        rebuilds = app.footer.rebuilds - drawn  # type: ignore[attr-defined]
        assert (rebuilds > 1) is moves_rebuild, f"{rebuilds} rebuilds for three focus moves and one change of keys"
        assert rebuilds >= 1
