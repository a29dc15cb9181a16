"""Request size against turns, one line per policy, drawn with plotext: in the terminal by the CLI
and, through textual-plotext's `plt`, in the drift screen. Both axes are logarithmic so that the
first turns (where bounded facts cost more than a short history) and the thousandth are both seen."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any

# One colour and one letter per policy, so the lines stay apart without colour too.
_STYLE = {
    "full": ("red", "f"),
    "window": ("cyan", "w"),
    "summary": ("magenta", "s"),
    "facts": ("green", "b"),
    "compaction": ("yellow", "c"),
    "recall": ("blue", "r"),
    "recall_purged": ("white", "p"),
}
_SPARE = (("orange", "x"), ("gray", "o"))


NOTHING_TO_CHART = "no agent request completed, so there is no request size to chart"


def has_points(sizes: Mapping[str, Sequence[int | None]]) -> bool:
    return any(size for series in sizes.values() for size in series)


def charted(sizes: Mapping[str, Sequence[int | None]]) -> Iterator[tuple[str, str, str, list[tuple[int, int]]]]:
    """Each series with a point to draw: its name, colour, letter, and (turn, size) points."""
    spare = iter(_SPARE)
    for name, series in sizes.items():
        points = [(turn, size) for turn, size in enumerate(series, 1) if size]
        if points:
            color, marker = _STYLE.get(name) or next(spare, ("white", "*"))
            yield name, color, marker, points


def legend(sizes: Mapping[str, Sequence[int | None]], titles: Mapping[str, str]) -> list[tuple[str, str]]:
    """Each drawn series' letter and title, for a legend beside the chart where it has no room for its own."""
    return [(marker, titles.get(name, name)) for name, _, marker, _ in charted(sizes)]


def plot_sizes(
    plt: Any,
    sizes: Mapping[str, Sequence[int | None]],
    titles: Mapping[str, str],
    title: str,
    *,
    labels: bool = True,
) -> None:
    """Draw each policy's request size at every turn that called the agent onto `plt` (the plotext
    module or a textual-plotext Plot). `labels`: plotext's own legend, drawn only where it fits."""
    plt.clear_figure()
    plt.title(title)
    plt.xlabel("turn (log scale)")
    plt.ylabel("request chars (log)")
    for name, color, marker, points in charted(sizes):
        xs, ys = zip(*points, strict=True)
        label = f"{marker} {titles.get(name, name)}" if labels else None
        plt.plot(list(xs), list(ys), label=label, color=color, marker=marker)
    if has_points(sizes):  # plotext cannot put an empty plot on log scales
        plt.xscale("log")
        plt.yscale("log")


def chart_text(
    sizes: Mapping[str, Sequence[int | None]], titles: Mapping[str, str], title: str, *, width: int, height: int
) -> str:
    """The chart as text with ANSI colours (the caller decides whether colour is shown). A new figure
    each time: plotext's module-level figure keeps state from one chart to the next."""
    from plotext._figure import _figure_class  # type: ignore[import-untyped]  # what textual-plotext wraps

    if not has_points(sizes):
        return NOTHING_TO_CHART
    figure = _figure_class()
    plot_sizes(figure, sizes, titles, title)
    figure.plotsize(width, height)
    figure.theme("clear")
    return str(figure.build())
