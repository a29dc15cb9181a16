"""What a user interface may read from the runtime: memory as it stands after each settled batch,
and the runtime's status in words. Plain data: a screen renders it, nothing reaches back in."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from workbench.runtime.config import Mode

if TYPE_CHECKING:
    from workbench.memory import Fact, MemoryEvent, Outcome

MODE_MEANING = {
    Mode.MANUAL: "the facts block is written into each user message, so history keeps a copy per turn",
    Mode.PROVIDER: "a context provider adds the facts block to each request; history does not keep it",
}
WRITER_MEANING = (
    "the writer is what proposes facts from your key=value declarations (the host verifies every one): "
    "json_schema, json_object and prompt are the output formats asked of a model "
    "('auto' steps down when a server refuses one); 'host parse' reads them without a model call"
)


@dataclass(frozen=True)
class MemorySnapshot:
    """The facts, oldest first, and the ledger's events, oldest first, at one moment."""

    facts: tuple[Fact, ...] = ()
    ledger: tuple[MemoryEvent, ...] = ()


@dataclass(frozen=True)
class MemoryUpdate:
    """One settled batch: its Outcome, and memory as that batch left it."""

    outcome: Outcome
    memory: MemorySnapshot


@dataclass(frozen=True)
class RuntimeStatus:
    model: str
    mode: Mode
    writer: str

    @property
    def summary(self) -> str:
        return f"model: {self.model} · mode: {self.mode} · writer: {self.writer}"

    def explained(self) -> str:
        """The header's words, each said in full."""
        return "\n".join(
            [
                f"model: {self.model}: the model that answers in both panes.",
                f"mode: {self.mode}: {MODE_MEANING[self.mode]}.",
                f"writer: {self.writer}: {WRITER_MEANING}.",
            ]
        )
