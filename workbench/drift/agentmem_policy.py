"""Agent Framework's own memories as lab policies: model-written memory files (`FileMemoryProvider`)
and the framework's extracted memory (`workbench.agentmem.extracted`). Each sends no chat history, only what its memory
injects, so a cell shows what that memory brings back; each keeps its files in a temporary folder of its
own (the lab never touches the user's), and the product's forget reaches them as in the app."""

from __future__ import annotations

import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path

from agent_framework import Agent, ContextProvider, Message

from workbench.agentmem.base import FileBackedMemory
from workbench.agentmem.extracted import ExtractedMemory, unavailable
from workbench.agentmem.files import FileMemory
from workbench.build.builder import lab_forget
from workbench.drift.policies import NoHistoryProvider, Policy, PolicyInfo, folder_size
from workbench.memory import Contract, WorkingMemory
from workbench.memory.forget import ForgetPlan, TextHolder
from workbench.runtime.agents import AGENT_NAMES, INSTRUCTIONS

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
        self.sessions = {name: a.create_session(session_id=f"drift-{name}") for name, a in agents.items()}
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


def build_agent_memory_policies(infos: Sequence[PolicyInfo], agent: AgentFactory, contract: Contract) -> list[Policy]:
    """The memory-files and extracted-memory policies, by `infos` name; a forget of everything plans
    with `contract`'s keys. On a framework without extracted memory, its policy has no agents: the lab
    does not run it and says why (`workbench.drift.lab.needs`)."""
    policies: list[Policy] = []
    for info in infos:
        if info.needs_extracted_memory and unavailable() is not None:
            policies.append(Policy(info, {}))
            continue
        folder = tempfile.TemporaryDirectory(prefix=f"workbench-drift-{info.name}-")
        root = Path(folder.name)
        memory: FileBackedMemory
        if info.name == "memory_files":
            memory = FileMemory(root)
            agents = {
                role: agent(info.name, [NoHistoryProvider(), *memory.providers(role)], INSTRUCTIONS[role])
                for role in AGENT_NAMES
            }
        else:
            memory = ExtractedMemory(root)  # a history provider itself: it loads no turns (recent_turns=0)
            agents = {role: agent(info.name, memory.providers(role), INSTRUCTIONS[role]) for role in AGENT_NAMES}
        policies.append(AgentMemoryPolicy(info, agents, memory, folder, contract))
    return policies
