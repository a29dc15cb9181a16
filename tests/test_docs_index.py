"""The docs can be found: every page under docs/ is linked from the README or the docs' index, and
every key the app binds is in the README's keys table and in docs/app.md's. docs/startup.md was linked
from nowhere, docs/crash-safety.md missing from the README's list, and F4 bound but documented nowhere."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from workbench.ui.app import WorkbenchApp
from workbench.ui.chat import ChatPane

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text(encoding="utf-8")
INDEX = (ROOT / "docs" / "README.md").read_text(encoding="utf-8")
APP = (ROOT / "docs" / "app.md").read_text(encoding="utf-8")


@pytest.mark.parametrize("page", sorted(p.name for p in (ROOT / "docs").glob("*.md") if p.name != "README.md"))
def test_every_page_is_linked_from_the_readme_and_the_docs_index(page):
    assert f"(docs/{page}" in README, f"the README's list misses {page}"
    assert f"({page}" in INDEX, f"docs/README.md misses {page}"


def _keys_table(text: str) -> str:
    return "\n".join(line for line in text.splitlines() if line.startswith("| "))


@pytest.mark.parametrize(
    "key",
    sorted({b.key for b in (*WorkbenchApp.BINDINGS, *ChatPane.BINDINGS)}),  # type: ignore[union-attr]
)
def test_every_key_the_app_binds_is_in_the_readme_and_in_using_the_app(key):
    shown = {"escape": "Esc", "ctrl+q": "Ctrl+Q"}.get(key, key.upper())
    for name, text in (("README.md", README), ("docs/app.md", APP)):
        assert re.search(rf"^\| {re.escape(shown)}\b", _keys_table(text), re.MULTILINE), f"{name} misses {shown}"


def test_the_readme_stays_within_a_page():
    assert README.count("\n") <= 150


@pytest.mark.parametrize(
    "key",
    sorted({b.key for b in (*WorkbenchApp.BINDINGS, *ChatPane.BINDINGS)} - {"f1"}),  # type: ignore[union-attr]
)
def test_every_key_the_app_binds_is_in_the_f1_help(key):
    """The F1 help named F2, F3, F5, F8 and F9 but not F4, bound since the app ran more agents than panes fit."""
    from workbench.memory.contract import SEED
    from workbench.ui.screens import help_text

    shown = {"escape": "Esc", "ctrl+q": "Ctrl+Q"}.get(key, key.upper())
    assert re.search(rf"\b{re.escape(shown)}\b", help_text(SEED)), f"the F1 help misses {shown}"
