"""The agent memories as lab policies, one row per `workbench.agentmem.config.AGENT_MEMORIES` choice that has a
`lab` row: model-written memory files (`FileMemoryProvider`), the framework's extracted memory
(`workbench.agentmem.extracted`), Mem0 (`workbench.drift.mem0_policy`) and any other. Each sends no chat history,
only what its memory injects, so a cell shows what that memory brings back; each is made by its choice over a
temporary folder of its own (the lab never touches the user's), and the product's forget reaches it as in the
app."""

from __future__ import annotations

import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path

from agent_framework import Agent, ContextProvider, HistoryProvider, Message

from workbench.agentmem.base import FileBackedMemory
from workbench.agentmem.config import AGENT_MEMORIES, AgentMemoryConfig
from workbench.agentmem.extracted import unavailable
from workbench.agentmem.mem0 import Mem0Memory
from workbench.agentmem.mem0_config import Mem0Config
from workbench.build.builder import lab_forget
from workbench.drift.held_policy import HeldMemoryPolicy
from workbench.drift.mem0_policy import Mem0Policy
from workbench.drift.policies import NoHistoryProvider, Policy, PolicyInfo, folder_size
from workbench.memory import Contract, WorkingMemory
from workbench.memory.forget import ForgetPlan, TextHolder
from workbench.runtime.agents import AGENT_NAMES, INSTRUCTIONS
from workbench.runtime.memories import AgentMemory

NEEDS_MODEL = "needs --model: only a model that calls functions writes memory files"
NEEDS_LOOP = "needs the function loop: run the lab with workbench drift --model, or the app with --agent-memory"

# policy name, context providers, instructions
AgentFactory = Callable[[str, list[ContextProvider], str], Agent]


class AgentMemoryPolicy(Policy):
    """Both agents over one memory. A forget is the product's: planned from what the conversation and
    the memory's files declare (as the app plans from its facts, sessions and holders), applied to the
    files."""

    def __init__(
        self,
        info: PolicyInfo,
        agents: dict[str, Agent],
        memory: FileBackedMemory,
        folder: tempfile.TemporaryDirectory[str],
        contract: Contract,
    ) -> None:
        super().__init__(info, agents)
        # Named sessions: topic files record the sessions that wrote them, so requests repeat run to run.
        self.agent_sessions = {name: a.create_session(session_id=f"drift-{name}") for name, a in agents.items()}
        self.memory = memory
        self._folder = folder  # deleted when the policy closes
        self.said: list[str] = []
        conversation = TextHolder("conversation", "message(s)", lambda: self.said, self._scrub_said)
        self.forgetting = lab_forget(WorkingMemory(contract), agent_sessions=[conversation], memories=[memory])

    def _scrub_said(self, plan: ForgetPlan) -> int:
        held = [text for text in self.said if plan.everything or plan.holds(text)]
        self.said[:] = [plan.scrub(text) for text in self.said]
        return len(held)

    async def answer(self, turn: int, agent: str, text: str) -> str:
        self.said.append(text)
        return await super().answer(turn, agent, text)

    async def forget(self, key: str | None) -> None:
        await self.forgetting.forget(key)

    async def close(self) -> None:
        self._folder.cleanup()

    def on_disk(self) -> int | None:
        return folder_size(self.memory.root)

    def retained(self) -> list[Message]:
        """Every file the memory keeps, one message each (transcripts included: they stay on disk)."""
        return [Message(role="assistant", contents=[held.content]) for held in self.memory.files()]


# The choices that have a lab row, by the row's name.
_BY_ROW = {choice.lab.name: choice for choice in AGENT_MEMORIES.values() if choice.lab is not None}


def build_agent_memory_policies(
    infos: Sequence[PolicyInfo], agent: AgentFactory, contract: Contract, mem0: Mem0Config | None = None
) -> list[Policy]:
    """The agent memories' policies, by `infos` name, each memory made by its choice over a temporary folder
    of the lab's own; a forget of everything plans with `contract`'s keys; `mem0` is Mem0's model and
    embedder. A policy that cannot be built here has no agents, and the lab does not run it and says why
    (`workbench.drift.lab.needs`): on a framework without extracted memory, or Mem0 without `mem0`."""
    policies: list[Policy] = []
    for info in infos:
        if info.needs_extracted_memory and unavailable() is not None:
            policies.append(Policy(info, {}))
            continue
        choice = _BY_ROW[info.name]
        folder = tempfile.TemporaryDirectory(prefix=f"workbench-drift-{info.name}-", ignore_cleanup_errors=True)
        root = Path(folder.name)
        memory = choice.make(AgentMemoryConfig(choice.name, root, mem0), root)
        if memory is None:
            folder.cleanup()
            policies.append(Policy(info, {}))
            continue

        def providers(role: str, memory: AgentMemory = memory) -> list[ContextProvider]:
            # A memory that is a history provider itself loads its own (extracted memory: no turns);
            # any other gets one that holds nothing, so the agent adds no in-memory history of its own.
            own = memory.providers(role)
            return own if any(isinstance(p, HistoryProvider) for p in own) else [NoHistoryProvider(), *own]

        agents = {role: agent(info.name, providers(role), INSTRUCTIONS[role]) for role in AGENT_NAMES}
        if isinstance(memory, FileBackedMemory):
            policies.append(AgentMemoryPolicy(info, agents, memory, folder, contract))
        elif isinstance(memory, Mem0Memory):
            policies.append(Mem0Policy(info, agents, memory, folder, contract))
        else:
            policies.append(HeldMemoryPolicy(info, agents, memory, folder, contract))
    return policies
