"""What the app does besides drawing: ask, forget, export, switch mode or recall. No Textual here:
the app turns key presses into these calls and draws what they return."""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Coroutine, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from workbench.files import write_private
from workbench.memory.forget import ForgetPlan, Holder, TextHolder, declared_in
from workbench.memory.rules import check_message
from workbench.runtime.forget_preview import ForgetPreview
from workbench.session.pane import Completed, Lab, PaneView, SessionState
from workbench.session.transcript import Transcript

if TYPE_CHECKING:
    from workbench.chronology import Chronology
    from workbench.drift import DriftReport
    from workbench.drift.lab import Progress
    from workbench.memory.forget import ForgetReport
    from workbench.runtime import Mode, TurnResult
    from workbench.runtime.agents import AgentRuntime
    from workbench.runtime.remembered import Remembered
    from workbench.runtime.view import MemoryUpdate, RecalledMessage

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
        self.agent_names: tuple[str, ...] = (
            runtime.names
        )  # the agents it runs (the built-in pair, or the user's), in order
        self._saving = saving
        self.transcript = Transcript()
        self.drafts = Drafts()
        self._asking: dict[str, list[MemoryUpdate]] = {}
        self._applied_unfinished: set[str] = set()
        self._listeners: list[Listener] = []
        self._unsubscribe = runtime.subscribe(self._settled)
        self._closing: list[tuple[Callable[[], None], Callable[[], Awaitable[None]] | None]] = []

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

    def state(self) -> SessionState:
        """What the fact panel and the header draw, read together (`SessionState`): working memory now (its
        facts and the ledger's latest events) and the status (the models, the mode, the writer and whether it
        keeps failing, recall, the other memories, the persisted sessions and what start-up completed)."""
        runtime = self.runtime
        return SessionState(memory=runtime.snapshot(), status=runtime.status)

    def pane(self, agent: str) -> PaneView:
        """`agent`'s pane as the session holds it now, in one value (`PaneView`)."""
        runtime = self.runtime
        return PaneView(
            agent,
            usage=runtime.usage(agent),
            unrecorded=runtime.unrecorded(agent),
            applied_unfinished=agent in self._applied_unfinished,
            resumed=runtime.resumed(agent),
            calls=tuple(runtime.last_turn_calls(agent)),
            splits=tuple(runtime.context_by_turn(agent)),
            recalled=tuple(runtime.recalled(agent)),
        )

    def start(self) -> Coroutine[Any, Any, Completed | None] | None:
        """Start-up's one step before any turn: None when no forget a crash cut short waits (the session is
        ready now), else what completes it, which returns what it completed (in words, and its report)."""
        return self._complete_pending() if self.runtime.forget_pending else None

    async def _complete_pending(self) -> Completed | None:
        report = await self.runtime.complete_pending()
        return None if report is None else Completed(self.runtime.completed or "", report)

    def lab(self, chronology: Chronology | None = None) -> Lab:
        """The drift lab on the session's models, replaying `chronology` (default: the built-in story): the
        model it runs its policies on, as the lab names it, and its run (`progress` hears each policy's turns)."""
        models = self.runtime.models

        async def run(*, progress: Progress | None = None) -> DriftReport:
            from workbench.drift import run_drift

            return await run_drift(models, chronology=chronology, progress=progress)

        return Lab(models.agent_label, run)

    async def forget_preview(self, keys: str | Sequence[str] | None) -> ForgetPreview:
        """What forgetting `keys` (one key, several; None: everything) will remove, from the one plan the
        forget makes for them all (`Forgetting.plan`: memory's values and every value the holders' texts
        declare): the facts that go, the other facts among them (their values hold a forgotten one), how
        many stay, and the memories it empties or removes values from beside working memory and the
        agents' histories. `forget(preview)` applies that same plan."""
        return await self.runtime.preview(keys)

    def forget(self, forget: ForgetPreview | str | Sequence[str] | None) -> Coroutine[Any, Any, ForgetReport]:
        """Forget, asked at this call (`AgentRuntime.forget`): a preview the user confirmed, whose plan is
        applied as it is (`PlanChanged`, nothing forgotten, when memory changed since it was made: ask
        again), or a key, several, None (everything), planned when the forget's turn comes."""
        return self.runtime.forget(forget.plan if isinstance(forget, ForgetPreview) else forget)

    async def remembered(self) -> Remembered:
        """What every memory system the agents run holds now, each item with the keys it holds."""
        return await self.runtime.remembered()

    def chronology(self, probes: list[int] | None = None) -> Chronology:
        """The conversation as a chronology (every question a probe unless `probes` says which);
        ChronologyError when it cannot be one."""
        chosen = [i for i, _, _ in self.transcript.questions()] if probes is None else probes
        return self.transcript.chronology(chosen, self.runtime.memory.contract)

    def export(self, path: str, probes: list[int] | None = None, *, checked: bool = True) -> Exported:
        """Write the conversation as a new chronology file, readable by the user only (every question
        a probe unless `probes` says which). ChronologyError when it is not a chronology (unless not
        `checked`: a quit that could not save writes every message and forget, even a conversation the
        lab cannot score yet), OSError when it cannot be written (FileExistsError when `path` exists: a
        file is never overwritten); nothing is written then."""
        probes = [i for i, _, _ in self.transcript.questions()] if probes is None else probes
        chronology = self.chronology(probes) if checked else self.transcript.draft(probes, self.runtime.memory.contract)
        text = json.dumps(chronology.to_file(), indent=2, ensure_ascii=False) + "\n"
        write_private(Path(path), text, new=True)
        return Exported(path, len(chronology.steps), len(probes))

    def unsaved(self) -> str | None:
        """Before the session ends: what it holds that is not on disk after one more try to save it, in
        one line (the facts by key, the messages counted, the reason), or None when everything is saved
        (or nothing is kept on disk). A quit that finds something asks before it goes."""
        return self._saving.save_again() if self._saving is not None else None

    def on_close(self, close: Callable[[], None], aclose: Callable[[], Awaitable[None]] | None = None) -> None:
        """Call `close` when the session closes (what the start opened for it: the state file, the recall
        store, locks); `aclose` instead when it closes in its loop (`aclose`: a recall server's pool too)."""
        self._closing.append((close, aclose))

    def close(self) -> None:
        """The session ends (the app quits, a script is done): what its start opened is closed, so the
        state file alone holds everything saved. Once; nothing is asked of the session after it. A
        recall store on a server is closed only by `aclose`."""
        closing, self._closing = self._closing, []
        for close, _ in closing:
            close()

    async def aclose(self) -> None:
        """As `close`, in the session's event loop: what closes only in it (a recall server's pool) too.
        The app awaits it as it quits, the scripts when done."""
        closing, self._closing = self._closing, []
        for close, aclose in closing:
            if aclose is not None:
                await aclose()
            else:
                close()

    async def switch(self, *, mode: Mode | None = None, recall: bool | None = None, host_parse: bool = False) -> bool:
        """The session's switches, one a call: the integration `mode`, or `recall` on or off (every agent
        starts a new session, a workflow's agents too; the facts stay), or the writer to the host's own
        parse for the rest of the session (`host_parse`: said in the ledger and the header). False when
        nothing switched: recall asked of a session started without it, or the host's parse already on."""
        if (mode is not None) + (recall is not None) + host_parse != 1:
            raise TypeError("switch one of mode, recall or host_parse")
        if mode is not None:
            await self.runtime.set_mode(mode)
            return True
        if recall is not None:
            return await self.runtime.set_recall(recall)
        return self.runtime.use_host_parse()
