"""Chronologies: the public file format the drift lab replays and the session exports, validated with
pydantic, and what a chronology implies at each probe (the values the user's own declarations make
current, superseded or forgotten). The built-in chronology loads through the same path as a user's
file. Beside the memory contract, below both the session and the lab, which are peers: neither
imports the other."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field, replace
from importlib import resources
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    ValidationInfo,
    field_validator,
    model_validator,
)
from pydantic_core import PydanticCustomError

from workbench.memory import MAX_MESSAGE_CHARS, SEED, Contract, declares_anything, parse_declarations
from workbench.memory.rules import admissible_as_declared
from workbench.memory.shown import quoted

AGENTS = ("support", "logs")
FORGET_ALL = "all"
MAX_PROBE_ID_CHARS = 40
MAX_CHECK_TEXTS = 20
MAX_STEPS = 100_000
# The longest story `--turns` and `--sweep` stretch to. Full history resends every earlier message at
# every turn, and persisted history and extracted memory re-read their whole files, so a run grows with
# the square of its length: 1,000 turns took 349 s on the built-in model at load 3 (docs/scoring.md).
MAX_TURNS = 2_000
_ECHO_CHARS = 40
MAX_WHY_CHARS = 400


class ChronologyError(ValueError):
    """A chronology that cannot be run: one line per problem, each naming the step and the field."""

    def __init__(self, source: str, problems: list[str]) -> None:
        self.source = source
        self.problems = problems
        count = f"{len(problems)} problem{'s' if len(problems) != 1 else ''}"
        super().__init__(f"{source}: {count}\n" + "\n".join(f"  {p}" for p in problems))


def _rule(field_name: str, message: str) -> PydanticCustomError:
    return PydanticCustomError("chronology_rule", "{message}", {"field": field_name, "message": message})


Say = Annotated[str, Field(min_length=1, max_length=MAX_MESSAGE_CHARS)]
CheckText = Annotated[str, Field(min_length=1, max_length=256)]


class StepFile(BaseModel):
    """One step as written in a chronology file."""

    model_config = ConfigDict(extra="forbid", strict=True)

    say: Say | None = None
    agent: Literal["support", "logs"] = "support"
    forget: str | None = None
    probe: Annotated[str, Field(min_length=1, max_length=MAX_PROBE_ID_CHARS)] | None = None
    expect: Annotated[list[CheckText], Field(max_length=MAX_CHECK_TEXTS)] | None = None
    expect_any: Annotated[list[CheckText], Field(min_length=1, max_length=MAX_CHECK_TEXTS)] | None = None
    forbid: Annotated[list[CheckText], Field(max_length=MAX_CHECK_TEXTS)] | None = None
    about_prohibition: bool | None = None
    why: Annotated[str, Field(min_length=1, max_length=MAX_WHY_CHARS)] | None = None

    @field_validator("say")
    @classmethod
    def _not_blank(cls, value: str | None) -> str | None:
        if value is not None and not value.strip():
            raise ValueError("a message must contain more than spaces")
        return value

    @field_validator("forget")
    @classmethod
    def _known_key(cls, value: str | None, info: ValidationInfo) -> str | None:
        contract = _contract(info)
        if value is not None and value != FORGET_ALL and not contract.allows(value):
            raise ValueError(
                f"{_echo(value)} is not a key that can be forgotten; use one of "
                f"{', '.join(contract.keys)}, or {quoted(FORGET_ALL)}"
            )
        return value

    @model_validator(mode="after")
    def _coherent(self) -> StepFile:
        if self.probe is not None and self.say is None:
            raise _rule("probe", "a probe needs a question in 'say'")
        if self.say is None and self.forget is None:
            raise _rule("say", "a step needs a message in 'say', a 'forget', or both")
        for name in ("expect", "expect_any", "forbid", "about_prohibition", "why"):
            if getattr(self, name) is not None and self.probe is None:
                raise _rule(name, f"'{name}' belongs to a probe: add 'probe' to this step")
        if self.probe is not None and self.say is not None and declares_anything(self.say):
            raise _rule("probe", "a probe is a question: its message must declare nothing (no key=value)")
        return self


class ChronologyFile(BaseModel):
    """A chronology file: its story, and what `--turns` inserts to stretch it."""

    model_config = ConfigDict(extra="forbid", strict=True)

    name: Annotated[str, Field(min_length=1, max_length=80)]
    description: Annotated[str, Field(max_length=2_000)] = ""
    prohibition_key: str | None = None
    filler: Annotated[str, Field(max_length=MAX_MESSAGE_CHARS - 20)] = ""
    fillers_after: Annotated[int, Field(ge=0)] = 0
    steps: Annotated[list[StepFile], Field(min_length=1, max_length=MAX_STEPS)]

    @model_validator(mode="after")
    def _prohibition_named(self) -> ChronologyFile:
        if self.prohibition_key is None and any(s.about_prohibition for s in self.steps):
            raise _rule("prohibition_key", "a probe about the prohibition needs the chronology's 'prohibition_key'")
        return self

    @field_validator("prohibition_key")
    @classmethod
    def _allowed(cls, value: str | None, info: ValidationInfo) -> str | None:
        contract = _contract(info)
        if value is not None and not contract.allows(value):
            raise ValueError(f"{_echo(value)} is not an allowed key ({', '.join(contract.keys)})")
        return value

    @field_validator("filler")
    @classmethod
    def _declares_nothing(cls, value: str) -> str:
        if declares_anything(value):
            raise ValueError("a filler turn must declare nothing (no key=value)")
        if value and "{n}" not in value:
            raise ValueError("a filler must contain {n}, the filler's number, so no two filler turns are alike")
        return value


def _contract(info: ValidationInfo) -> Contract:
    """The contract a chronology is read under (`parse_chronology`'s), handed to validation as its context."""
    context = info.context if isinstance(info.context, dict) else {}
    contract = context.get("contract", SEED)
    return contract if isinstance(contract, Contract) else SEED


def _echo(text: str) -> str:
    """A user's text quoted for an error message: as typed, bounded, invisible characters escaped."""
    return quoted(text, _ECHO_CHARS)


def _where(loc: tuple[int | str, ...]) -> tuple[str, str | None]:
    if len(loc) >= 2 and loc[0] == "steps" and isinstance(loc[1], int):
        field_name = next((str(p) for p in loc[2:] if isinstance(p, str)), None)
        return f"step {loc[1] + 1}", field_name
    return "chronology", str(loc[0]) if loc else None


_FIELDS = {"step": tuple(StepFile.model_fields), "chronology": tuple(ChronologyFile.model_fields)}


# Choices of the fields that take one of a few texts, for a plain "should be one of" sentence.
_CHOICES = {"agent": AGENTS}


def _kind(value: object) -> str:
    """What a JSON value is, in the words of the format: never a Python type name."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true or false"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "text"
    if isinstance(value, list):
        return "a list"
    return "an object"


def _plural(count: int, word: str) -> str:
    return f"{count:,} {word}{'' if count == 1 else 's'}"


def _plain(error: Any, field_name: str | None) -> str:
    """A validation error in plain words: what the field should be and, where it helps, what it is."""
    kind, ctx, value = error["type"], error.get("ctx") or {}, error.get("input")
    got = f", not {_kind(value)}"
    if kind in ("model_type", "model_attributes_type", "dict_type"):
        return "should be a JSON object ({...})" + got
    if kind == "string_type":
        return "should be text (a JSON string)" + got
    if kind in ("int_type", "int_parsing", "int_from_float"):
        return "should be a whole number" + got
    if kind == "list_type":
        return "should be a list ([...])" + got
    if kind == "string_too_short":
        return "must not be empty"
    if kind == "string_too_long":
        return f"has {_plural(len(value), 'character')}; at most {ctx['max_length']:,}"
    if kind == "too_short":
        return f"needs at least {_plural(ctx['min_length'], 'item')}"
    if kind == "too_long":
        return f"has {_plural(ctx['actual_length'], 'item')}; at most {ctx['max_length']:,}"
    if kind == "greater_than_equal":
        return f"should be {ctx['ge']} or more"
    if kind == "literal_error" and field_name in _CHOICES:
        return f"should be one of {', '.join(quoted(c) for c in _CHOICES[field_name])}, not {_echo(str(value))}"
    if kind == "value_error":
        return str(ctx.get("error") or "is not valid here")
    return "is not valid here"


def _describe(error: Any) -> str:
    place, field_name = _where(tuple(error["loc"]))
    kind = "step" if place.startswith("step") else "chronology"
    if error["type"] == "chronology_rule":
        field_name = error["ctx"]["field"]
        message = error["ctx"]["message"]
    elif error["type"] == "extra_forbidden":
        message = f"unknown field; a {kind} has {', '.join(_FIELDS[kind])}"
    elif error["type"] == "missing":
        message = "required"
    else:
        message = _plain(error, field_name)
    named = f", field {_echo(field_name)}" if field_name else ""
    return f"{place}{named}: {message}"


def _story_problems(data: object, contract: Contract) -> list[str]:
    """Problems of the story as a whole, read from the decoded JSON as far as it goes, so they are
    listed with the field problems instead of only when there are none."""
    if not isinstance(data, dict) or not isinstance(steps := data.get("steps"), list) or not steps:
        return []
    problems = _other_contract(steps, contract)
    seen: dict[str, int] = {}
    for number, step in enumerate(steps, 1):
        probe = step.get("probe") if isinstance(step, dict) else None
        if not isinstance(probe, str):
            continue
        if probe in seen:
            problems.append(f'step {number}, field "probe": {_echo(probe)} is already step {seen[probe]}\'s')
        seen.setdefault(probe, number)
    fillers_after = data.get("fillers_after")
    if isinstance(fillers_after, int) and not isinstance(fillers_after, bool) and fillers_after > len(steps):
        problems.append(f'chronology, field "fillers_after": {fillers_after} is past the last step ({len(steps)})')
    if not any(isinstance(step, dict) and "probe" in step for step in steps):
        problems.append('chronology, field "steps": no step is a probe, so nothing would be scored')
    return problems


def _other_contract(steps: list[object], contract: Contract) -> list[str]:
    """A story whose messages declare keys, none of them the contract's, would only be rejected at every
    turn: it was written for another contract (the seed's story under a team's, say). A story that also
    declares an unknown key now and then (a batch the app rejects) is one the lab can replay."""
    says = [step.get("say") for step in steps if isinstance(step, dict)]
    declared = {key for say in says if isinstance(say, str) for key in parse_declarations(say)}
    if not declared or any(contract.allows(key) for key in declared):
        return []
    named = ", ".join(_echo(key) for key in sorted(declared)[:6]) + (", ..." if len(declared) > 6 else "")
    return [
        f'chronology, field "steps": its messages declare only keys outside the contract ({named}); '
        f"the contract's keys are {', '.join(contract.keys)} (workbench.toml or --keys)"
    ]


def _in_order(problems: list[str]) -> list[str]:
    """The chronology's own problems first, then each step's, in step order (stable within a step)."""
    step = re.compile(r"step (\d+)")
    return sorted(problems, key=lambda p: int(m[1]) if (m := step.match(p)) else 0)


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
    problems = _story_problems(data, contract)
    try:
        parsed = ChronologyFile.model_validate(data, context={"contract": contract})
    except ValidationError as exc:
        problems = [_describe(e) for e in exc.errors()] + problems
    if problems:
        raise ChronologyError(source, _in_order(problems))
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
