"""The Mem0 policy: both agents over one Mem0 (mem0ai run locally, as `--agent-memory mem0` runs it) in
a directory of its own that the lab removes afterwards (the lab never touches the user's memories).
Mem0 needs a live model to extract memories and an embeddings server: without them the report says
what it needs instead of a row the built-in script would fake (the lab's `needs` decides). Built, as every
agent memory's row, by `workbench.drift.agentmem_policy.build_agent_memory_policies`."""

from __future__ import annotations

import tempfile

from agent_framework import Agent, Message

from workbench.agentmem.mem0 import Mem0Memory
from workbench.drift.held_policy import HeldMemoryPolicy
from workbench.drift.policies import PolicyInfo, folder_size
from workbench.memory import Contract
from workbench.runtime.remembered import HeldItem

MEM0_NEEDS_MODEL = "needs --model (a live model extracts Mem0's memories; the built-in script would fake them)"
NEEDS_EMBEDDINGS = "needs --embedding-model (Mem0 finds memories by embeddings)"


class Mem0Policy(HeldMemoryPolicy):
    """Each turn: the memories Mem0 finds for the user in the request, no history; after it, Mem0
    extracts memories from the turn. A forget goes through the product's forget, which reaches Mem0 only
    (the lab's facts are not Mem0's)."""

    memory: Mem0Memory

    def __init__(
        self,
        info: PolicyInfo,
        agents: dict[str, Agent],
        memory: Mem0Memory,
        folder: tempfile.TemporaryDirectory[str],
        contract: Contract,
    ) -> None:
        super().__init__(info, agents, memory, folder, contract)
        self.kept: list[HeldItem] = []

    async def answer(self, turn: int, agent: str, text: str) -> str:
        reply = await super().answer(turn, agent, text)
        self.kept = await self.memory.memories()
        return reply

    async def forget(self, key: str | None) -> None:
        await super().forget(key)
        self.kept = await self.memory.memories()

    async def close(self) -> None:
        await self.memory.close()
        await super().close()

    def on_disk(self) -> int | None:
        return folder_size(self.memory.directory)

    def retained(self) -> list[Message]:
        return [Message(role="assistant", contents=[m.content]) for m in self.kept]

    async def retained_now(self) -> list[Message]:
        """What Mem0 found after the last turn or forget (`kept`), not a new read of the server."""
        return self.retained()
