"""What both of Agent Framework's file-backed memories share as the workbench runs them: a folder of
their own, what each put into an agent's latest turn, and the values their files declare."""

from __future__ import annotations

import asyncio
import json
from abc import ABC, abstractmethod
from collections.abc import Sequence
from pathlib import Path

from agent_framework import ContextProvider, Message

from workbench.memory.forget import ForgetPlan, declared_in
from workbench.memory.turns import current_turn
from workbench.runtime.remembered import HeldItem
from workbench.runtime.view import RecalledMessage

USER_ID = "local-user"  # one user per data directory: both agents share what it holds
SHOWN_AS = "agent memory"  # where a recalled message came from, in the panes

# The purposes a memory's own model calls are recorded under, with the turn that caused them: F2 lists
# them, the pane's usage and the lab's cost columns count them.
EXTRACTION_CALL = "extraction"  # the framework's extracted memory's extraction prompt
CONSOLIDATION_CALL = "consolidation"  # its consolidation prompt
MEM0_CALL = "Mem0"  # Mem0's language model (it extracts memories and decides how to store them)
MEM0_EMBEDDINGS_CALL = "Mem0 embeddings"
MEMORY_CALLS = (EXTRACTION_CALL, CONSOLIDATION_CALL, MEM0_CALL)


class OnTheirAgents:
    """What a memory on the user's own agents answers the runtime (`AgentMemory`): its provider already
    sits on the agent as they configured it, so it adds none, and it loads what the agent reads itself
    (a history, memory files), which the pane shows, so a turn puts in nothing of its own to list."""

    def providers(self, agent: str) -> list[ContextProvider]:
        return []

    def turn_started(self, agent: str) -> None:
        return None

    def recalled(self, agent: str) -> list[RecalledMessage]:
        return []

    async def erase(self, plan: ForgetPlan) -> int:
        raise NotImplementedError

    async def again(self, plan: ForgetPlan) -> int:
        """A turn that ran through a forget has ended: its provider wrote on the old session after the
        forget (a history line, a memory file), so the forget is applied again (`Forgetting.again`)."""
        return await self.erase(plan)


class FileBackedMemory(ABC):
    """An `AgentMemory` (workbench.runtime.memories) whose every byte lives in files under `root`."""

    name: str
    unit: str
    framework_name: str  # the Agent Framework class it runs, for the header

    def __init__(self, root: Path) -> None:
        self.root = root
        self._injected: dict[str, tuple[int, list[Message]]] = {}  # agent: (turn, messages)

    @property
    @abstractmethod
    def folder(self) -> Path:
        """Where this memory's files for the user live (under `root`)."""

    @property
    def location(self) -> str | None:
        return str(self.folder)

    def describe(self) -> str:
        """For the header: counts the files, reads none."""
        return f"{self.framework_name}, {self.file_count()} file(s)"

    @abstractmethod
    def file_count(self) -> int: ...

    @abstractmethod
    def providers(self, agent: str) -> list[ContextProvider]: ...

    @abstractmethod
    def files(self) -> list[HeldItem]:
        """Every file it keeps now, with its content, read now."""

    async def held(self) -> list[HeldItem]:
        return await asyncio.to_thread(self.files)

    @abstractmethod
    async def erase(self, plan: ForgetPlan) -> int: ...

    def injected(self, agent: str, messages: Sequence[Message]) -> None:
        """The provider of `agent` put `messages` into the turn that is starting."""
        turn = current_turn.get()
        self._injected[agent] = (turn.number if turn is not None else 0, list(messages))

    def turn_started(self, agent: str) -> None:
        self._injected.pop(agent, None)

    def recalled(self, agent: str) -> list[RecalledMessage]:
        turn, messages = self._injected.get(agent, (0, []))
        return [RecalledMessage(m.text or "", m.role, 0.0, agent, SHOWN_AS, turn) for m in messages]

    async def declared(self, keys: frozenset[str]) -> set[str]:
        """Every value its files declare for `keys` (`key=value`), names and descriptions included."""
        return declared_in((t for f in self.files() for t in (f.name, f.description, f.content)), keys)

    def _forget_injected(self, plan: ForgetPlan) -> None:
        """What it put into the latest turns holds text too: drop any that holds a forgotten value."""
        for agent, (_, messages) in list(self._injected.items()):
            if plan.everything or any(plan.holds(m.text or "") for m in messages):
                del self._injected[agent]


def line_holds(plan: ForgetPlan, line: str) -> bool:
    """Whether one stored message (a JSON Lines line) holds a forgotten value, in its JSON text or in
    its decoded text (a declaration after a newline is `\\n`-escaped in the line)."""
    if plan.holds(line):
        return True
    try:
        message = Message.from_dict(json.loads(line))
    except (ValueError, TypeError):
        return False
    return plan.holds(message.text or "")
