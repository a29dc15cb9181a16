"""The contract suite a model is qualified against, kept as data in the package."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from importlib import resources


@dataclass(frozen=True)
class Case:
    id: str
    title: str
    message: str
    expect: str
    facts: dict[str, str]
    reason: str | None = None
    setup: tuple[str, ...] = field(default=())


@dataclass(frozen=True)
class Suite:
    name: str
    description: str
    format_probe: str
    cases: tuple[Case, ...]


def load_suite(name: str = "suite.json") -> Suite:
    data = json.loads(resources.files("workbench.qualify").joinpath(name).read_text(encoding="utf-8"))
    cases = tuple(
        Case(
            id=c["id"],
            title=c["title"],
            message=c["message"],
            expect=c["expect"],
            facts=c.get("facts", {}),
            reason=c.get("reason"),
            setup=tuple(c.get("setup", ())),
        )
        for c in data["cases"]
    )
    return Suite(data["name"], data["description"], data["format_probe"], cases)
