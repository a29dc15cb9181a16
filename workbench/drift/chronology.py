"""The fixed chronology the drift lab replays, kept as data, and what it implies at each probe."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from importlib import resources

from workbench.memory import parse_declarations


@dataclass(frozen=True)
class Step:
    """One user turn. `forget` names a key the user asks to forget at this turn; `probe` marks a
    turn whose request is scored."""

    say: str
    forget: str | None = None
    probe: str | None = None


@dataclass(frozen=True)
class Expectation:
    """What the chronology implies at one probe, from the user's own declarations."""

    probe: str
    question: str
    current: dict[str, str]
    superseded: dict[str, tuple[str, ...]]
    prohibition: str | None
    forgotten: dict[str, tuple[str, ...]]


@dataclass(frozen=True)
class Chronology:
    name: str
    description: str
    prohibition_key: str
    steps: tuple[Step, ...]
    filler: str = ""
    fillers_after: int = 0
    expectations: tuple[Expectation, ...] = field(default=())

    @property
    def turns(self) -> int:
        return len(self.steps)

    def stretched(self, turns: int) -> Chronology:
        """The same story with filler turns (declaring nothing) inserted so it has `turns` turns."""
        if turns < self.turns:
            raise ValueError(f"the chronology needs at least {self.turns} turns; {turns} asked")
        fillers = tuple(Step(self.filler.format(n=i + 1)) for i in range(turns - self.turns))
        steps = self.steps[: self.fillers_after] + fillers + self.steps[self.fillers_after :]
        return _with_expectations(
            Chronology(self.name, self.description, self.prohibition_key, steps, self.filler, self.fillers_after)
        )


def _with_expectations(chronology: Chronology) -> Chronology:
    current: dict[str, str] = {}
    superseded: dict[str, list[str]] = {}
    forgotten: dict[str, list[str]] = {}
    expectations = []
    for step in chronology.steps:
        if step.probe:
            expectations.append(
                Expectation(
                    probe=step.probe,
                    question=step.say,
                    current=dict(current),
                    superseded={k: tuple(v) for k, v in superseded.items() if v},
                    prohibition=current.get(chronology.prohibition_key),
                    forgotten={k: tuple(v) for k, v in forgotten.items() if v},
                )
            )
        if step.forget:
            for value in [current.pop(step.forget, None), *superseded.pop(step.forget, [])]:
                if value:
                    forgotten.setdefault(step.forget, []).append(value)
        for key, value in parse_declarations(step.say).items():
            if key in current and current[key] != value:
                superseded.setdefault(key, []).append(current[key])
            current[key] = value
    return Chronology(
        chronology.name,
        chronology.description,
        chronology.prohibition_key,
        chronology.steps,
        chronology.filler,
        chronology.fillers_after,
        tuple(expectations),
    )


def load_chronology(name: str = "chronology.json") -> Chronology:
    """The chronology shipped with the package."""
    data = json.loads(resources.files("workbench.drift").joinpath(name).read_text(encoding="utf-8"))
    steps = tuple(Step(s["say"], s.get("forget"), s.get("probe")) for s in data["steps"])
    return _with_expectations(
        Chronology(
            data["name"],
            data["description"],
            data["prohibition_key"],
            steps,
            data.get("filler", ""),
            data.get("fillers_after", 0),
        )
    )
