"""One message to a pane, from its ticket to its result: an agent's turn (its answer streamed, then the
memory update) or a workflow's run. A failure is returned as the turn's error with the facts as they were;
a cancellation ends the turn and propagates. `AgentRuntime.ask` runs them, after the forgets asked before."""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import time
from collections.abc import Sequence
from dataclasses import dataclass

from agent_framework import Agent, AgentResponse, AgentResponseUpdate, AgentSession, Message, ResponseStream

from workbench.memory import MemoryTurn, WorkingMemory
from workbench.memory.prompt import with_block
from workbench.memory.rules import check_message
from workbench.runtime import tracing
from workbench.runtime.calls import CallLog, RecordingMiddleware, recorder_of, recording_for
from workbench.runtime.config import Mode
from workbench.runtime.memories import AgentMemory
from workbench.runtime.models import ModelSet
from workbench.runtime.service_store import in_agent_session
from workbench.runtime.updater import MemoryUpdater
from workbench.runtime.usage import Usage, usage_from_details
from workbench.runtime.workflows import TextSink, WorkflowPane, WorkflowStopped

# The longest an answer's stream runs before the event loop gets a turn. A piece already received is
# read without waiting on the socket, so a fast server's long answer, read in one go, held the loop
# (and the keys typed meanwhile) for up to a second.
STREAM_SLICE_SECONDS = 0.005


@dataclass(frozen=True)
class TurnResult:
    agent: str
    turn: MemoryTurn
    reply: str = ""
    usage: Usage | None = None
    error: str = ""
    unsaved: str | None = None  # why the turn could not be saved (`--persist`), when it could not

    @property
    def ok(self) -> bool:
        return not self.error


class Turns:
    """The turns of a runtime's panes, on its memory, call log, models and writer."""

    def __init__(
        self, memory: WorkingMemory, calls: CallLog, models: ModelSet, updater: MemoryUpdater, timeout: float
    ) -> None:
        self.memory = memory
        self.calls = calls
        self.models = models
        self.updater = updater
        self.timeout = timeout

    async def agent(
        self,
        agent: Agent,
        session: AgentSession,
        name: str,
        text: str,
        on_text: TextSink | None,
        *,
        mode: Mode,
        systems: Sequence[AgentMemory],
    ) -> TurnResult:
        """One message to an agent: the facts block in the message (manual `mode`) or from its provider,
        its answer streamed to `on_text`; every memory of `systems` told the turn started."""
        for memory_system in systems:
            memory_system.turn_started(name)
        with (
            recording_for(recorder_of(agent)),  # a provider's own call, on a client of the user's
            in_agent_session(session),  # ... and the ids the service keeps of it, with the turn's session
            tracing.turn(name, str(mode), text) as span,
            self.memory.open_turn(text, origin=name) as opened,
        ):
            turn = opened.ticket
            tracing.turn_opened(span, turn)
            if check_message(text) is not None:  # too long, or not encodable: refused before any model call
                outcome = self.memory.admit(turn, [])
                return TurnResult(name, turn, error=outcome.events[0].describe())
            content = text if mode is Mode.PROVIDER else with_block(self.memory.prompt_block(), text)
            message = Message(role="user", contents=[content], message_id=f"user-{turn.number}")
            try:
                stream = agent.run(message, session=session, stream=True)
                response = await self._read(stream, name, turn, on_text)
            except asyncio.CancelledError:
                opened.ending = "the turn was cancelled"
                raise
            except Exception as exc:
                tracing.failed(span, exc)
                detail = self.models.explain(exc)
                opened.ending = f"the {name} agent's call failed: {detail}"
                return TurnResult(name, turn, error=detail)
            opened.ending = "the context provider saw no user input to extract"
            tracing.turn_answered(span, response.text or "")
            return TurnResult(name, turn, reply=response.text or "", usage=usage_from_details(response.usage_details))

    async def workflow(self, flow: WorkflowPane, text: str, on_text: TextSink | None, label: str) -> TurnResult:
        """One message to a workflow (`workbench.runtime.workflows`), its calls recorded on `label`: its
        run, then the message's declarations admitted as any pane's are. A run that fails, or cannot start,
        is returned as the turn's error, with the facts as they were."""
        name = flow.name
        recorder = RecordingMiddleware(self.calls, name, label, timeout=self.timeout)
        with (
            recording_for(recorder),  # each executor's calls (`ExecutorCalls`), and its providers' own
            tracing.turn(name, "workflow", text) as span,
            self.memory.open_turn(text, origin=name) as opened,
        ):
            turn = opened.ticket
            tracing.turn_opened(span, turn)
            if check_message(text) is not None:
                outcome = self.memory.admit(turn, [])
                return TurnResult(name, turn, error=outcome.events[0].describe())
            try:
                reply = await flow.run(text, on_text, self.memory.prompt_block())
            except asyncio.CancelledError:
                opened.ending = "the turn was cancelled"
                raise
            except WorkflowStopped as exc:
                opened.ending = f"the {name} workflow did not answer: {exc}"
                return TurnResult(name, turn, error=str(exc))
            except Exception as exc:
                tracing.failed(span, exc)
                detail = self.models.explain(exc)
                opened.ending = f"the {name} workflow's run failed: {detail}"
                return TurnResult(name, turn, error=detail)
            await self.updater.update(turn)
            tracing.turn_answered(span, reply)
            return TurnResult(name, turn, reply=reply)

    async def _read(
        self,
        stream: ResponseStream[AgentResponseUpdate, AgentResponse],
        name: str,
        turn: MemoryTurn,
        on_text: TextSink | None,
    ) -> AgentResponse:
        """The agent's answer, each piece sent to `on_text` as it arrives. Ended between two pieces (a
        cancel at the pause or in `on_text`, where the recorder does not see it), the stream is closed at
        once, not when it is collected, and its call recorded as failed.

        Once the memory update has settled the ticket, the turn's stores are written (the extractor's
        `after_run` runs ahead of history's and the other memories'), so the rest of the stream is read
        to its end without a pause: a cancel cannot land between what the turn stored and its end, where
        the turn would be reported cancelled with its facts and history kept. Agent Framework 1.26 sends
        one more update after its `after_run` providers (the run's evaluation metadata, no text)."""
        try:
            pause_at = time.perf_counter() + STREAM_SLICE_SECONDS
            async for update in stream:
                if on_text is not None and update.text and inspect.isawaitable(shown := on_text(update.text)):
                    await shown
                if time.perf_counter() >= pause_at and self.memory.is_open(turn):
                    await asyncio.sleep(0)
                    pause_at = time.perf_counter() + STREAM_SLICE_SECONDS
            return await stream.get_final_response()
        except BaseException as exc:
            # Recorded first: closing may still finalize the partial reply (Agent Framework 1.26 closes the
            # client's stream as if it had ended), and a call ended by `exc` stays ended by it.
            self.calls.ended_open(name, turn.number, exc)
            with contextlib.suppress(Exception):  # the turn reports how it ended, not a failed release
                await stream.close(exc)
            raise
