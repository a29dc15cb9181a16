"""The Mem0 policy: both agents over one Mem0 (mem0ai run locally, as `--agent-memory mem0` runs it) in
a directory of its own that the lab removes afterwards (the lab never touches the user's memories).
Mem0 needs a live model to extract memories and an embeddings server: without them the report says
what it needs instead of a row the built-in script would fake (the lab's `needs` decides)."""

from __future__ import annotations

import shutil
import tempfile
from dataclasses import replace
from pathlib import Path

from agent_framework import Agent, Message

from workbench.agentmem.mem0 import Mem0Memory
from workbench.agentmem.mem0_config import Mem0Config
from workbench.build.builder import lab_forget
from workbench.drift.agentmem_policy import AgentFactory
from workbench.drift.policies import NoHistoryProvider, Policy, PolicyInfo, folder_size
from workbench.memory import Contract, WorkingMemory
from workbench.runtime.agents import AGENT_NAMES, INSTRUCTIONS
from workbench.runtime.remembered import HeldItem

MEM0_NEEDS_MODEL = "needs --model (a live model extracts Mem0's memories; the built-in script would fake them)"
NEEDS_EMBEDDINGS = "needs --embedding-model (Mem0 finds memories by embeddings)"


class Mem0Policy(Policy):
    """Each turn: the memories Mem0 finds for the user in the request, no history; after it, Mem0
    extracts memories from the turn. A forget goes through the product's forget, which reaches Mem0."""

    def __init__(
        self, info: PolicyInfo, agents: dict[str, Agent], memory: Mem0Memory, folder: Path, contract: Contract
    ) -> None:
        super().__init__(info, agents)
        self.memory = memory
        # The lab's facts are not Mem0's: only Mem0.
        self.forgetting = lab_forget(WorkingMemory(contract), memories=[memory])
        self.kept: list[HeldItem] = []
        self._folder = folder

    async def answer(self, turn: int, agent: str, text: str) -> str:
        reply = await super().answer(turn, agent, text)
        self.kept = await self.memory.memories()
        return reply

    async def forget(self, key: str | None) -> None:
        await self.forgetting.forget(key)
        self.kept = await self.memory.memories()

    async def close(self) -> None:
        await self.memory.close()
        shutil.rmtree(self._folder, ignore_errors=True)

    def on_disk(self) -> int | None:
        return folder_size(self.memory.directory)

    def retained(self) -> list[Message]:
        return [Message(role="assistant", contents=[m.content]) for m in self.kept]


def build_mem0_policy(info: PolicyInfo, agent: AgentFactory, mem0: Mem0Config | None, contract: Contract) -> Policy:
    """Mem0 over `mem0`'s model and embedder; without them a policy with no agents, which the lab
    does not run (it reports what the policy needs)."""
    if mem0 is None:
        return Policy(info, {})
    folder = Path(tempfile.mkdtemp(prefix="workbench-drift-mem0-"))
    memory = Mem0Memory(replace(mem0, directory=folder / "mem0"))
    agents = {
        role: agent(info.name, [NoHistoryProvider(), *memory.providers(role)], INSTRUCTIONS[role])
        for role in AGENT_NAMES
    }
    return Mem0Policy(info, agents, memory, folder, contract)
