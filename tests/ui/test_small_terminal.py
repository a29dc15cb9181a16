"""On a real desk: 80x24 and narrower. The fact panel shows a corrected value whole, the latest change
says what is out of view and the keyboard reaches and scrolls it; each screen's footer says what
its keys do; a refused batch is said beside its reply; the drift chart names its series; F1 reads
as sentences. A widget or screen is shown alone in a small host app styled as the app; the whole app
runs only where its own flow is checked (a turn through the runtime, a refused draft)."""

from dataclasses import replace
from itertools import pairwise
from pathlib import Path

import pytest
from textual import on
from textual.app import App, ComposeResult
from textual.pilot import Pilot
from textual.widgets import Footer, Static
from textual.widgets._footer import FooterKey  # the footer's key widgets: what the footer draws

from tests.ui.helpers import ScreenHost, built_in_lab, make_app
from tests.ui.test_widgets import settle
from workbench.memory import SEED, WorkingMemory
from workbench.runtime.config import Mode
from workbench.runtime.view import Persisted, RuntimeStatus
from workbench.ui.app import WorkbenchApp
from workbench.ui.confirm import ConfirmForget
from workbench.ui.facts import ChangeBox, FactPanel, FactTable, ForgetRequested, MemoryView
from workbench.ui.header import fitted, header_titles
from workbench.ui.screens import HelpScreen, help_text
from workbench.ui.startup import stylesheet_dir

README = Path(__file__).resolve().parents[2] / "README.md"
NEW = "SQL Server 2022 Enterprise Edition (CU14)"


class PanelHost(App[None]):
    """The fact panel alone, styled and laid out as in the app (the same breakpoints)."""

    CSS_PATH = [stylesheet_dir() / "workbench.tcss"]
    HORIZONTAL_BREAKPOINTS = WorkbenchApp.HORIZONTAL_BREAKPOINTS

    def compose(self) -> ComposeResult:
        yield FactPanel()


class AskingPanelHost(PanelHost):
    """The fact panel above a footer; a request to forget opens the forget question, as the app does."""

    def compose(self) -> ComposeResult:
        yield from super().compose()
        yield Footer()

    @on(ForgetRequested)
    def _ask(self, request: ForgetRequested) -> None:
        self.push_screen(ConfirmForget(request.keys, agents=("support", "logs")))


def drift_lab() -> ScreenHost:
    """The drift lab alone, on the built-in model, as F5 opens it."""
    return ScreenHost(built_in_lab())


async def lab_ran(pilot: Pilot) -> None:
    await pilot.pause()  # the screen mounts and starts its worker
    await pilot.app.workers.wait_for_complete()
    await pilot.pause()


def shown_lines(widget) -> list[str]:
    """What the widget draws, line by line, as plain text."""
    return ["".join(s.text for s in strip) for strip in widget.render_lines(widget.region.reset_offset)]


def value_column(table: FactTable) -> str:
    """The value column as drawn, its lines joined by spaces: a value wrapped on three lines reads whole."""
    start = table.ordered_columns[0].get_render_width(table)
    end = start + table.ordered_columns[1].get_render_width(table)
    return " ".join(line[start:end].strip() for line in shown_lines(table)[1:])


def correct(panel: FactPanel) -> None:
    memory = WorkingMemory()
    settle(memory, "module=Reporting; database=PostgreSQL", ("module", "Reporting"), ("database", "PostgreSQL"))
    update = settle(memory, f"module=Billing; database={NEW}", ("module", "Billing"), ("database", NEW))
    assert update.outcome.applied
    panel.view = MemoryView.after(update)


@pytest.mark.parametrize("width", [60, 70, 80, 100, 110, 140])
async def test_the_new_value_of_a_correction_is_shown_whole_at_every_width(width):
    async with PanelHost().run_test(size=(width, 24)) as pilot:
        panel = pilot.app.query_one(FactPanel)
        correct(panel)
        await pilot.pause()
        shown = value_column(panel.query_one(FactTable))
        assert NEW in shown and "Billing" in shown and "…" not in shown
        # Where there is room, the old value stays beside the new one; the change box always names it.
        assert ("Reporting -> Billing" in shown) == (width >= 110)
        assert '"PostgreSQL" -> "SQL Server 2022' in str(panel.query_one("#changes", Static).render())


async def test_the_latest_change_says_what_is_out_of_view_and_the_keyboard_scrolls_it_and_the_ledger():
    memory, seen = WorkingMemory(), list[object]()
    async with PanelHost().run_test(size=(80, 24), message_hook=seen.append) as pilot:
        panel = pilot.app.query_one(FactPanel)
        for n in range(8):
            settle(memory, f"module=M{n}", ("module", f"M{n}"))
        # A rejected batch: one reason per failed candidate, many lines at this width.
        bad = [("color", "red"), ("m\u043edule", "Billing"), ("shade", "blue"), ("size", "XL")]
        update = settle(memory, "; ".join(f"{k}={v}" for k, v in bad), *bad)
        assert not update.outcome.applied
        panel.view = MemoryView.after(update)
        await pilot.pause()
        box = panel.query_one(ChangeBox)
        assert box.max_scroll_y > 0 and box.border_subtitle == f"↓{box.max_scroll_y} more: Tab here, ↑↓"
        panel.query_one(FactTable).focus()
        await pilot.press("tab")
        assert pilot.app.focused is box
        await pilot.press("down")
        assert box.scroll_y == 1 and box.border_subtitle.startswith(f"↑1 ↓{box.max_scroll_y - 1} more")
        await pilot.press("tab")
        ledger = panel.query_one("#ledger-scroll")
        assert pilot.app.focused is ledger and ledger.max_scroll_y > 0
        await pilot.press("down", "down", "x")
        assert ledger.scroll_y == 2
        assert {m.character for m in seen if isinstance(m, FactPanel.Typed)} == {"x"}  # text, for the message


async def test_the_footer_of_the_forget_confirmation_says_what_its_keys_do():
    async with AskingPanelHost().run_test(size=(80, 24)) as pilot:
        app = pilot.app
        panel = app.query_one(FactPanel)
        panel.view = MemoryView.after(settle(WorkingMemory(), "module=Billing", ("module", "Billing")))
        panel.query_one(FactTable).focus()
        await pilot.pause()
        assert ("⏎", "Forget fact") in footer_keys(app)
        await pilot.press("delete")
        await pilot.pause()
        assert isinstance(app.screen, ConfirmForget)
        keys = footer_keys(app)
        assert ("y", "Forget") in keys and ("n", "Keep") in keys and "Forget fact" not in {d for _, d in keys}


def footer_keys(app: App[None]) -> list[tuple[str, str]]:
    """The keys and descriptions in the footer drawn on the screen's bottom row."""
    bottom, _ = app.screen.get_widget_at(1, app.size.height - 1)
    footer = next((w for w in (bottom, *bottom.ancestors) if isinstance(w, Footer)), None)
    assert footer is not None and footer.screen is app.screen, f"no footer of {app.screen} on the bottom row"
    return [(k.key_display, k.description) for k in footer.query(FooterKey)]


async def test_the_drift_chart_at_80x24_has_a_legend_naming_each_series():
    from workbench.drift import POLICIES

    titles = {p.name: p.title for p in POLICIES}

    async with drift_lab().run_test(size=(80, 24)) as pilot:
        await lab_ran(pilot)
        app = pilot.app
        shown = app.screen.query_one("#drift-legend", Static)
        lines = shown_lines(shown)
        assert 0 < len(lines) and shown.region.bottom <= app.size.height
        text = " ".join(line.strip() for line in lines)
        letters = dict(full="f", window="w", summary="s", facts="b", compaction="c", recall="r", recall_purged="p")
        for name, letter in letters.items():
            assert f"{letter}: {titles[name]}" in text


async def test_the_drift_chart_draws_again_after_a_resize():
    """plotext applies the log scales to the figure's own data at each build: a chart drawn twice
    (a resize, a return to the screen) must still be drawn from its sizes, not crash the app."""
    from textual_plotext import PlotextPlot

    async with drift_lab().run_test(size=(80, 24)) as pilot:
        await lab_ran(pilot)
        app = pilot.app
        chart = app.screen.query_one(PlotextPlot)
        before = str(chart.render())
        await pilot.resize_terminal(160, 45)
        await pilot.pause()
        after = str(chart.render())
        assert app.is_running and chart.size.width > 80
        assert max(len(line) for line in after.splitlines()) > max(len(line) for line in before.splitlines())


def premature_breaks(widget) -> list[str]:
    """Lines of running text cut before the width was used: the next line's first word would have fitted."""
    lines, width = [line.rstrip() for line in shown_lines(widget)], widget.content_region.width
    return [
        f"{line!r} / {after!r}"
        for line, after in pairwise(lines)
        if line
        and after
        and not line.startswith(" ")
        and not after.startswith(" ")
        and len(line) + 1 + len(after.split()[0]) <= width
    ]


async def test_f1_help_reads_as_sentences_at_80x24_and_says_how_to_clear_a_refused_draft():
    async with ScreenHost(HelpScreen()).run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        for text in pilot.app.screen.query("#help-body Static"):
            assert premature_breaks(text) == []
        assert ("esc", "Close") in footer_keys(pilot.app)
    assert "F7 selects the whole draft, and Delete then clears it" in help_text(SEED)
    readme = README.read_text(encoding="utf-8")
    assert "| F7 |" in readme and "select" in readme.split("| F7 |")[1].splitlines()[0]


async def test_f7_then_delete_clears_a_refused_long_draft():
    app = make_app()
    async with app.run_test(size=(80, 24), notifications=True) as pilot:
        prompt = app.pane("support").prompt
        prompt.focus()
        prompt.insert("x" * 5000)
        await pilot.press("enter")
        # Textual keeps no public list of the notifications shown: the app's own one is read.
        assert prompt.text == "x" * 5000 and any("F7 selects" in n.message for n in app._notifications)
        await pilot.press("f7", "delete")
        assert prompt.text == ""


@pytest.mark.parametrize("size", [(80, 24), (60, 20)])
async def test_a_long_forget_question_keeps_its_consequence_and_buttons_in_view(size):
    """Five keys, three long values each: the question scrolls, what the forget does and the answers stay."""
    from workbench.memory.contract import MAX_VALUE_CHARS
    from workbench.ui.confirm import ConfirmForget

    keys = ("customer", "database", "module", "product", "symptom")
    held = {key: tuple(f"{key}-{n}-" + "中" * (MAX_VALUE_CHARS - 12) for n in range(4)) for key in keys}
    async with ScreenHost(ConfirmForget(keys, held, agents=("support", "logs"), kept=0)).run_test(size=size) as pilot:
        await pilot.pause()
        screen = pilot.app.screen
        for selector in ("#consequence", "#yes", "#no"):
            region = screen.query_one(selector).region
            assert region.height and region.bottom <= size[1] - 1, selector  # above the footer


# -- the header, the footer and the panel's subtitle at 80 columns (issue 37, item 9) ----------------------

HEADER_BASE = RuntimeStatus(
    "smollm2 @ 127.0.0.1:8765",
    Mode.MANUAL,
    "json_schema (auto)",
    recall="DuckDB, lexical",
    memories=("extracted memory: MemoryContextProvider, 2 file(s)",),
    memory_names=("extracted memory",),
)
FAILING = Persisted("~/.local/share/workbench/sessions", failure="OperationalError: database or disk is full")
RESUMED = Persisted("~/.local/share/workbench/sessions", messages=6, facts=2, resumed=True)
COMPLETED = "completed the forget of 'customer' cut short at 2026-12-06 04:00 UTC"
# Each state beside everything else a header can say; the words the header must show whole at 80 columns.
HEADER_STATES = {
    "not saving": (replace(HEADER_BASE, persisted=FAILING, completed=COMPLETED), "persist: NOT saving"),
    "forget completed": (replace(HEADER_BASE, completed=COMPLETED), "completed the forget of 'customer'"),
    "resumed": (replace(HEADER_BASE, persisted=RESUMED), "resumed: 6 message(s), 2 fact(s)"),
    "recall": (HEADER_BASE, "recall: DuckDB, lexical"),
    "extracted memory": (HEADER_BASE, "extracted memory"),
    "model, mode, format": (replace(HEADER_BASE, recall=None, memories=(), memory_names=()), None),
}


def header_line(app: App[None]) -> str:
    from textual.widgets._header import HeaderTitle  # the header's title widget: what the header draws

    return shown_lines(app.query_one(HeaderTitle))[0].strip()


@pytest.mark.parametrize("state", HEADER_STATES)
async def test_the_header_at_80_columns_shows_each_state_first(state):
    """It showed "scripted (built-in; qualifies no model) · manual · json_schem…" and hid the rest."""
    status, words = HEADER_STATES[state]
    app = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        app.title, app.sub_title = header_titles(app.TITLE or "", status, 80)
        await pilot.pause()
        shown = header_line(app)
    if words is None:
        assert shown == "smollm2 @ 127.0.0.1:8765 · manual · json_schema (auto)"
    else:
        assert shown.startswith(words) or f" · {words}" in shown, shown
    if state == "not saving":  # what matters most comes first: a failing save, then the forget completed
        assert shown.startswith("persist: NOT saving: OperationalError") and shown.endswith("…")


def test_a_narrow_header_never_leaves_out_a_part_while_showing_a_later_one():
    parts = ("resumed: 6 message(s), 2 fact(s)", "recall: DuckDB, lexical", "extracted memory", "manual")
    assert fitted(parts, 62) == "resumed: 6 message(s), 2 fact(s) · recall: DuckDB, lexical …"
    assert fitted(parts, 45) == "resumed: 6 message(s), 2 fact(s) · recall: D…"
    assert fitted(parts[2:], 62) == "extracted memory · manual"


async def test_the_app_at_80_columns_names_its_recall_in_the_header():
    from tests.ui.helpers import make_recall_app

    app = make_recall_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        assert header_line(app).startswith("recall: in memory, lexical · scripted · manual")


@pytest.mark.parametrize("size", [(80, 24), (60, 20)])
async def test_the_footer_at_80_columns_shows_f8_whole_and_the_panel_its_subtitle(size):
    app = make_app()
    async with app.run_test(size=size) as pilot:
        await pilot.pause()
        assert ("f8", "Forget all") in footer_keys(app)
        f8 = next(k for k in app.screen.query(FooterKey) if k.key == "f8")
        palette = next(k for k in app.screen.query(FooterKey) if k.has_class("-command-palette"))
        assert f8.region.width == len(" f8 Forget all") - 1 and f8.region.right <= palette.region.x
        panel = app.query_one(FactPanel)
        subtitle = panel.border_subtitle
        assert subtitle == "unverified: no authority" and len(subtitle) <= panel.size.width - 6
        await pilot.resize_terminal(140, 40)
        await pilot.pause()
        assert panel.border_subtitle == "unverified user assertions: they authorize nothing"
        assert ("f2", "What the model saw") in footer_keys(app)
