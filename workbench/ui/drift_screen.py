"""The drift lab inside the TUI: runs in a worker, never blocks the panes."""

from __future__ import annotations

from collections.abc import Awaitable, Mapping, Sequence
from typing import TYPE_CHECKING, Protocol

from rich.text import Text
from textual import work
from textual.app import ComposeResult, RenderResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import Screen
from textual.widgets import Static
from textual_plotext import PlotextPlot

from workbench.session.views import literal, visible
from workbench.ui.keys_footer import KeysFooter

if TYPE_CHECKING:
    from workbench.session.views import DriftReport, Progress


class LabRun(Protocol):
    """The lab's run on the session's models (`SessionController.lab`'s, with its story)."""

    def __call__(self, *, progress: Progress) -> Awaitable[DriftReport]: ...


class SizesChart(PlotextPlot):
    """Request size against turns. plotext applies the log scales to the figure's own data each time it
    builds it, so a figure built twice (a resize) was scaled twice and crashed the app on log10(0):
    the figure is drawn again from the sizes before every build."""

    def __init__(self, *, id: str) -> None:
        super().__init__(id=id)
        self._drawn: tuple[Mapping[str, Sequence[int | None]], Mapping[str, str], str] | None = None

    def draw(self, sizes: Mapping[str, Sequence[int | None]], titles: Mapping[str, str], title: str) -> None:
        self._drawn = (sizes, titles, title)
        self.refresh()

    def render(self) -> RenderResult:
        if self._drawn is not None:
            from workbench.session.views import plot_sizes

            sizes, titles, title = self._drawn
            plot_sizes(self.plt, sizes, titles, title, labels=False)  # the legend below fits any width
        return super().render()


class DriftScreen(Screen[None]):
    """Runs a chronology (the built-in one, or this conversation) through the policies on the app's
    model and shows the report."""

    BINDINGS = [
        Binding("escape", "close", "Back to the agents", id="close_drift"),
        Binding("r", "rerun", "Run again", id="rerun_drift"),
    ]
    AUTO_FOCUS = "#drift-report"  # the app's own (its support input) matches nothing here: PageDown scrolled nothing

    def __init__(self, lab: LabRun, model: str) -> None:
        """`lab` runs the story (the built-in one, or e.g. this conversation) on the model named `model`."""
        super().__init__(id="drift")
        self.lab = lab
        self.model = model

    def compose(self) -> ComposeResult:
        yield Static(Text("drift lab", "bold"), id="drift-status", markup=False)
        yield SizesChart(id="drift-chart")
        yield Static(id="drift-legend", markup=False)
        with VerticalScroll(id="drift-report"):
            yield Static(id="drift-body", markup=False)
        yield KeysFooter()

    def on_mount(self) -> None:
        self.action_rerun()

    def action_rerun(self) -> None:
        self.query_one("#drift-body", Static).update("")
        self.query_one("#drift-legend", Static).update("")
        self.run_lab()

    def action_close(self) -> None:
        self.workers.cancel_node(self)
        self.dismiss()

    def _status(self, text: str, style: str = "") -> None:
        self.query_one("#drift-status", Static).update(literal(text, style))

    @work(exclusive=True, group="drift", exit_on_error=False)
    async def run_lab(self) -> None:
        from workbench.session.views import legend, render, stop_line

        self._status(f"drift lab · running on {self.model} ...", "italic")
        try:
            report = await self.lab(
                progress=lambda policy, turn, total: self._status(f"drift lab · {policy}: turn {turn}/{total}")
            )
        except Exception as exc:  # a defect must show, not vanish with the worker
            self._status(f"drift lab failed: {type(exc).__name__}: {exc}", "bold red")
            self.notify(
                visible(f"{type(exc).__name__}: {exc}"), title="Drift lab failed", severity="error", markup=False
            )
            raise
        if stopped := stop_line(report):
            self._status(f"drift lab {stopped} · the report below is partial", "bold red")
            self.notify(visible(stopped), title="Drift lab stopped", severity="error", markup=False)
        else:
            self._status(
                f"drift lab · {report.chronology.turns} turns · model: {report.model} · r runs again, Esc goes back"
            )
        self.query_one("#drift-body", Static).update(render(report, timing=False, chart=False))
        title = f"request size at every turn · {report.chronology.turns:,} turns"
        self.query_one(SizesChart).draw(report.sizes, report.titles, title)
        self.query_one("#drift-legend", Static).update(
            Text(" · ").join(
                Text.assemble((f"{letter}:", "bold"), " ", name) for letter, name in legend(report.sizes, report.titles)
            )
        )
