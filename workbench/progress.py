"""Progress for long command-line runs: Rich's progress display on stderr when stderr is a terminal,
nothing at all when it is piped or the output is JSON."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager

# label, done, total
ProgressSink = Callable[[str, int, int], None]


@contextmanager
def stderr_progress(*, wanted: bool) -> Iterator[ProgressSink | None]:
    """A sink that shows `label: done/total` and the elapsed time, or None when nothing is to be shown."""
    from rich.console import Console

    console = Console(stderr=True)
    if not (wanted and console.is_terminal):
        yield None
        return
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    with Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=console,
        transient=True,
    ) as progress:
        task = progress.add_task("starting", total=None)

        def show(label: str, done: int, total: int) -> None:
            progress.update(task, description=label, completed=done, total=total)

        yield show
