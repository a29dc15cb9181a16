"""What the runtime needs of a memory it gives both agents beside the facts (retrieved chat history
today). The runtime imports no such memory: the app's assembly builds one and hands it in, so the
arrows point down (`recall` uses the runtime, never the other way)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from agent_framework import ContextProvider

    from workbench.memory.forget import ForgetPlan
    from workbench.runtime.remembered import HeldItem
    from workbench.runtime.view import RecalledMessage


class AgentMemory(Protocol):
    """A memory both agents read through context providers, shown in the header and in "What is
    remembered", and forgotten through the one forget (it is a `workbench.memory.forget.Holder` and a
    `workbench.runtime.remembered.Remembers`)."""

    @property
    def name(self) -> str: ...

    @property
    def unit(self) -> str: ...

    @property
    def location(self) -> str | None:
        """Where it keeps what it holds (a file), if anywhere; shown in full by F1."""
        ...

    def describe(self) -> str:
        """Short enough for the header."""
        ...

    def providers(self, agent: str) -> list[ContextProvider]: ...

    def turn_started(self, agent: str) -> None:
        """`agent` starts a turn: what it put into the agent's previous turn is no longer current."""
        ...

    def recalled(self, agent: str) -> list[RecalledMessage]:
        """What it put into `agent`'s latest turn."""
        ...

    async def held(self) -> list[HeldItem]:
        """Everything it holds now, read now (nothing when it has nothing to reach yet)."""
        ...

    async def declared(self, keys: frozenset[str]) -> set[str]: ...

    async def erase(self, plan: ForgetPlan) -> int: ...
