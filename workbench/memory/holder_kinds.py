"""What a holder of text may be besides a `Holder` (`workbench.memory.forget`), each a protocol `Forgetting`
checks for, and what a holder's forget raises when it cannot remove what it holds."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Protocol, runtime_checkable


class NotReached(Exception):
    """Raised by a holder's `erase` that has no way to reach what it holds (a memory of a class the
    workbench does not know): said in the report, and no failure. A failure keeps the forget's journal,
    so the next start forgets again; a holder that can never be reached would have every start forget
    again, for ever, and reach it no better."""


UNREACHABLE = "forget cannot reach this"  # what F3, the forget question and the report say of such a holder


STILL_HOLDS = "still holds it"  # how the report begins what a holder looked at again after its forget still holds


class StillHolds(Exception):
    """Raised by a holder's `erase` that looked again after applying the plan and found a forgotten value
    still held: its message names where. A failure (the report says so, `workbench forget` exits 3)."""


@runtime_checkable
class KeepsOutside(Protocol):
    """A holder that may keep what it holds outside what the workbench can see (a provider it does not
    know: a server, a file, another process): the report names it, with what the user can do, whether or
    not what the workbench could see was cleared."""

    @property
    def outside(self) -> str | None: ...


@runtime_checkable
class DoesMore(Protocol):
    """A holder whose forget does a second kind of thing besides removing its `unit`s (a Redis server's
    files rewritten after its lists are deleted): `also_done` says it of its last forget, or None. The
    report counts the units and says this apart (one sum said "3 session list(s) deleted" of one list
    and two files)."""

    @property
    def also_done(self) -> str | None: ...


@runtime_checkable
class Itemised(Protocol):
    """A holder whose forget reaches things outside this process one by one (each id a model service
    returned) and says what became of each: the report lists them (`ForgetReport.outcomes`), and the
    forget's question says beforehand what it will do there (`announced`)."""

    def outcomes(self) -> Mapping[str, str]:
        """What its last forget did to each thing, by its name (an id, never a value)."""
        ...

    @property
    def announced(self) -> str: ...


@runtime_checkable
class Unreachable(Protocol):
    """A holder that can say, before a forget, that the forget cannot reach it (or part of it)."""

    @property
    def unreachable(self) -> str | None:
        """Why a forget cannot reach it, or None when it can."""
        ...
