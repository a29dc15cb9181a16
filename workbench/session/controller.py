"""What the app does besides drawing: ask, forget, export, switch mode or recall. No Textual here:
the app turns key presses into these calls and draws what they return."""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Coroutine, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from workbench.files import write_private
from workbench.memory.forget import ForgetPlan, Holder, TextHolder, declared_in
from workbench.memory.holder_kinds import Itemised, KeepsOutside
from workbench.memory.rules import check_message
from workbench.session.transcript import Transcript
from workbench.text import visible

if TYPE_CHECKING:
    from workbench.chronology import Chronology
    from workbench.drift import DriftReport
    from workbench.drift.lab import Progress
    from workbench.memory import Contract
    from workbench.memory.forget import ForgetReport
    from workbench.runtime import CallRecord, ContextSplit, Mode, TurnResult, Usage
    from workbench.runtime.agents import AgentRuntime
    from workbench.runtime.remembered import Remembered, RememberedSystem
    from workbench.runtime.view import MemorySnapshot, MemoryUpdate, RecalledMessage, ResumedHistory, RuntimeStatus

# Receives each settled batch that is not part of an asked turn's outcome (a forget, a note, a
# cancelled turn's abandonment).
Listener = Callable[["MemoryUpdate"], None]


@dataclass(frozen=True)
class TurnOutcome:
    """Everything one turn changed: the result, what recall put into the turn, and the batches memory
    settled for it (with memory as each left it)."""

    result: TurnResult
    recalled: tuple[RecalledMessage, ...] = ()
    memory: tuple[MemoryUpdate, ...] = ()

    @property
    def refused(self) -> tuple[str, ...] | None:
        """Why memory refused the turn's batch (the contract's words, no user text), or None."""
        from workbench.memory import EventKind

        rejected = [e for u in self.memory for e in u.outcome.events if e.kind is EventKind.REJECTED]
        return tuple(sorted({r.generic for e in rejected for r in e.reasons})) if rejected else None


@dataclass(frozen=True)
class ForgetPreview:
    """What a forget will remove, before it is asked: `keys` None for everything; `removed` every fact
    that goes, `also` those of them not asked for (their values hold a forgotten one), `kept` how many
    facts stay, `reaches` the memories it empties or removes values from beside working memory and the
    agents' histories (the persisted sessions, the recall store while recall is on, the other memories),
    `agents` the panes whose sessions it replaces, `unreached` those it cannot reach, named before the
    user answers: a holder the workbench does not know, or a store that could not be read (with why),
    which the forget will try and report."""

    keys: tuple[str, ...] | None
    removed: tuple[str, ...]
    also: tuple[str, ...]
    kept: int
    reaches: tuple[str, ...]
    agents: tuple[str, ...]  # the panes whose sessions it replaces (the question counts them)
    unreached: tuple[str, ...] = ()  # memories it cannot reach (a provider it does not know, a store unread)
    # For a forget of keys, each of `reaches` as what is remembered now shows it (F3): True when it holds
    # a value the forget removes, False when it holds none, None when that is not known (it could not be
    # read, or keeps what this process does not see). Empty for a forget of everything, which empties them.
    holding: Mapping[str, bool | None] = field(default_factory=dict)


def _holding(system: RememberedSystem | None, keys: set[str], *, outside: bool) -> bool | None:
    """Whether `system` holds a value of `keys` now (True), none (False), or that is not known (None): it
    could not be read, or some of what it keeps is not seen here (a service's, one outside this process)."""
    if system is None or system.unread is not None:
        return None
    if keys & set(system.keys):
        return True
    return None if outside or any(item.unknown for item in system.items) else False


@dataclass(frozen=True)
class Exported:
    path: str
    steps: int
    probes: int


class Saving(Protocol):
    """Where a run is kept on disk (`--persist`): asked on quit whether everything is saved."""

    def save_again(self) -> str | None:
        """Try once more to write what a failed save did not; what still is not, in one line, or None."""
        ...


class UndoHistory(Protocol):
    """What a user interface's input keeps of what was typed and sent (its undo steps)."""

    def undo_texts(self) -> list[str]: ...

    def forget_undo(self) -> int: ...


@dataclass
class Drafts:
    """The inputs' undo histories as a holder of text: they keep every message sent (and what was typed
    and deleted). The assembly registers it; a user interface attaches where its inputs are."""

    name = "input undo"
    unit = "edit(s) cleared"
    inputs: Callable[[], Iterable[UndoHistory]] = lambda: ()

    def attach(self, inputs: Callable[[], Iterable[UndoHistory]]) -> None:
        self.inputs = inputs

    async def declared(self, keys: frozenset[str]) -> set[str]:
        return declared_in((text for i in self.inputs() for text in i.undo_texts()), keys)

    async def erase(self, plan: ForgetPlan) -> int:
        # Undo steps are pieces of typing, not whole texts a plan could scrub: every one of them goes.
        return sum(i.forget_undo() for i in self.inputs())


class SessionController:
    """One session: the runtime, the transcript the drift lab replays, the batches of turns still
    running here and the inputs' drafts. Built by the one assembly (`workbench.session.assemble`), which
    registers every holder of text with the one forget, these (`holders`) among them."""

    def __init__(self, runtime: AgentRuntime, saving: Saving | None = None) -> None:
        self.runtime = runtime
        self._saving = saving
        self.transcript = Transcript()
        self.drafts = Drafts()
        self._asking: dict[str, list[MemoryUpdate]] = {}
        self._applied_unfinished: set[str] = set()
        self._listeners: list[Listener] = []
        self._unsubscribe = runtime.subscribe(self._settled)
        self._closing: list[Callable[[], None]] = []

    @property
    def contract(self) -> Contract:
        """The contract memory holds (the seed's, or a team's own): the keys, facts and value length
        every surface shows and checks."""
        return self.runtime.memory.contract

    @property
    def holders(self) -> tuple[Holder, ...]:
        """The holders of text the session keeps, in the order a forget reaches them."""
        in_flight = TextHolder("turns in flight", "held batch(es) redacted", self._held_texts, self._redact_held)
        return (self.transcript, in_flight, self.drafts)

    def subscribe(self, listener: Listener) -> Callable[[], None]:
        """Call `listener` with each settled batch that no `ask` returns (a forget, a note, a cancelled
        turn's); an asked turn's own batches come back in its TurnOutcome. Returns the unsubscribe."""
        self._listeners.append(listener)
        return lambda: self._listeners.remove(listener) if listener in self._listeners else None

    def _settled(self, update: MemoryUpdate) -> None:
        origins = {e.origin for e in update.outcome.events}
        if len(origins) == 1 and (batches := self._asking.get(next(iter(origins)))) is not None:
            batches.append(update)
            return
        for listener in list(self._listeners):
            listener(update)

    def _held_texts(self) -> list[str]:
        """What the batches of running turns quote (their facts and events): memory knew it too."""
        return [f.evidence for batches in self._asking.values() for u in batches for f in u.memory.facts]

    def _redact_held(self, plan: ForgetPlan) -> int:
        """A forget while a turn runs: the batches it settled so far, held for its outcome, lose what
        the forget removed, as memory itself did."""
        count = 0
        for batches in self._asking.values():
            count += len(batches)
            batches[:] = [update.redacted(plan) for update in batches]
        return count

    @staticmethod
    def refusal(text: str) -> str | None:
        """Why `text` cannot be sent, in words (the same check admission makes), or None."""
        reason = check_message(text)
        return None if reason is None else reason.detail

    def ask(
        self, agent: str, text: str, on_text: Callable[[str], Awaitable[None] | None] | None = None
    ) -> Coroutine[Any, Any, TurnOutcome]:
        """One turn of `agent` (one at a time per agent), asked at this call (`AgentRuntime.ask`: it starts
        after every forget asked before); its settled batches come back in the outcome. If it is cancelled
        or raises, they go to the listeners instead, before the exception goes on."""
        self.transcript.said(agent, text)
        return self._ask(agent, self.runtime.ask(agent, text, on_text=on_text))

    async def _ask(self, agent: str, asked: Awaitable[TurnResult]) -> TurnOutcome:
        batches: list[MemoryUpdate] = []
        self._asking[agent] = batches
        self._applied_unfinished.discard(agent)
        try:
            result = await asked
        except BaseException:
            if any(update.outcome.applied for update in batches):
                self._applied_unfinished.add(agent)
            for update in batches:
                for listener in list(self._listeners):
                    listener(update)
            raise
        finally:
            del self._asking[agent]
        return TurnOutcome(result, tuple(self.runtime.recalled(agent)), tuple(batches))

    # -- what the user interface asks: it reads the runtime through these only ---------------------

    @property
    def agent_names(self) -> tuple[str, ...]:
        """The agents this session runs (the built-in support and logs, or the user's), in their order."""
        return self.runtime.names

    def snapshot(self) -> MemorySnapshot:
        """Working memory now: its facts and the ledger's latest events."""
        return self.runtime.snapshot()

    @property
    def status(self) -> RuntimeStatus:
        return self.runtime.status

    @property
    def mode(self) -> Mode:
        return self.runtime.mode

    @property
    def lab_model(self) -> str:
        """The model the drift lab runs its policies on (the session's), as the lab names it."""
        return self.runtime.models.agent_label

    async def run_lab(self, chronology: Chronology | None = None, *, progress: Progress | None = None) -> DriftReport:
        """The drift lab on the session's models, replaying `chronology` (default: the built-in story);
        `progress` hears each policy's turns as they run."""
        from workbench.drift import run_drift

        return await run_drift(self.runtime.models, chronology=chronology, progress=progress)

    @property
    def writer_failing(self) -> bool:
        return self.runtime.writer_failing

    def use_host_parse(self) -> bool:
        """Read declarations with the host's parse for the rest of the session; False if it already does."""
        return self.runtime.use_host_parse()

    def resumed(self, agent: str) -> ResumedHistory | None:
        """What `agent` resumed from disk at start (`--persist`), or None."""
        return self.runtime.resumed(agent)

    def last_turn_calls(self, agent: str) -> list[CallRecord]:
        return self.runtime.last_turn_calls(agent)

    def unrecorded(self, agent: str) -> str | None:
        return self.runtime.unrecorded(agent)

    def context_by_turn(self, agent: str) -> list[ContextSplit]:
        return self.runtime.context_by_turn(agent)

    def recalled(self, agent: str) -> list[RecalledMessage]:
        return self.runtime.recalled(agent)

    @property
    def forget_pending(self) -> bool:
        """A forget a crash cut short waits to be completed (`complete_pending`) before any turn."""
        return self.runtime.forget_pending

    async def complete_pending(self) -> ForgetReport | None:
        return await self.runtime.complete_pending()

    @property
    def completed(self) -> str | None:
        """What `complete_pending` completed, in words, or None."""
        return self.runtime.completed

    def applied_unfinished(self, agent: str) -> bool:
        """Whether `agent`'s last turn, cancelled or stopped by an error, had its facts admitted first
        (a cancel during another memory's own model call, after extraction)."""
        return agent in self._applied_unfinished

    def usage(self, agent: str) -> Usage | None:
        """The reported usage of every call made for `agent`'s pane since start; None once any call's is
        unknown (a failed or cancelled call was made, and what it used is not known)."""
        return self.runtime.usage(agent)

    async def forget_preview(self, keys: Sequence[str] | None) -> ForgetPreview:
        """What forgetting `keys` (None: everything) will remove, asked of the one forget's own plan
        (`Forgetting.plan`: memory's values and every value the holders' texts declare), which the forget
        then applies: the facts that go, the other facts among them (their values hold a forgotten one),
        how many stay, and the memories it empties or removes values from beside working memory and
        both agents' histories."""
        runtime = self.runtime
        facts = runtime.memory.facts()
        left = facts
        unread: dict[str, str] = {}
        for key in keys if keys is not None else [None]:
            plan = await runtime.forgetting.plan(key)
            left = plan.kept(left)
            unread.update(plan.unread)
        kept = {f.key for f in left}
        gone = tuple(f.key for f in facts if f.key not in kept)
        also = tuple(k for k in gone if keys is not None and k not in keys)
        persisted = ["persisted sessions"] if runtime.histories.persisted is not None else []
        recall = [runtime.recall.name] if runtime.recall is not None and runtime.recall_on else []
        missed = {*runtime.forgetting.unreachable(), *unread}
        unreached = (
            *(n for n in runtime.forgetting.unreachable() if n not in unread),
            *(f"{name} (could not be read: {visible(why)})" for name, why in unread.items()),
        )
        said = {m.name: m.announced for m in runtime.memories if isinstance(m, Itemised)}  # each id it deletes
        said |= {
            m.name: "in this process; what it keeps outside it is not known, and stays"
            for m in runtime.memories
            if isinstance(m, KeepsOutside) and m.outside and m.name not in said  # an itemised one says it itself
        }
        names = [n for n in (*persisted, *recall, *(m.name for m in runtime.memories)) if n not in missed]
        reaches = tuple(f"{n} ({said[n]})" if n in said else n for n in names)
        holding: dict[str, bool | None] = {}
        if keys is not None and names:  # what each holds of the values that go, as F3 shows it
            systems = {system.name: system for system in (await runtime.remembered()).systems}
            if (histories := systems.get(runtime.histories.name)) is not None:
                systems.setdefault("persisted sessions", histories)
            outside = {m.name for m in runtime.memories if isinstance(m, KeepsOutside) and m.outside}
            forgotten = {*keys, *gone}
            for name, shown in zip(names, reaches, strict=True):
                holding[shown] = _holding(systems.get(name), forgotten, outside=name in outside)
        return ForgetPreview(
            None if keys is None else tuple(keys), gone, also, len(left), reaches, runtime.names, unreached, holding
        )

    def forget(self, key: str | None) -> Coroutine[Any, Any, ForgetReport]:
        """Forget `key` (None: everything), asked at this call (`AgentRuntime.forget`)."""
        return self.runtime.forget(key)

    async def remembered(self) -> Remembered:
        """What every memory system the agents run holds now, each item with the keys it holds."""
        return await self.runtime.remembered()

    def chronology(self, probes: list[int] | None = None) -> Chronology:
        """The conversation as a chronology (every question a probe unless `probes` says which);
        ChronologyError when it cannot be one."""
        chosen = [i for i, _, _ in self.transcript.questions()] if probes is None else probes
        return self.transcript.chronology(chosen, self.contract)

    def export(self, path: str, probes: list[int] | None = None, *, checked: bool = True) -> Exported:
        """Write the conversation as a new chronology file, readable by the user only (every question
        a probe unless `probes` says which). ChronologyError when it is not a chronology (unless not
        `checked`: a quit that could not save writes every message and forget, even a conversation the
        lab cannot score yet), OSError when it cannot be written (FileExistsError when `path` exists: a
        file is never overwritten); nothing is written then."""
        probes = [i for i, _, _ in self.transcript.questions()] if probes is None else probes
        chronology = self.chronology(probes) if checked else self.transcript.draft(probes, self.contract)
        text = json.dumps(chronology.to_file(), indent=2, ensure_ascii=False) + "\n"
        write_private(Path(path), text, new=True)
        return Exported(path, len(chronology.steps), len(probes))

    def unsaved(self) -> str | None:
        """Before the session ends: what it holds that is not on disk after one more try to save it, in
        one line (the facts by key, the messages counted, the reason), or None when everything is saved
        (or nothing is kept on disk). A quit that finds something asks before it goes."""
        return self._saving.save_again() if self._saving is not None else None

    def on_close(self, close: Callable[[], None]) -> None:
        """Call `close` when the session closes (what the start opened for it: the state file, locks)."""
        self._closing.append(close)

    def close(self) -> None:
        """The session ends (the app quits, a script is done): what its start opened is closed, so the
        state file alone holds everything saved. Once; nothing is asked of the session after it."""
        closing, self._closing = self._closing, []
        for close in closing:
            close()

    async def set_mode(self, mode: Mode) -> None:
        """Switch integration mode: every agent starts a new session, a workflow's agents too; the facts stay."""
        await self.runtime.set_mode(mode)

    async def set_recall(self, on: bool) -> bool:
        """Turn recall on or off (False when this session was started without it): every agent starts a
        new session, a workflow's agents too; the facts stay."""
        return await self.runtime.set_recall(on)
