"""A lab row over an agent memory the lab knows only as an `AgentMemory`: what the product's forget
reaches and what the memory holds are all it reads (`workbench.drift.agentmem_policy` builds it; Mem0's row
is one, with what Mem0 finds kept after each turn)."""

from __future__ import annotations

import tempfile
from pathlib import Path

from agent_framework import Agent, Message

from workbench.build.builder import lab_forget
from workbench.drift.policies import Policy, PolicyInfo, folder_size
from workbench.memory import Contract, WorkingMemory
from workbench.runtime.memories import AgentMemory


class HeldMemoryPolicy(Policy):
    """Both agents over any other agent memory: a forget is the product's, reaching the memory (the lab's
    facts are not its); what it retains is what it holds, read when the lab asks."""

    def __init__(
        self,
        info: PolicyInfo,
        agents: dict[str, Agent],
        memory: AgentMemory,
        folder: tempfile.TemporaryDirectory[str],
        contract: Contract,
    ) -> None:
        super().__init__(info, agents)
        self.memory = memory
        self.forgetting = lab_forget(WorkingMemory(contract), memories=[memory])
        self._folder = folder  # deleted when the policy closes

    async def forget(self, key: str | None) -> None:
        await self.forgetting.forget(key)

    async def close(self) -> None:
        self._folder.cleanup()

    def on_disk(self) -> int | None:
        """Bytes under its folder, or None for a memory that says it keeps nothing on disk (no `location`)."""
        return None if self.memory.location is None else folder_size(Path(self._folder.name))

    async def retained_now(self) -> list[Message]:
        return [Message(role="assistant", contents=[held.content]) for held in await self.memory.held()]
