"""The seed's console commands, typed into an agent's input: `mem`, `forget KEY`, `forget`."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from workbench.session.views import MAX_KEY_ECHO, quoted

if TYPE_CHECKING:
    from workbench.session.controller import SessionController
    from workbench.ui.chat import ChatPane
    from workbench.ui.forgetting import ForgetFlow


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


async def run_console_command(
    command: ConsoleCommand, pane: ChatPane, session: SessionController, forgetting: ForgetFlow
) -> None:
    """Run a command typed into `pane`: `mem` is answered there; a forget asks first, as a click or F8."""
    state = session.state()
    facts, contract = state.memory.facts, state.status.contract
    if isinstance(command, ShowMemory):
        lines = [f"mem: {len(facts)} fact(s)"] + [
            f"{f.key} = {quoted(f.value)} (turn {f.turn}) quoting {quoted(f.evidence)}" for f in facts
        ]
        await pane.notice("\n".join(lines))
    elif command.key is not None and not contract.allows(command.key):
        foreign = contract.foreign_characters(command.key)
        pane.notify(
            f"{quoted(command.key, MAX_KEY_ECHO)} is not a key{f': {foreign}' if foreign else ''}. "
            f"Keys: {', '.join(contract.keys)}.",
            title="Nothing forgotten",
            severity="error",
            markup=False,
        )
    elif command.key is None:
        await forgetting.ask(session, None)
    else:  # asked even when no fact holds the key now: its values may be in a history or another memory
        await forgetting.ask(session, [command.key], {command.key: [f.value for f in facts if f.key == command.key]})
