"""Markdown that hides nothing the model wrote. Rich's Markdown drops HTML (tags, comments, whole
blocks), shows a link's text without its address (or its title), an image as an emoji and a name,
consumes reference definitions, decodes entities (`&#x202E;` becomes the character it names) and
never shows a code fence's info string: each a place where a reply can say something the user never
sees; and a table row's cells beyond its header's are dropped. Here those constructs are not parsed:
they show as the characters the model sent, line by line as it sent them. Emphasis, headings, lists,
quotes and code are still drawn, their markers taken as markup, but nothing the model wrote changes:
a backslash escape keeps its backslash, asterisks inside a word or number (`2*3*4`) are not emphasis,
and a numbered item keeps its own number and delimiter (Rich renumbers from the first and drops the
dot). A reply whose quotes and lists nest deeper than the parser goes (it drops what lies below) or
than the width allows (Rich draws their text in no columns at all) is shown as typed instead."""

from __future__ import annotations

import re
from typing import ClassVar, cast

from markdown_it import MarkdownIt
from markdown_it.rules_inline import StateInline
from markdown_it.rules_inline.emphasis import tokenize as emphasis
from markdown_it.rules_inline.escape import escape
from markdown_it.token import Token
from rich.console import Console, ConsoleOptions, RenderResult
from rich.markdown import CodeBlock, ListElement, ListItem, Markdown, MarkdownElement
from rich.segment import Segment
from rich.text import Text

# CommonMark without raw HTML, links, images, reference definitions or entities, and without tables
# (a row's cells beyond the header's are dropped): a table shows as typed, each line kept as a line.
_PARSER = (
    MarkdownIt("commonmark", {"html": False})
    .enable("strikethrough")
    .disable(["link", "image", "autolink", "reference", "entity"])
)


def _emphasis_outside_words(state: StateInline, silent: bool) -> bool:
    """CommonMark's emphasis, except that a run of asterisks between two letters or digits is text:
    CommonMark lets `*` split a word, so `2*3*4` would show as 234 with the 3 in italics."""
    start, src = state.pos, state.src
    if not silent and src[start] == "*":
        end = start
        while end < state.posMax and src[end] == "*":
            end += 1
        if start > 0 and src[start - 1].isalnum() and end < state.posMax and src[end].isalnum():
            state.pending += src[start:end]
            state.pos = end
            return True
    return emphasis(state, silent)


def _escape_as_typed(state: StateInline, silent: bool) -> bool:
    """A backslash escape still stops its character being markup, and shows as sent (`\\*`); a
    backslash before a line break stays a backslash (the line breaks anyway: each line is kept)."""
    if state.src.startswith("\\\n", state.pos):
        if not silent:
            state.pending += "\\"
        state.pos += 1
        return True
    if not escape(state, silent):
        return False
    if not silent:
        state.tokens[-1].content = state.tokens[-1].markup  # the escape's text_special token
    return True


_PARSER.inline.ruler.at("emphasis", _emphasis_outside_words)
_PARSER.inline.ruler.at("escape", _escape_as_typed)


class _FencedCode(CodeBlock):
    """A fenced code block with its info string shown above it (Rich keeps its first word only, as
    the language, and shows none of it)."""

    info = ""

    @classmethod
    def create(cls, markdown: Markdown, token: Token) -> _FencedCode:
        block = cast(_FencedCode, super().create(markdown, token))  # Rich's, built with `cls`
        block.info = token.info
        return block

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        if self.info.strip():
            yield Text(self.info, "dim", end="")
        yield from super().__rich_console__(console, options)


class _NumberedItem(ListItem):
    """A list item that keeps the marker it was written with: `7)` stays `7)`, not the next number."""

    marker = ""

    @classmethod
    def create(cls, markdown: Markdown, token: Token) -> _NumberedItem:
        item = cls()
        item.marker = token.info + token.markup  # a number as typed and its `.` or `)` (a bullet's is unused)
        return item


class _ListAsTyped(ListElement):
    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        if self.list_type == "bullet_list_open":
            yield from super().__rich_console__(console, options)
            return
        markers = [item.marker if isinstance(item, _NumberedItem) else "" for item in self.items]
        width = max(map(len, markers), default=0) + 2
        style = console.get_style("markdown.item.number", default="none")
        for item, marker in zip(self.items, markers, strict=True):
            lines = console.render_lines(
                item.elements, options.update(width=options.max_width - width), style=item.style
            )
            for index, line in enumerate(lines):
                yield Segment((marker if index == 0 else "").rjust(width - 1) + " ", style)
                yield from line
                yield Segment("\n")


# The fewest columns nested quotes and lists may leave a reply's text; narrower, it is shown as typed.
NARROWEST_TEXT = 12
# Columns each level of nesting takes from the text: Rich's quote bar, a bullet, a number's padding.
_QUOTE_INDENT, _BULLET_INDENT, _NUMBER_PADDING = 4, 3, 2


# A line of quote and list markers alone (`>`, `- `, `2.`): nothing on it to draw.
_ONLY_MARKERS = re.compile(r"[ \t>]*(?:(?:[-+*]|\d{1,9}[.)])[ \t>]*)*")


def _all_drawn(markup: str, tokens: list[Token]) -> bool:
    """Whether every line that holds text belongs to a block that draws it: beyond its nesting limit
    the parser skips the rest of the block, text and all."""
    drawn: set[int] = set()
    for token in tokens:
        if token.map and token.type in ("inline", "heading_open", "fence", "code_block", "hr"):
            drawn.update(range(*token.map))
    lines = re.split(r"\r\n?|\n", markup)  # as the parser splits them
    return all(number in drawn for number, line in enumerate(lines) if not _ONLY_MARKERS.fullmatch(line))


def _deepest_indent(tokens: list[Token]) -> int:
    """The most columns nested quotes and list items take from any text of the reply."""
    indents, deepest = [0], 0
    for token in tokens:
        if token.type == "blockquote_open":
            indents.append(indents[-1] + _QUOTE_INDENT)
        elif token.type == "list_item_open":
            marker = token.info + token.markup
            indents.append(indents[-1] + (len(marker) + _NUMBER_PADDING if token.info else _BULLET_INDENT))
        elif token.type in ("blockquote_close", "list_item_close"):
            indents.pop()
        deepest = max(deepest, indents[-1])
    return deepest


class ShownMarkdown(Markdown):
    elements: ClassVar[dict[str, type[MarkdownElement]]] = {
        **Markdown.elements,
        "fence": _FencedCode,
        "bullet_list_open": _ListAsTyped,
        "ordered_list_open": _ListAsTyped,
        "list_item_open": _NumberedItem,
    }

    def __init__(self, markup: str) -> None:
        super().__init__("")  # Rich's own parse of nothing; the text is parsed below with _PARSER
        self.markup = markup
        self.parsed = _PARSER.parse(markup)
        for token in self.parsed:
            for child in token.children or ():
                if child.type == "softbreak":  # a line break as sent (Rich draws a soft one as a space)
                    child.type = "hardbreak"
        self.indent = _deepest_indent(self.parsed) if _all_drawn(markup, self.parsed) else None

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        if self.indent is None or options.max_width - self.indent < NARROWEST_TEXT:
            yield Text(self.markup)
            return
        yield from super().__rich_console__(console, options)
