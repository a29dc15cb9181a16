"""The agents' panes, side by side: as many as fit (at least two), the others one key away."""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence

from textual.containers import Container
from textual.events import Resize
from textual.reactive import reactive

from workbench.ui.chat import ChatPane, pane_words
from workbench.ui.typing import PauseScheduler


class Panes(Container):
    """Holds one ChatPane per agent and shows `room` of them from `first` on (wrapping round);
    `turn` brings the next ones into view. Stacked (at 80 columns) two show; side by side, as many
    as are at least PANE_WIDTH wide, up to MOST. A pane out of view keeps running its turn."""

    PANE_WIDTH = 25
    MOST = 4

    first: reactive[int] = reactive(0, init=False, always_update=True)  # set again: panes mounted since show
    room: reactive[int] = reactive(2, init=False)

    def on_mount(self) -> None:
        self._show()

    def on_resize(self, event: Resize) -> None:
        stacked = self.styles.layout is not None and self.styles.layout.name == "vertical"
        self.room = 2 if stacked else max(2, min(self.MOST, event.size.width // self.PANE_WIDTH))

    @property
    def panes(self) -> list[ChatPane]:
        return list(self.query_children(ChatPane))

    @property
    def out_of_view(self) -> int:
        """How many panes do not show now."""
        return max(0, len(self.panes) - self.room)

    def shown(self) -> list[ChatPane]:
        panes = self.panes
        count = min(self.room, len(panes))
        return [panes[(self.first + i) % len(panes)] for i in range(count)]

    def turn(self) -> None:
        """Show the next panes (those after the last one shown, wrapping round)."""
        if self.out_of_view:
            self.first = (self.first + self.room) % len(self.panes)

    def watch_first(self) -> None:
        self._show()

    def watch_room(self) -> None:
        self._show()

    def _show(self) -> None:
        """Each pane shown or not; the focus leaves a pane that no longer shows, for the first one shown."""
        self.refresh_bindings()  # the key to the others shows only when there are others
        shown = self.shown()
        for pane in self.panes:
            if pane.display != (pane in shown):
                pane.display = pane in shown
        focused = self.screen.focused if self.is_attached else None
        holder = next((a for a in focused.ancestors_with_self if isinstance(a, ChatPane)), None) if focused else None
        if holder is not None and holder not in shown:
            shown[0].prompt.focus()


def agent_panes(
    agents: Sequence[str],
    *,
    labels: Mapping[str, str],
    hints: Mapping[str, str],
    workflows: Collection[str],
    scheduler: PauseScheduler,
    focused: str,
) -> list[ChatPane]:
    """One pane per agent, titled with its name where `labels` gives no title, with the hint `hints` gives
    (a workflow's); the one the selector `focused` names (the app's AUTO_FOCUS) drawn focused from the first
    frame."""
    panes = []
    for number, agent in enumerate(agents):
        title, placeholder, hint = pane_words(agent)
        pane_id = f"pane-{number}"
        panes.append(
            ChatPane(
                agent,
                title=labels.get(agent, title),
                placeholder=placeholder,
                hint=hints.get(agent, hint),
                scheduler=scheduler,
                focused=f"#{pane_id} " in focused,
                id=pane_id,
                kind="workflow" if agent in workflows else "agent",
            )
        )
    return panes
