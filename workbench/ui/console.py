"""The seed's console commands, typed into an agent's input: `mem`, `forget KEY`, `forget`."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class ShowMemory:
    pass


@dataclass(frozen=True)
class Forget:
    key: str | None


ConsoleCommand = ShowMemory | Forget


def parse_console_command(text: str) -> ConsoleCommand | None:
    """The command a whole input line spells, or None when it is a message for the agent."""
    words = text.split()
    if words == ["mem"]:
        return ShowMemory()
    if words[:1] == ["forget"] and len(words) <= 2:
        return Forget(words[1] if len(words) == 2 else None)
    return None
