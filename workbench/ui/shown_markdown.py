"""Markdown that hides nothing the model wrote. Rich's Markdown drops HTML (tags, comments, whole
blocks), shows a link's text without its address (or its title), an image as an emoji and a name,
consumes reference definitions, decodes entities (`&#x202E;` becomes the character it names) and
never shows a code fence's info string: each a place where a reply can say something the user never
sees; and a table row's cells beyond its header's are dropped. Here those constructs are not parsed:
they show as the characters the model sent, line by line as it sent them. Emphasis, headings, lists,
quotes and code are still drawn, their markers taken as markup."""

from __future__ import annotations

from typing import ClassVar, cast

from markdown_it import MarkdownIt
from markdown_it.token import Token
from rich.console import Console, ConsoleOptions, RenderResult
from rich.markdown import CodeBlock, Markdown, MarkdownElement
from rich.text import Text

# CommonMark without raw HTML, links, images, reference definitions or entities, and without tables
# (a row's cells beyond the header's are dropped): a table shows as typed, each line kept as a line.
_PARSER = (
    MarkdownIt("commonmark", {"html": False})
    .enable("strikethrough")
    .disable(["link", "image", "autolink", "reference", "entity"])
)


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


class ShownMarkdown(Markdown):
    elements: ClassVar[dict[str, type[MarkdownElement]]] = {**Markdown.elements, "fence": _FencedCode}

    def __init__(self, markup: str) -> None:
        super().__init__("")  # Rich's own parse of nothing; the text is parsed below with _PARSER
        self.markup = markup
        self.parsed = _PARSER.parse(markup)
        for token in self.parsed:
            for child in token.children or ():
                if child.type == "softbreak":  # a line break as sent (Rich draws a soft one as a space)
                    child.type = "hardbreak"
