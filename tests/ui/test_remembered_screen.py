"""What is remembered (F3): the screen alone in a small host (literal, bounded, usable at 60x20, asking
to forget through messages), and in the app (live after a turn and a forget; forgetting from it goes
through the one confirmation and the one forget, and leaves no trace in the app nor on disk)."""

from __future__ import annotations

import io
import secrets
from dataclasses import dataclass

from rich.console import Console
from textual import on
from textual.app import App, ComposeResult
from textual.widgets import OptionList, Static

from tests.agentmem.helpers import files_holding
from tests.support.residue import residue
from tests.ui.helpers import FIXED, answer, make_app, say
from tests.ui.test_small_terminal import README, footer_keys
from workbench.agentmem.extracted import ExtractedMemory
from workbench.memory import SEED, WorkingMemory
from workbench.runtime import ModelConfig, build_models
from workbench.runtime.remembered import HeldItem, Remembered, RememberedSystem
from workbench.session.assemble import assemble
from workbench.ui.app import WorkbenchApp
from workbench.ui.confirm import ConfirmForget
from workbench.ui.facts import ForgetRequested
from workbench.ui.remembered_screen import ITEMS_SHOWN, LINES_SHOWN, RememberedScreen
from workbench.ui.screens import help_text
from workbench.ui.startup import stylesheet_dir

HOSTILE = "[bold]Contoso[/bold] \x1b[31mred\x1b[0m \u202eevil"


@dataclass
class Fixed:
    """What is remembered, as the screen reads it from the session."""

    held: Remembered

    async def remembered(self) -> Remembered:
        return self.held


class Host(App[None]):
    """The screen alone, styled as in the app; what it asks to forget is kept."""

    CSS_PATH = [stylesheet_dir() / "workbench.tcss"]

    def __init__(self, remembered: Remembered) -> None:
        super().__init__()
        self.remembered = remembered
        self.asked: list[ForgetRequested] = []

    def compose(self) -> ComposeResult:
        yield Static("the agents")

    def on_mount(self) -> None:
        screen = RememberedScreen(Fixed(self.remembered))
        self.push_screen(screen)
        screen.remembered = self.remembered

    @on(ForgetRequested)
    def _asked(self, request: ForgetRequested) -> None:
        self.asked.append(request)


def sample(items: int = 3) -> Remembered:
    files = tuple(
        HeldItem(
            "memory file",
            f"note-{n}.md",
            "the user's customer",
            f"customer={HOSTILE}\nline 2\nline 3\nline 4\nline 5",
            40,
            ("customer",),
        )
        for n in range(items)
    )
    loose = HeldItem("memory file", "mood.md", "", "likes short answers", 19)
    return Remembered(
        (
            RememberedSystem(
                "working memory",
                None,
                "1 of at most 5 facts",
                (HeldItem("fact", "module", "turn 1", "Billing", None, ("module",)),),
            ),
            RememberedSystem(
                "memory files", "/data/agent-memory/files/local-user", "FileMemoryProvider", (*files, loose)
            ),
        ),
        {"customer": (HOSTILE,), "module": ("Billing", "Reporting")},
        others=("call log",),
    )


def drawn(app: App[None]) -> str:
    """Every option of the list as it is drawn, in order, as plain text."""
    listed = app.screen.query_one(OptionList)
    console = Console(width=400, record=True, file=io.StringIO())  # unwrapped: a value reads whole
    for index in range(listed.option_count):
        console.print(listed.get_option_at_index(index).prompt)
    return console.export_text()


async def choose(pilot, option_id: str) -> None:
    listed = pilot.app.screen.query_one(OptionList)
    listed.highlighted = listed.get_option_index(option_id)
    await pilot.press("enter")
    await pilot.pause()


async def test_the_screen_shows_values_literally_and_asks_to_forget_the_keys_an_item_holds():
    host = Host(sample())
    async with host.run_test(size=(60, 20), notifications=True) as pilot:
        await pilot.pause()
        shown = drawn(host)
        assert "[bold]Contoso[/bold] \\x1b[31mred\\x1b[0m \\u202eevil" in shown  # as typed, nothing interpreted
        assert "holds customer" in shown and "holds no key's value" in shown
        assert f"… {5 - LINES_SHOWN} more line(s)" in shown
        assert "Also reached by every forget (this run, in memory): call log." in shown

        await choose(pilot, "item-1-0")  # a memory file that holds customer
        await choose(pilot, "system-0")  # the working memory's own line: every key it holds
        await choose(pilot, "everything")
        assert [(r.keys, r.held) for r in host.asked] == [
            (("customer",), {"customer": (HOSTILE,)}),
            (("module",), {"module": ("Billing", "Reporting")}),
            (None, None),
        ]
        await choose(pilot, "item-1-3")  # holds no key: only forget everything reaches it
        assert len(host.asked) == 3
        assert [n.message for n in host._notifications][-1].startswith("It holds no value of an allowed key")


async def test_a_system_that_could_not_be_read_says_what_it_holds_is_not_known():
    why = 'IOException: IO Error: Could not set lock on file "/data/[b]recall.duckdb"'
    unread = RememberedSystem("recall store", "/data/[b]recall.duckdb", f"could not be read: {why}", unread=why)
    host = Host(Remembered((unread,)))
    async with host.run_test(size=(60, 20)) as pilot:
        await pilot.pause()
        shown = drawn(host)
    assert f"recall store could not be read: {why}" in shown and "/data/[b]recall.duckdb" in shown
    assert "what it holds is not known" in shown and "holds no key's value" not in shown


async def test_a_system_with_many_items_shows_a_bounded_list_and_its_own_line_forgets_them_all():
    host = Host(sample(ITEMS_SHOWN + 30))
    async with host.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        shown = drawn(host)
        assert f"note-{ITEMS_SHOWN - 1}.md" in shown and f"note-{ITEMS_SHOWN}.md" not in shown
        assert "… and 31 more item(s): select memory files above to forget them" in shown
        await choose(pilot, "system-1")
        assert host.asked[-1].keys == ("customer",)


async def test_many_long_corrected_values_leave_the_list_in_view_at_80x24():
    """The header names the corrected values that fit, each cut short, and counts the others; every
    item still names those it holds."""
    corrected = tuple(f"{letter * 255}{n}" for n, letter in enumerate("ABCDEFGHIJKL"))
    held = sample()
    host = Host(Remembered(held.systems, held.values, corrected, held.others))
    async with host.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        status = host.screen.query_one("#remembered-status", Static)
        listed = host.screen.query_one(OptionList)
        shown = str(status.render())
        assert status.region.height <= 4 and listed.region.height >= 15
        assert f'"{"A" * 20}' in shown and "and 11 more" in shown and "B" * 20 not in shown


async def test_the_screen_follows_a_turn_that_ends_while_it_is_open():
    app = make_app(delay=0.05)
    async with app.run_test(size=(100, 30)) as pilot:
        await say(pilot, "support", "module=Reporting")
        app.pane("support").prompt.focus()
        app.post_message(__import__("textual").events.Paste("customer=Contoso"))
        await pilot.pause()
        await pilot.press("enter")  # the turn runs (its words stream slowly) ...
        await pilot.press("f3")  # ... while the screen opens
        await pilot.pause()
        assert isinstance(app.screen, RememberedScreen)
        await app.workers.wait_for_complete()
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, RememberedScreen) and screen.remembered is not None
        facts = screen.remembered.systems[0]
        assert [i.name for i in facts.items if i.kind == "fact"] == ["module", "customer"]
        await pilot.press("escape")
        assert not isinstance(app.screen, RememberedScreen)


def extracted_app(root) -> WorkbenchApp:
    memory = ExtractedMemory(root)
    return WorkbenchApp(
        assemble(build_models(ModelConfig()), memory=WorkingMemory(clock=lambda: FIXED), memories=[memory])
    )


async def test_forgetting_an_item_from_the_screen_leaves_no_trace_in_the_app_nor_on_disk(tmp_path):
    tag = secrets.token_hex(5)
    contoso, billing = f"Contoso-{tag}", f"Billing-{tag}"
    app = extracted_app(tmp_path)
    async with app.run_test(size=(120, 40), notifications=True) as pilot:
        await say(pilot, "support", f"customer={contoso}; module={billing}")
        await say(pilot, "logs", "Which customer?")
        await pilot.press("f3")
        await app.workers.wait_for_complete()
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, RememberedScreen) and screen.remembered is not None
        assert set(residue([contoso], app)) == {contoso} and files_holding(tmp_path, contoso)
        (number,) = [n for n, s in enumerate(screen.remembered.systems) if s.name == "extracted memory"]
        (index,) = [
            i for i, item in enumerate(screen.remembered.systems[number].items) if item.name == "topics/customer.md"
        ]

        await choose(pilot, f"item-{number}-{index}")
        question = app.screen
        assert isinstance(question, ConfirmForget) and question.keys == ("customer",)
        assert question.held == {"customer": (contoso,)}
        del question  # the test's own reference to the question, which names the value
        await answer(pilot, "y")
        await app.workers.wait_for_complete()
        await pilot.pause()

        assert app.screen is screen
        assert isinstance(screen, RememberedScreen) and screen.remembered is not None  # read again after the forget
        assert "customer" not in screen.remembered.values
        assert residue([contoso], app) == {}
        assert files_holding(tmp_path, contoso) == []
        assert set(residue([billing], app)) == {billing}  # only the forgotten key went


async def test_forget_everything_from_the_screen_empties_every_memory(tmp_path):
    tag = secrets.token_hex(5)
    contoso = f"Contoso-{tag}"
    app = extracted_app(tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        await say(pilot, "support", f"customer={contoso}")
        await pilot.press("f3")
        await app.workers.wait_for_complete()
        await pilot.pause()
        await choose(pilot, "everything")
        await answer(pilot, "y")
        await app.workers.wait_for_complete()
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, RememberedScreen) and screen.remembered is not None
        assert screen.remembered.values == {} and all(not i.keys for s in screen.remembered.systems for i in s.items)
        assert [s.items for s in screen.remembered.systems if s.name == "extracted memory"] == [()]
        assert residue([contoso], app) == {} and files_holding(tmp_path, contoso) == []


async def test_f3_the_palette_the_help_and_the_readme_all_offer_it_and_its_footer_says_its_keys():
    app = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        assert "What is remembered" in [c.title for c in app.get_system_commands(app.screen)]
        await pilot.press("f3")
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert isinstance(app.screen, RememberedScreen)
        assert footer_keys(app) == [("esc", "Back to the agents"), ("f8", "Forget everything")]
        await pilot.press("f3")  # F3 again closes it, as Esc does
        await pilot.pause()
        assert not isinstance(app.screen, RememberedScreen)
    assert "F3 what is remembered" in help_text(SEED) and "What is remembered (F3) lists every memory" in help_text(
        SEED
    )
    assert "| F3 | what is remembered" in README.read_text(encoding="utf-8")
