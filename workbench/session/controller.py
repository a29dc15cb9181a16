"""What the app does besides drawing: ask, forget, export, switch mode or recall. No Textual here:
the app turns key presses into these calls and draws what they return."""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from workbench.files import write_private
from workbench.memory.rules import check_message
from workbench.session.transcript import Transcript

if TYPE_CHECKING:
    from workbench.drift import Chronology
    from workbench.memory.forget import ForgetReport, Holder
    from workbench.runtime import AgentRuntime, Mode, TurnResult, Usage
    from workbench.runtime.view import RecalledMessage


@dataclass(frozen=True)
class TurnOutcome:
    """Everything one turn changed that a pane shows: the result, the pane's usage since start, and
    what recall put into the turn."""

    result: TurnResult
    usage: Usage | None
    recalled: tuple[RecalledMessage, ...] = ()


@dataclass(frozen=True)
class Exported:
    path: str
    steps: int
    probes: int


class SessionController:
    """One session: the runtime and the transcript the drift lab replays. Every holder of text the
    app keeps (the transcript here, input undo in the app) is registered with the runtime's one
    forget, so a forget from anywhere reaches all of them."""

    def __init__(self, runtime: AgentRuntime) -> None:
        self.runtime = runtime
        self.transcript = Transcript()
        runtime.forgetting.register(self.transcript)

    def register(self, holder: Holder) -> Callable[[], None]:
        """Another holder of text (the app's inputs keep what was sent in their undo history)."""
        return self.runtime.forgetting.register(holder)

    @staticmethod
    def refusal(text: str) -> str | None:
        """Why `text` cannot be sent, in words (the same check admission makes), or None."""
        reason = check_message(text)
        return None if reason is None else reason.detail

    async def ask(
        self, agent: str, text: str, on_text: Callable[[str], Awaitable[None] | None] | None = None
    ) -> TurnOutcome:
        self.transcript.said(agent, text)
        result = await self.runtime.ask(agent, text, on_text=on_text)
        return TurnOutcome(result, self.runtime.usage(agent), tuple(self.runtime.recalled(agent)))

    async def forget(self, key: str | None) -> ForgetReport:
        return await self.runtime.forget(key)

    def chronology(self, probes: list[int] | None = None) -> Chronology:
        """The conversation as a chronology (every question a probe unless `probes` says which);
        ChronologyError when it cannot be one."""
        chosen = [i for i, _, _ in self.transcript.questions()] if probes is None else probes
        return self.transcript.chronology(chosen)

    def export(self, path: str, probes: list[int]) -> Exported:
        """Write the conversation as a chronology file, readable by the user only. ChronologyError
        when it is not a chronology, OSError when it cannot be written; nothing is written then."""
        chronology = self.chronology(probes)
        text = json.dumps(chronology.to_file(), indent=2, ensure_ascii=False) + "\n"
        write_private(Path(path), text)
        return Exported(path, len(chronology.steps), len(probes))

    def set_mode(self, mode: Mode) -> None:
        self.runtime.set_mode(mode)

    def set_recall(self, on: bool) -> bool:
        return self.runtime.set_recall(on)
