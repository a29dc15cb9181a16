"""Chronologies: the public file format the drift lab replays and the session exports, validated with
pydantic (`workbench.chronology_file`), and what a chronology implies at each probe (the values the
user's own declarations make current, superseded or forgotten). The built-in chronology loads through
the same path as a user's file. Beside the memory contract, below both the session and the lab, which
are peers: neither imports the other."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field, replace
from importlib import resources
from pathlib import Path
from typing import Any

from workbench.chronology_file import FORGET_ALL, ChronologyFile, StepFile, validated
from workbench.memory import SEED, Contract, parse_declarations
from workbench.memory.rules import admissible_as_declared
from workbench.memory.shown import quoted

# The longest story `--turns` and `--sweep` stretch to. Full history resends every earlier message at
# every turn, and persisted history and extracted memory re-read their whole files, so a run grows with
# the square of its length: 1,000 turns took 349 s on the built-in model at load 3 (docs/scoring.md).
MAX_TURNS = 2_000


class ChronologyError(ValueError):
    """A chronology that cannot be run: one line per problem, each naming the step and the field."""

    def __init__(self, source: str, problems: list[str]) -> None:
        self.source = source
        self.problems = problems
        count = f"{len(problems)} problem{'s' if len(problems) != 1 else ''}"
        super().__init__(f"{source}: {count}\n" + "\n".join(f"  {p}" for p in problems))


@dataclass(frozen=True)
class Step:
    """One turn of the story: a message to one agent, a forget (a key or "all"), or both (the forget
    first). A probe is a question whose request, and answer, are scored."""

    say: str | None
    forget: str | None = None
    probe: str | None = None
    agent: str = "support"
    expect: tuple[str, ...] | None = None
    forbid: tuple[str, ...] | None = None
    expect_any: tuple[str, ...] | None = None
    about_prohibition: bool = False
    why: str | None = None


@dataclass(frozen=True)
class Expectation:
    """What the chronology implies at one probe, from the user's own declarations, and the texts its
    answer should and should not contain (given in the file, or derived from the keys the question
    names: their current values expected, their superseded and forgotten values forbidden). A probe
    about the prohibition expects the prohibition instead: its value in force, or any of the probe's
    `expect_any` (a paraphrase). `why` says in words why these texts."""

    probe: str
    question: str
    agent: str
    current: dict[str, str]
    superseded: dict[str, tuple[str, ...]]
    prohibition: str | None
    forgotten: dict[str, tuple[str, ...]]
    expect: tuple[str, ...] = ()
    forbid: tuple[str, ...] = ()
    derived: bool = False
    expect_any: tuple[str, ...] = ()
    about_prohibition: bool = False
    why: str = ""


@dataclass(frozen=True)
class Chronology:
    name: str
    description: str
    prohibition_key: str | None
    steps: tuple[Step, ...]
    filler: str = ""
    fillers_after: int = 0
    expectations: tuple[Expectation, ...] = field(default=())
    contract: Contract = SEED  # what its messages are read under, and the lab's facts policy runs on

    @property
    def turns(self) -> int:
        return len(self.steps)

    def check_length(self, turns: int) -> None:
        """ValueError, in words, when the story cannot be stretched to `turns` turns."""
        if turns < self.turns:
            raise ValueError(f"the chronology needs at least {self.turns:,} turns; {turns:,} asked")
        if turns > self.turns and not self.filler:
            raise ValueError(f"the chronology {quoted(self.name)} has no filler, so it cannot be stretched")

    def stretched(self, turns: int) -> Chronology:
        """The same story with filler turns (declaring nothing) inserted so it has `turns` turns."""
        self.check_length(turns)
        fillers = tuple(Step(self.filler.format(n=i + 1)) for i in range(turns - self.turns))
        steps = self.steps[: self.fillers_after] + fillers + self.steps[self.fillers_after :]
        return with_expectations(replace(self, steps=steps))

    def to_file(self) -> dict[str, Any]:
        """The chronology in the public file format (what `load_chronology_file` reads back), written
        by the same pydantic models that read it: defaults and absent fields are left out."""
        steps = [
            StepFile.model_construct(
                say=s.say,
                agent=s.agent,
                forget=s.forget,
                probe=s.probe,
                expect=list(s.expect) if s.expect is not None else None,
                forbid=list(s.forbid) if s.forbid is not None else None,
                expect_any=list(s.expect_any) if s.expect_any is not None else None,
                about_prohibition=s.about_prohibition or None,
                why=s.why,
            )
            for s in self.steps
        ]
        model = ChronologyFile.model_construct(
            name=self.name,
            description=self.description,
            prohibition_key=self.prohibition_key,
            filler=self.filler,
            fillers_after=self.fillers_after,
            steps=steps,
        )
        return model.model_dump(mode="json", exclude_none=True, exclude_defaults=True)


_WORD = re.compile(r"[a-z]+")


def named_keys(question: str, contract: Contract) -> list[str]:
    """The contract's keys a question names as words, singular or plural ("Which module ...", "Where
    are the logs?")."""
    words = set(_WORD.findall(question.lower()))
    return [key for key in contract.keys if key.lower() in words or f"{key.lower()}s" in words]


def with_expectations(chronology: Chronology) -> Chronology:
    """Walk the story as the memory contract reads it: a message whose declarations admission would take
    (the memory's own rules) sets current values; a forget moves values to forgotten."""
    current: dict[str, str] = {}
    superseded: dict[str, list[str]] = {}
    forgotten: dict[str, list[str]] = {}
    expectations = []
    for step in chronology.steps:
        if step.forget:
            keys = list({*current, *superseded}) if step.forget == FORGET_ALL else [step.forget]
            for key in keys:
                for value in [current.pop(key, None), *superseded.pop(key, [])]:
                    if value:
                        forgotten.setdefault(key, []).append(value)
        if step.say is None:
            continue
        if step.probe:
            expectations.append(_expectation(chronology, step, step.say, current, superseded, forgotten))
        if admissible_as_declared(step.say, chronology.contract):
            for key, value in parse_declarations(step.say).items():
                if key in current and current[key] != value:
                    superseded.setdefault(key, []).append(current[key])
                current[key] = value
    return replace(chronology, expectations=tuple(expectations))


def _expectation(
    chronology: Chronology,
    step: Step,
    question: str,
    current: dict[str, str],
    superseded: dict[str, list[str]],
    forgotten: dict[str, list[str]],
) -> Expectation:
    derived = step.expect is None and step.forbid is None
    prohibition = current.get(chronology.prohibition_key) if chronology.prohibition_key else None
    keys = named_keys(question, chronology.contract)
    expect_any = step.expect_any or ()
    if step.about_prohibition and prohibition is not None and derived:
        expect_any = tuple(dict.fromkeys((prohibition, *expect_any)))
    if derived:
        expect = () if step.about_prohibition else tuple(current[k] for k in keys if k in current)
        forbid = tuple(
            dict.fromkeys(v for k in keys for v in (*superseded.get(k, ()), *forgotten.get(k, ())) if v not in expect)
        )
    else:
        expect, forbid = step.expect or (), step.forbid or ()
    assert step.probe is not None
    return Expectation(
        probe=step.probe,
        question=question,
        agent=step.agent,
        current=dict(current),
        superseded={k: tuple(v) for k, v in superseded.items() if v},
        prohibition=prohibition,
        forgotten={k: tuple(v) for k, v in forgotten.items() if v},
        expect=expect,
        forbid=forbid,
        derived=derived,
        expect_any=expect_any,
        about_prohibition=step.about_prohibition,
        why=step.why or _why(chronology, step, keys, derived, prohibition),
    )


def _why(chronology: Chronology, step: Step, keys: list[str], derived: bool, prohibition: str | None) -> str:
    """Why a probe expects and forbids what it does, in words, when its step does not say."""
    if not derived:
        return "given in the chronology"
    named = ", ".join(keys) or "no key"
    forbids = f"the superseded and forgotten values of the keys the question names ({named}) are forbidden"
    if step.about_prohibition:
        if prohibition is None:
            return f"it asks about the prohibition, but none is in force here; {forbids}"
        return (
            f"it asks about the prohibition ({chronology.prohibition_key} in force): the answer should state it, "
            f"in its words or one of the texts listed; {forbids}"
        )
    return f"the current values of the keys the question names ({named}) are expected; {forbids}"


def parse_chronology(data: object, source: str = "chronology", contract: Contract = SEED) -> Chronology:
    """A chronology from decoded JSON, read under `contract` (the keys it may forget and name as its
    prohibition, and its messages' admission), or ChronologyError naming every problem by step and field."""
    parsed, problems = validated(data, contract)
    if parsed is None:
        raise ChronologyError(source, problems)
    steps = tuple(
        Step(
            s.say,
            s.forget,
            s.probe,
            s.agent,
            tuple(s.expect) if s.expect is not None else None,
            tuple(s.forbid) if s.forbid is not None else None,
            tuple(s.expect_any) if s.expect_any is not None else None,
            bool(s.about_prohibition),
            s.why,
        )
        for s in parsed.steps
    )
    return with_expectations(
        Chronology(
            parsed.name,
            parsed.description,
            parsed.prohibition_key,
            steps,
            parsed.filler,
            parsed.fillers_after,
            contract=contract,
        )
    )


def read_chronology(text: str, source: str, contract: Contract = SEED) -> Chronology:
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ChronologyError(source, [f"not JSON: line {exc.lineno}, column {exc.colno}: {exc.msg}"]) from None
    return parse_chronology(data, source, contract)


def load_chronology_file(path: str | Path, contract: Contract = SEED) -> Chronology:
    """A user's chronology file, read under `contract` (the run's: the seed's, or a team's own)."""
    source = str(path)
    try:
        text = Path(path).read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        byte = f"byte {exc.start + 1:,} (0x{exc.object[exc.start]:02x})"
        problem = f"is not UTF-8 text: {byte} is not valid UTF-8; save it as UTF-8"
        raise ChronologyError(source, [problem]) from None
    except OSError as exc:
        raise ChronologyError(source, [f"cannot be read: {exc.strerror or 'the system refused'}"]) from None
    return read_chronology(text, source, contract)


def load_chronology(name: str = "chronology.json") -> Chronology:
    """The chronology shipped with the package, read and validated like any user's file. It is the
    seed's story, so it is read under the seed's contract whatever contract a run declares."""
    return read_chronology(resources.files("workbench").joinpath(name).read_text(encoding="utf-8"), name)
