"""The chronology file format, validated with pydantic: a story's steps as written, and every problem of
a file in plain words, each naming the step and the field (`workbench.chronology` reads the file through
`validated`, and writes one with the same models)."""

from __future__ import annotations

import re
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
from workbench.memory.shown import quoted

AGENTS = ("support", "logs")
FORGET_ALL = "all"
MAX_PROBE_ID_CHARS = 40
MAX_CHECK_TEXTS = 20
MAX_STEPS = 100_000
_ECHO_CHARS = 40
MAX_WHY_CHARS = 400


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


def _described(error: Any) -> str:
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


def validated(data: object, contract: Contract) -> tuple[ChronologyFile | None, list[str]]:
    """Decoded JSON read as a chronology file under `contract`: the file, or None and every problem, named
    by step and field, the chronology's own first."""
    problems = _story_problems(data, contract)
    try:
        parsed = ChronologyFile.model_validate(data, context={"contract": contract})
    except ValidationError as exc:
        return None, _in_order([_described(e) for e in exc.errors()] + problems)
    if problems:
        return None, _in_order(problems)
    return parsed, []
