"""A workflow the user built (`workbench.loading.LoadedWorkflow`), run in a pane of its own.

The message typed in its pane goes in (`Workflow.run(text, stream=True)`), and what its executors
output streams out, each executor's output headed by its id. The workflow and its agents are left as
the user built them. For the run, each agent executor's calls get one middleware of the workbench's
(`ExecutorCalls`, through the run's `client_kwargs`, which the framework hands to the agent's chat client
as call middleware): it puts the facts block into the request, as context the executor does not keep,
and records the call through the pane's recorder, so F2 lists it under the executor's id. An agent on a
client without the framework's middleware layer gets neither (`unlayered`). An agent whose service keeps
its conversation (`workbench.runtime.service_store`) has its calls watched there too (`watchers`), so the
ids the service returned are recorded and the one forget deletes them. The message's declarations
are admitted to the shared facts after the run, with the writer every pane uses (`AgentRuntime`).

Each `AgentExecutor` keeps one session and the messages it cached between runs: what the workflow's
agents remember of the conversation. They are read and replaced through the executor's own checkpoint
methods (`on_checkpoint_save`, and `on_checkpoint_restore({})`, which starts a new session from its
agent and empties its caches): F3 lists them, and the one forget replaces them as it replaces the
agents' sessions. What the agents' own providers keep elsewhere (a file, a server) is recognised with
the loaded agents' (`workbench.agentmem.recognise`).

A workflow whose first executor takes no message (the framework's `workflow_spam` sample takes an
`EmailRequest`) cannot be started from a pane: its pane says why (`cannot_run`). A workflow that asks
for a human's input (`request_info`) ends its turn there: the pane says so, and the request is cancelled.
"""

from __future__ import annotations

import contextlib
from collections import Counter
from collections.abc import Awaitable, Callable
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from agent_framework import ChatContext, ChatMiddleware, ChatMiddlewareLayer, Message

from workbench.runtime.calls import pane_recorder
from workbench.runtime.loaded import in_memory_messages, label_of
from workbench.runtime.remembered import HeldItem, history_text
from workbench.text import clip

if TYPE_CHECKING:
    from agent_framework import AgentExecutor, Workflow

    from workbench.memory.forget import ForgetPlan

_OUTPUT_CHARS = 2000  # one output of an executor of the user's that is not an agent's text

# Receives each streamed piece of an answer; may be a coroutine function.
TextSink = Callable[[str], Awaitable[None] | None]

# The facts block of the workflow run in progress (`WorkflowPane.run`), for its agents' calls.
_facts: ContextVar[str | None] = ContextVar("workbench_workflow_facts", default=None)
# The run's watchers of its agent executors' calls, by executor id (`WorkflowPane.watchers`).
_watchers: ContextVar[dict[str, ChatMiddleware] | None] = ContextVar("workbench_workflow_watchers", default=None)


class ExecutorCalls(ChatMiddleware):
    """One agent executor's calls in a run: the facts block put into the request just before its last
    user message, as context (the executor keeps what it was given, not this), and the call recorded
    through the pane's recorder (`pane_recorder`) under the executor's id, on `model`. It holds only
    those two names: the workflow copies its run's arguments into its state and its checkpoints."""

    def __init__(self, executor: str, model: str) -> None:
        self.executor = executor
        self.model = model

    async def process(self, context: ChatContext, call_next: Callable[[], Awaitable[None]]) -> None:
        if (block := _facts.get()) is not None:
            messages = list(context.messages)
            last = max((i for i, m in enumerate(messages) if str(m.role) == "user"), default=0)
            messages.insert(last, Message(role="user", contents=[block]))
            context.messages = messages
        pane = pane_recorder.get()

        async def recorded() -> None:
            if pane is None:
                await call_next()
            else:
                await pane.aside(self.executor, self.model).process(context, call_next)

        watcher = (_watchers.get() or {}).get(self.executor)
        await (recorded() if watcher is None else watcher.process(context, recorded))


@dataclass
class WorkflowPane:
    """A workflow the runtime runs in a pane named `name`; `cannot_run`: why a message cannot start it."""

    name: str
    workflow: Workflow
    cannot_run: str | None = None
    # What else watches an agent executor's calls, by its id (the recorder of the store its service keeps).
    watchers: dict[str, ChatMiddleware] = field(default_factory=dict)

    def executors(self) -> list[AgentExecutor]:
        """The executors that run an agent: each keeps a session and its cached messages."""
        from agent_framework import AgentExecutor

        return [e for e in self.workflow.get_executors_list() if isinstance(e, AgentExecutor)]

    def unlayered(self) -> list[str]:
        """The agent executors whose agent's client lacks the framework's middleware layer: their calls
        carry no facts block and are not recorded (the framework hands call middleware only to that layer)."""
        return [e.id for e in self.executors() if not isinstance(getattr(e.agent, "client", None), ChatMiddlewareLayer)]

    def unrecorded(self) -> str | None:
        """Why some of its calls are not recorded (`unlayered`), None when they all are."""
        if not (unlayered := self.unlayered()):
            return None
        return (
            f"the {self.name} workflow's {', '.join(unlayered)} answer(s) on a client without Agent Framework's "
            "middleware layer, where the workbench can neither record a call nor add the facts block"
        )

    def _calls(self) -> dict[str, dict[str, Any]]:
        """The run's `client_kwargs`: each agent executor's calls get its `ExecutorCalls` (but those of
        `unlayered`: their client would be handed it as an argument of its own)."""
        skipped = set(self.unlayered())
        return {
            e.id: {"middleware": [ExecutorCalls(e.id, label_of(getattr(e.agent, "client", None)))]}
            for e in self.executors()
            if e.id not in skipped
        }

    async def session_ids(self) -> list[str]:
        """The ids of the sessions its agent executors hold now (read through their checkpoints)."""
        held: list[str] = []
        for executor in self.executors():
            session = (await executor.on_checkpoint_save()).get("agent_session")
            if isinstance(session, dict) and isinstance(session.get("session_id"), str):
                held.append(session["session_id"])
        return held

    async def conversations(self) -> list[tuple[str, list[Message]]]:
        """Each agent executor's id and the messages it holds now: its cache, the conversation of its last
        run, and what its session's in-memory history keeps."""
        from agent_framework import Agent, AgentSession

        held: list[tuple[str, list[Message]]] = []
        for executor in self.executors():
            state: dict[str, Any] = await executor.on_checkpoint_save()
            session, agent = state.get("agent_session"), executor.agent
            messages = []
            if session and isinstance(agent, Agent):
                messages = in_memory_messages(agent, AgentSession.from_dict(session))
            # The conversation of its last run repeats what the session keeps: each message counted once.
            kept = Counter(_identity(m) for m in messages)
            for message in [*state.get("cache", []), *state.get("full_conversation", [])]:
                if kept[_identity(message)] > 0:
                    kept[_identity(message)] -= 1
                else:
                    messages.append(message)
            held.append((executor.id, messages))
        return held

    async def held(self) -> list[HeldItem]:
        """Each agent executor's conversation as "What is remembered" lists it; a workflow that runs no
        agent is listed all the same, saying what its executors keep is not known (never dropped in silence)."""
        conversations = await self.conversations()
        held = []
        for executor, messages in conversations:
            what = f"the {executor} agent's session in the {self.name} workflow: {len(messages):,} message(s)"
            held.append(HeldItem("history", f"{self.name}/{executor}", what, history_text(messages)))
        if not conversations:
            ids = ", ".join(e.id for e in self.workflow.get_executors_list())
            what = f"the {self.name} workflow runs no agent (its executors: {ids}): what they keep is not known"
            held.append(HeldItem("history", self.name, what, ""))
        return held

    async def texts(self) -> list[str]:
        return [m.text or "" for _, messages in await self.conversations() for m in messages]

    async def replace_sessions(self) -> int:
        """Every agent executor starts anew (a new session from its agent, empty caches); returns how
        many messages they held."""
        dropped = sum(len(messages) for _, messages in await self.conversations())
        for executor in self.executors():
            await executor.on_checkpoint_restore({})
        return dropped

    async def run(self, text: str, on_text: TextSink | None, facts: str | None = None) -> str:
        """One run on `text`: each executor's output sent to `on_text` as it streams, headed by its id
        when the executor changes, its agents' requests carrying `facts` (the working memory's block).
        Returns all of it. Raises what the run raised; a run that failed or asks for a human's input
        raises `WorkflowStopped` saying so."""
        if self.cannot_run is not None:
            raise WorkflowStopped(self.cannot_run)
        token, watching = _facts.set(facts), _watchers.set(self.watchers)
        try:
            return await self._run(text, on_text)
        finally:
            _watchers.reset(watching)
            _facts.reset(token)

    async def _run(self, text: str, on_text: TextSink | None) -> str:
        import inspect

        from agent_framework import AgentResponse, AgentResponseUpdate

        shown: list[str] = []
        current: str | None = None

        async def show(piece: str) -> None:
            shown.append(piece)
            if on_text is not None and inspect.isawaitable(done := on_text(piece)):
                await done

        asked: dict[str, str] = {}  # request id -> the executor asking
        stream = self.workflow.run(text, stream=True, client_kwargs=self._calls())
        async for event in stream:
            if event.type == "output":
                data = event.data
                if isinstance(data, AgentResponseUpdate | AgentResponse):
                    piece = data.text or ""
                else:
                    piece = clip(str(data), _OUTPUT_CHARS) if data is not None else ""
                if not piece:
                    continue
                if event.executor_id != current:
                    current = event.executor_id
                    await show(f"{chr(10) * 2 if shown else ''}**{current}**: ")
                await show(piece)
            elif event.type == "request_info":
                asked[event.request_id] = str(event.source_executor_id or "an executor")
            elif event.type == "failed":
                why = event.details.message if event.details is not None else str(event.data)
                raise WorkflowStopped(f"the workflow failed: {clip(why, _OUTPUT_CHARS)}")
        if asked:
            with contextlib.suppress(Exception):  # the pane says the run ended, whatever the cancel said
                await self.workflow.cancel_pending_requests(list(asked))
            who = ", ".join(dict.fromkeys(asked.values()))
            raise WorkflowStopped(
                f"the workflow asks for a person's input ({who}), which the workbench cannot give: its run ends "
                "here, the request cancelled"
            )
        return "".join(shown)


def _identity(message: Message) -> tuple[str, str, str | None, str | None]:
    return (str(message.role), message.text or "", message.message_id, message.author_name)


class WorkflowStopped(Exception):
    """A workflow's run that ended without its answer, in one line the pane shows."""


@dataclass(frozen=True)
class WorkflowSessions:
    """The one forget's holder of the workflows' agent executors' sessions and caches: replaced by new,
    empty ones (as the agents' sessions are), whatever the forget; and again after a run that went on
    through the forget (`again`), so the forget is a barrier for a workflow's turn as for an agent's."""

    workflows: tuple[WorkflowPane, ...]
    name: str = "workflow sessions"
    unit: str = "message(s)"

    async def declared(self, keys: frozenset[str]) -> set[str]:
        from workbench.memory.forget import declared_in

        return declared_in([text for flow in self.workflows for text in await flow.texts()], keys)

    async def erase(self, plan: ForgetPlan) -> int:
        return sum([await flow.replace_sessions() for flow in self.workflows])

    async def again(self, plan: ForgetPlan) -> int:
        """A workflow's run that went on through a forget: what its executors kept after it is replaced
        too, where it holds a value of the plan (or everything: every executor)."""
        replaced = 0
        for flow in self.workflows:
            if plan.everything or any(plan.holds(text) for text in await flow.texts()):
                replaced += await flow.replace_sessions()
        return replaced
