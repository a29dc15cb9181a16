"""The one assembly: a running workbench built from what a start asks for, and the one list of the
holders of user or model text it registers with the one forget (through `workbench.runtime.holders`,
the one module that registers, which the drift lab's policies use too). The CLI, the TUI and the tests
build through it; a test fails when a holder is registered anywhere else (`tests/test_layers.py`).

The holders, in the order a forget reaches them:

1. the agents' sessions: replaced by new, empty ones (with `--persist` their saved messages go too);
2. the call log;
3. the recall store, even when recall is off (an earlier run may have left one);
4. each other memory the agents run (memory files, extracted memory, Mem0);
5. the transcript the drift lab replays, the batches of turns still running, the inputs' drafts;
6. with `--persist redis://…`, the agents' histories on the Redis server: any list of the workbench's
   still holding a value is deleted, then the server rewrites its files;
7. the persisted sessions, last: memory on disk is written once every other holder applied the plan,
   so a forget cut short by a crash can be planned again at the next start (`workbench.persist.journal`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from workbench.memory import WorkingMemory
from workbench.runtime.agents import AgentRuntime
from workbench.runtime.calls import CallLog
from workbench.runtime.config import Mode, WriterKind
from workbench.runtime.holders import register
from workbench.session.controller import SessionController

if TYPE_CHECKING:
    from agent_framework import Agent, Workflow

    from workbench.memory.forget import Holder, Journal
    from workbench.persist.redis_histories import RedisHistories
    from workbench.persist.sessions import PersistedSessions
    from workbench.runtime.histories import Histories
    from workbench.runtime.memories import AgentMemory
    from workbench.runtime.models import ModelSet


def assemble(
    models: ModelSet,
    *,
    memory: WorkingMemory | None = None,
    mode: Mode = Mode.MANUAL,
    writer: WriterKind = WriterKind.MODEL,
    timeout: float = 120.0,
    calls: CallLog | None = None,
    recall: AgentMemory | None = None,
    recall_on: bool = False,
    memories: Sequence[AgentMemory] = (),
    persisted: PersistedSessions | None = None,
    histories: Histories | None = None,
    journal: Journal | None = None,
    agents: Sequence[Agent] = (),
    workflows: Sequence[tuple[str, Workflow, str | None]] = (),
    not_loaded: Sequence[tuple[str, str]] = (),
    redis: RedisHistories | None = None,
) -> SessionController:
    """The session over a runtime of both agents, every holder registered. `memory` defaults to the
    persisted sessions' (with `persisted`) or a new one; `histories` is another store of the agents'
    histories that holds no text of its own beyond the sessions'; the other options are the runtime's
    (`AgentRuntime`). `recall` and `memories` are built by the caller on the same `calls` log. `agents`:
    the user's own agents (`workbench.loading`), run instead of support and logs; every memory their
    providers keep is recognised here (`workbench.agentmem.recognise`) and reached by the one forget.
    `workflows`: the user's workflows, each in a pane of its own; the memories of the agents they run are
    recognised with the user's agents' (`recognised`) and reached by the one forget; the runtime runs
    them only inside their workflow. `not_loaded`: the entries of the user's folder
    that did not load, listed in what is remembered.
    `redis` keeps the agents' histories on a Redis server, with `persisted` keeping the rest."""
    if persisted is not None and histories is not None:
        raise ValueError("the persisted sessions are the agents' histories")
    if redis is not None and (persisted is None or histories is not None):
        raise ValueError("the Redis histories go with the persisted sessions, which keep the facts")
    if persisted is not None and memory is not None and memory is not persisted.memory:
        raise ValueError("the persisted sessions bring their own memory")
    inside = [agent for _, flow, _ in workflows for agent in workflow_agents(flow)]
    runtime = AgentRuntime(
        persisted.memory if persisted is not None else memory or WorkingMemory(),
        models,
        mode=mode,
        writer=writer,
        timeout=timeout,
        calls=calls,
        recall=recall,
        recall_on=recall_on,
        memories=[*memories, *recognised([*agents, *inside])],
        histories=redis or persisted or histories,
        journal=journal,
        agents=agents,
        workflows=workflows,
        not_loaded=not_loaded,
    )
    session = SessionController(runtime, persisted)
    last: list[Holder] = [*([redis] if redis is not None else []), *([persisted] if persisted is not None else [])]
    register(runtime.forgetting, (*runtime.holders, *session.holders, *last))
    return session


def workflow_agents(workflow: Workflow) -> list[Agent]:
    """The agents a workflow's executors run (`workbench.loading.workflow_agents`)."""
    from workbench.loading import workflow_agents as found

    return [item.agent for item in found(workflow, "")]


def recognised(agents: Sequence[Agent]) -> tuple[AgentMemory, ...]:
    """The memories on the user's agents (`workbench.agentmem.recognise`); the built-in agents' start
    loads none of the memories' code."""
    if not agents:
        return ()
    from workbench.agentmem.recognise import recognise

    return recognise(agents)
