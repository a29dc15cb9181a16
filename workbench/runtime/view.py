"""What a user interface may read from the runtime: memory as it stands after each settled batch,
and the runtime's status in words. Plain data: a screen renders it, nothing reaches back in."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from typing import TYPE_CHECKING

from workbench.files import home_relative
from workbench.memory.contract import SEED, Contract
from workbench.runtime.config import Mode

if TYPE_CHECKING:
    from workbench.memory import Fact, MemoryEvent, Outcome
    from workbench.memory.forget import ForgetPlan

MODE_MEANING = {
    Mode.MANUAL: "the facts block is written into each user message, so history keeps a copy per turn",
    Mode.PROVIDER: "a context provider adds the facts block to each request; history does not keep it",
}
WRITER_MEANING = (
    "the writer is what proposes facts from your key=value declarations (the host verifies every one): "
    "json_schema, json_object and prompt are the output formats asked of a model "
    "('auto' steps down when a server refuses one); 'host parse' reads them without a model call"
)

RECALL_MEANING = (
    "every message is stored with its embedding and the most similar ones, from both agents and earlier "
    "sessions, are recalled into each request as quoted data; unbounded and unverified, unlike the facts"
)


_BRACKETED = re.compile(r" \([^()]*\)")  # a model label's explanation, "scripted (built-in; ...)"

# The origins of the writer's notes in the ledger, which the app titles in words.
WRITER_FAILING = "writer failing"
WRITER_SWITCHED = "writer switched"
NOT_SAVED = "persist"  # the origin of the ledger's note that a save of the persisted sessions failed
SAVED_AGAIN = "saved again"  # the origin of its note once a save succeeds after failing


@dataclass(frozen=True)
class MemorySnapshot:
    """The facts, oldest first, and the ledger's events, oldest first, at one moment."""

    facts: tuple[Fact, ...] = ()
    ledger: tuple[MemoryEvent, ...] = ()

    def redacted(self, plan: ForgetPlan) -> MemorySnapshot:
        """This moment without what the forget `plan` removes, by memory's own rules for facts and events."""
        return MemorySnapshot(plan.kept(self.facts), tuple(map(plan.redact, self.ledger)))


@dataclass(frozen=True)
class MemoryUpdate:
    """One settled batch: its Outcome, and memory as that batch left it."""

    outcome: Outcome
    memory: MemorySnapshot

    def redacted(self, plan: ForgetPlan) -> MemoryUpdate:
        outcome = replace(self.outcome, events=tuple(map(plan.redact, self.outcome.events)))
        return MemoryUpdate(outcome, self.memory.redacted(plan))


CONTRACT_MEANING = "the contract declared for this run (workbench.toml or --keys), not the seed's"
PERSIST_MEANING = (
    "both agents' histories, the facts with their provenance, the ledger and the turn counters are kept in "
    "files readable by you only and resumed by the next `workbench --persist`; a forget rewrites or removes "
    "every file that held a forgotten value"
)


@dataclass(frozen=True)
class Persisted:
    """Where the sessions are kept on disk and what start-up resumed from there."""

    directory: str
    messages: int = 0  # resumed, both agents together
    facts: int = 0
    resumed: bool = False
    failure: str | None = None  # the latest write that failed, bounded and scrubbed by the caller
    saved_at: datetime | None = None  # when the sessions resumed were last saved (local time)
    # The messages of sessions saved under another shape (mode and recall) than the start's, kept in the
    # file, not resumed: each (that shape, how many); and the start's shape.
    kept: tuple[tuple[str, int], ...] = ()
    shape: str = ""

    @property
    def part(self) -> tuple[str, str]:
        if self.failure:
            return "persist", f"NOT saving: {self.failure}"
        if self.resumed:
            return "resumed", f"{self.messages:,} message(s), {self.facts:,} fact(s){self.not_resumed}"
        return "persist", f"on{self.not_resumed}" if self.kept else "on, nothing to resume"

    @property
    def not_resumed(self) -> str:
        """What the file keeps and this start did not resume, as the header says it after what it resumed."""
        if not self.kept:
            return ""
        saved = "; ".join(
            f"{n:,} message(s) saved under {shape}{' before the sessions resumed' if shape == self.shape else ''}"
            for shape, n in self.kept
        )
        hint = " (start with those options to resume them)" if any(s != self.shape for s, _ in self.kept) else ""
        return f"; kept, not resumed: {saved}{hint}"


@dataclass(frozen=True)
class ResumedMessage:
    """One message of a resumed conversation: "user" as the user typed it, "assistant" as the agent answered."""

    role: str
    text: str


@dataclass(frozen=True)
class ResumedHistory:
    """One agent's conversation as start-up resumed it from disk (`--persist`), oldest first: what the
    agent's history still holds of the earlier run, for its pane to show."""

    agent: str
    directory: str  # where it was kept
    saved_at: datetime | None
    messages: tuple[ResumedMessage, ...]

    @property
    def opening(self) -> str:
        when = f", saved {self.saved_at:%Y-%m-%d %H:%M}" if self.saved_at else ""
        return (
            f"Resumed from {home_relative(self.directory)}{when}: the {self.agent} agent's earlier conversation, "
            f"{len(self.messages):,} message(s). It still sees all of it."
        )

    closing = "End of the resumed conversation."


def joined(names: Sequence[str]) -> str:
    """ "triage", "triage and notes", "a, b and c"."""
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} and {names[-1]}"


@dataclass(frozen=True)
class RuntimeStatus:
    model: str
    mode: Mode
    writer: str
    recall: str | None = None  # store and embedder, when recall is on
    recall_file: str | None = None
    memories: tuple[str, ...] = ()  # the other memories both agents run, each "name: description"
    persisted: Persisted | None = None  # with --persist
    completed: str | None = None  # a forget a crash cut short, completed at start
    contract: Contract = SEED  # memory's: named in the header when it is not the seed's
    memory_names: tuple[str, ...] = ()  # the memories' names alone, for a narrow header
    # The panes, when they are the user's agents (their names; empty: the built-in pair), and the agents each
    # of `memories` serves, in its order (empty: every agent), so F1 names them instead of "both agents".
    agents: tuple[str, ...] = ()
    serves: tuple[tuple[str, ...], ...] = ()
    writer_failing: bool = False  # the writer model kept failing the contract (the palette offers the host's parse)

    def _parts(self) -> list[tuple[str, str]]:
        parts = [("forget", self.completed)] if self.completed else []
        parts += [("model", self.model), ("mode", str(self.mode)), ("writer", self.writer)]
        parts += [] if self.contract.is_seed else [("keys", ", ".join(self.contract.keys))]
        parts += [("recall", self.recall)] if self.recall else []
        parts += [("memory", m) for m in self.memories]
        if self.persisted is None:
            return parts
        # A failing save comes first: a narrow header cuts the end, and the header is where it is said.
        return [self.persisted.part, *parts] if self.persisted.failure else [*parts, self.persisted.part]

    @property
    def summary(self) -> str:
        return " · ".join(f"{label}: {value}" for label, value in self._parts())

    @property
    def ranked(self) -> tuple[str, ...]:
        """The summary's parts for a narrow header, what matters first, each as short as it is clear: a
        failing save, what was resumed, a forget completed at start; then recall and the memories (by
        name: F1 says what each holds); then model (without its parenthesis), mode, writer and the
        contract's keys; last, a persistence that has nothing to say."""
        return self.shortened(labelled=False)

    def shortened(self, *, labelled: bool, memories_named: bool = True) -> tuple[str, ...]:
        """`ranked`'s parts; `labelled`: model, mode and writer named, for a header with room for its
        title but not for the whole summary (the memories' descriptions are what make it long); without
        `memories_named`, the memories counted in one part ("2 memories (F1)")."""
        persisted = [": ".join(self.persisted.part)] if self.persisted is not None else []
        urgent = self.persisted is not None and bool(
            self.persisted.failure or self.persisted.resumed or self.persisted.kept
        )
        completed = [self.completed.partition(" cut short at ")[0]] if self.completed else []
        first = [*(persisted if urgent else []), *completed, *([f"recall: {self.recall}"] if self.recall else [])]
        memories = self.memory_names or self.memories
        first += (
            memories
            if memories_named or not memories
            else [f"{len(memories)} memor{'y' if len(memories) == 1 else 'ies'} (F1)"]
        )
        rest = [_BRACKETED.sub("", self.model), str(self.mode), self.writer]
        if labelled:
            rest = [f"{label}: {value}" for label, value in zip(("model", "mode", "writer"), rest, strict=True)]
        rest += [] if self.contract.is_seed else [f"keys: {', '.join(self.contract.keys)}"]
        return (*first, *rest, *([] if urgent else persisted))

    @property
    def _answers(self) -> str:
        if not self.agents:
            return "the model that answers in both panes"
        if len(self.agents) == 1:
            return f"the model {self.agents[0]} answers on"
        return f"the model each of {joined(self.agents)} answers on"

    def _whom(self, index: int) -> str:
        """Which agents memory `index` serves, in words: "both agents" for the built-in pair."""
        if not self.agents:
            return "both agents"
        serves = self.serves[index] if index < len(self.serves) else ()
        return f"used by {joined(serves or self.agents)}"

    def explained(self) -> str:
        """The header's words, each said in full."""
        return "\n".join(
            [
                f"model: {self.model}: {self._answers}.",
                f"mode: {self.mode}: {MODE_MEANING[self.mode]}.",
                f"writer: {self.writer}: {WRITER_MEANING}.",
                *([] if self.contract.is_seed else [f"keys: {CONTRACT_MEANING}: {self.contract.describe()}."]),
                *([f"recall: on ({self.recall}): {RECALL_MEANING}."] if self.recall else []),
                *(
                    [f"recall file: {self.recall_file} (it holds your words; forget purges it)."]
                    if self.recall_file
                    else []
                ),
                *(f"memory: {m} ({self._whom(i)}; forget reaches it)." for i, m in enumerate(self.memories)),
                *(
                    [f"{': '.join(self.persisted.part)}: {PERSIST_MEANING}; the files: {self.persisted.directory}."]
                    if self.persisted
                    else []
                ),
            ]
        )


@dataclass(frozen=True)
class RecalledMessage:
    """One message recall put into a turn: its distance (lower is closer), where it was stored, its text."""

    text: str
    role: str
    distance: float
    agent: str
    agent_session: str  # "this session", "session 2 of this run", or "an earlier run"
    turn: int
