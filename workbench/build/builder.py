"""The one builder: a running workbench built from what a start asks for (`StartConfig`), and the one
order of the holders of user or model text a forget reaches (`in_order`), which the app registers with its
forget (`build`) and the drift lab's policies run their own forget over (`lab_forget`). No other module
lists holders or constructs an `AgentRuntime` (`tests/test_layers.py`).

The holders, in the order a forget reaches them:

1. the agents' sessions: replaced by new, empty ones (with `--persist` their saved messages go too); a
   workflow's agents' sessions, and the call log, with them;
2. the recall store, even when recall is off (an earlier run may have left one);
3. each other memory the agents run (memory files, extracted memory, Mem0, those on the user's agents);
4. what the layer above keeps (the session's transcript the drift lab replays, the batches of turns still
   running, the inputs' drafts: `workbench.session`, which wraps the runtime: `around`);
5. with `--persist redis://…`, the agents' histories on the Redis server: any list of the workbench's
   still holding a value is deleted, then the server rewrites its files;
6. the persisted sessions, last: memory on disk is written once every other holder applied the plan,
   so a forget cut short by a crash can be planned again at the next start (`workbench.persist.journal`).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import TYPE_CHECKING, Protocol, TypeVar

from workbench.memory import WorkingMemory
from workbench.memory.forget import Forgetting, Holder, Memory
from workbench.runtime.agents import AgentRuntime
from workbench.runtime.calls import CallLog
from workbench.runtime.config import Mode, WriterKind

if TYPE_CHECKING:
    from agent_framework import Agent, Workflow

    from workbench.build.config import StartConfig
    from workbench.loading import LoadedAgent, LoadedWorkflow, LoadFailed
    from workbench.memory.forget import Journal
    from workbench.persist.redis_histories import RedisHistories
    from workbench.persist.sessions import PersistedSessions
    from workbench.runtime.histories import Histories
    from workbench.runtime.memories import AgentMemory
    from workbench.runtime.models import ModelSet


class Around(Protocol):
    """What the layer above wraps the runtime in (the workbench's session): the holders it keeps."""

    @property
    def holders(self) -> tuple[Holder, ...]: ...


class Closing(Around, Protocol):
    def on_close(self, close: Callable[[], None], aclose: Callable[[], Awaitable[None]] | None = None) -> None: ...


A = TypeVar("A", bound=Around)
C = TypeVar("C", bound=Closing)


def in_order(
    *,
    agent_sessions: Sequence[Holder] = (),
    recall: Holder | None = None,
    memories: Sequence[Holder] = (),
    around: Sequence[Holder] = (),
    redis: Holder | None = None,
    persisted: Holder | None = None,
) -> tuple[Holder, ...]:
    """The holders in the order a forget reaches them (this module's docstring says why)."""
    return (
        *agent_sessions,
        *([recall] if recall is not None else []),
        *memories,
        *around,
        *([redis] if redis is not None else []),
        *([persisted] if persisted is not None else []),
    )


def lab_forget(
    memory: Memory,
    *,
    agent_sessions: Sequence[Holder] = (),
    recall: Holder | None = None,
    memories: Sequence[Holder] = (),
    persisted: PersistedSessions | None = None,
) -> Forgetting:
    """A forget of its own over `memory` and a drift lab policy's parts, reached in the app's order: the
    policy keeps its memory in a folder of its own and writes no journal."""
    forgetting = Forgetting(memory)
    held = in_order(agent_sessions=agent_sessions, recall=recall, memories=memories, persisted=persisted)
    _register(forgetting, held)
    return forgetting


def _register(forgetting: Forgetting, holders: Sequence[Holder]) -> None:
    """The one place a holder of user or model text is registered with a forget."""
    for holder in holders:
        forgetting.register(holder)


def build(
    models: ModelSet,
    around: Callable[[AgentRuntime, PersistedSessions | None], A],
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
) -> A:
    """The runtime of both agents, wrapped by `around` (the session), every holder registered in order.
    `memory` defaults to the persisted sessions' (with `persisted`) or a new one; `histories` is another
    store of the agents' histories that holds no text of its own beyond the sessions'; the other options
    are the runtime's (`AgentRuntime`). `recall` and `memories` are built by the caller on the same `calls`
    log. `agents`: the user's own agents (`workbench.loading`), run instead of support and logs; every
    memory their providers keep is recognised here (`workbench.agentmem.recognise`) and reached by the
    one forget. `workflows`: the user's workflows, each in a pane of its own; the memories of the agents
    they run are recognised with the user's agents'; the runtime runs them only inside their workflow.
    `not_loaded`: the entries of the user's folder that did not load, listed in what is remembered.
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
    wrapped = around(runtime, persisted)
    _register(runtime.forgetting, _ordered(runtime, wrapped.holders, redis, persisted))
    return wrapped


def _ordered(
    runtime: AgentRuntime, around: Sequence[Holder], redis: Holder | None, persisted: Holder | None
) -> tuple[Holder, ...]:
    """The runtime's holders (its sessions and call log, then recall and the other memories it runs) with
    the wrapper's and the stores', in `in_order`'s order."""
    memories: Sequence[Holder] = runtime.memories
    return in_order(
        agent_sessions=runtime.own_holders,
        recall=runtime.recall,
        memories=memories,
        around=around,
        redis=redis,
        persisted=persisted,
    )


def starting(
    config: StartConfig,
    around: Callable[[AgentRuntime, PersistedSessions | None], C],
    loaded: Sequence[LoadedAgent] = (),
    workflows: Sequence[LoadedWorkflow] = (),
    not_loaded: Sequence[LoadFailed] = (),
) -> Callable[[], C]:
    """The one start path of the TUI and the scripts: what `config` asks to keep or reach, opened and
    locked now (StartFailed, one line, when it cannot be: `workbench.build.opening`), and the function that
    builds the runtime over it, wrapped by `around`, over the user's agents when `loaded` holds any."""
    from workbench.build.opening import open_for_start

    recall, agent_memory, model = config.recall, config.agent_memory, config.model
    opened = open_for_start(
        persisted=(lambda: open_persisted(config)) if config.persist else None,
        agent_memory=agent_memory,
        recall=recall,
        redis=config.redis,
        agents=[item.agent for item in (*loaded, *(a for flow in workflows for a in flow.agents))],
    )

    def start() -> C:
        try:
            return built_over()
        except BaseException:
            opened.close()  # a start that failed lets go of what was opened for it: once, here
            raise

    def built_over() -> C:
        from workbench.runtime import build_models

        built = agent_memory.build()
        calls = CallLog()  # recall's embeddings requests are logged beside the model calls
        everything = [*loaded, *workflows]
        # Your agents on --model bring their tools (memory files, their own): the model calls them.
        functions = recall.on_demand or (model.is_live and (agent_memory.calls_functions or bool(loaded)))
        opened.recall = recalling = recall.memory(calls, store=opened.recall_store)  # closed with the session
        opened.redis = redis_histories(config, opened.persisted)  # its connections too
        wrapped = build(
            build_models(model, function_calls=functions),
            around,
            memory=None if opened.persisted is not None else WorkingMemory(config.contract),
            mode=config.mode_for(everything),
            writer=config.writer_for(everything),
            timeout=model.timeout,
            calls=calls,
            recall=recalling,
            recall_on=recall.enabled,
            memories=[built] if built is not None else [],
            persisted=opened.persisted,
            journal=config.journal(),
            agents=[item.agent for item in loaded],
            workflows=[(flow.name, flow.workflow, flow.cannot_run) for flow in workflows],
            not_loaded=[(failed.where, failed.problem) for failed in not_loaded],
            redis=opened.redis,
        )
        wrapped.on_close(opened.close, opened.aclose)  # the state file written whole, recall closed, folders let go
        return wrapped

    return start


def open_persisted(config: StartConfig) -> PersistedSessions:
    """The persisted sessions in the user's data directory, under the start's contract; SavedFileError when
    a file there cannot be read or was saved under a contract this one does not widen, InUse when another
    workbench holds them, OSError when the folder cannot be opened (start-up stops with the reason in one
    line and the files are left as they are)."""
    from workbench.files import data_dir
    from workbench.persist.sessions import DIRECTORY, PersistedSessions

    return PersistedSessions(data_dir() / DIRECTORY, contract=config.contract)


def redis_histories(config: StartConfig, persisted: PersistedSessions | None) -> RedisHistories | None:
    """The agents' histories on the server `--persist redis://…` names (checked reachable at opening)."""
    if config.redis is None or persisted is None:
        return None
    from workbench.persist.redis_histories import RedisHistories

    return RedisHistories(persisted, config.redis)


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
