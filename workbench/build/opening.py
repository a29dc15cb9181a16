"""What `workbench` opens before its window: everything it was asked to keep on disk or reach on a
server, opened, checked and locked, so that a start that cannot open it ends with one line on stderr
and a non-zero exit before any TUI, never a window with no agents in it.

- the persisted sessions (`--persist`): read, and locked by their own store; with `--persist redis://…`
  the Redis server that keeps the agents' histories first, connected to once within its CONNECT_TIMEOUT;
- the agent-memory folder (`--agent-memory`, Mem0's too): created user-only, or refused when the user
  made it read-only or open to others, and locked;
- recall's store (`--recall`): a DuckDB file locked and opened (corrupt, truncated, unreadable, held by
  another program: it says so here); a PostgreSQL server connected to once, within CONNECT_TIMEOUT;
- the folders the memories on the user's own agents keep their files in (`workbench.agentmem.recognise`):
  made user-only, or refused when read-only, and locked, with the umask tightened while they are held
  (`OthersFolderLock`): their framework code writes files with the umask's mode.

Light to import: a store's modules load only when it was asked for, so a plain `workbench` opens its
window as fast as before."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import TYPE_CHECKING, Protocol, TypeVar

from workbench.files import FolderLock, OthersFolderLock, lock_holder, private_dir
from workbench.text import clip, visible

if TYPE_CHECKING:
    from agent_framework import Agent

    from workbench.agentmem.config import AgentMemoryConfig
    from workbench.persist.redis_histories import RedisHistories
    from workbench.persist.sessions import PersistedSessions
    from workbench.recall.config import RecallConfig
    from workbench.recall.store import RecallStore

LOCK_FILE = "lock"  # in a folder the product keeps; beside a file it keeps, its name + ".lock"
OTHERS_LOCK_FILE = ".workbench.lock"  # in a folder of the user's agents, named so its owner is plain
_LINE_CHARS = 400
T = TypeVar("T")


class StartFailed(Exception):
    """What could not be opened and why, in one line of visible text."""


class Recall(Protocol):
    """Recall as the runtime runs it, or its store: closed in the loop that used it, or without one."""

    async def close(self) -> None: ...

    def close_now(self) -> None: ...


@dataclass
class Opened:
    """What a start opened, for the runtime's build: held (and locked) until `close` or exit."""

    persisted: PersistedSessions | None = None
    recall_store: RecallStore | None = None  # a DuckDB store opened here; None: the config's own
    locks: list[FolderLock] = field(default_factory=list)
    recall: Recall | None = None  # what the runtime built over it: closes a store the config made too
    redis: RedisHistories | None = None  # the agents' histories on Redis: its asyncio clients close in the loop

    def close(self) -> None:
        """Let another process open them (the process ending does the same, but leaves the persisted
        state in SQLite's log): the persisted sessions' last save, the recall store as far as it closes
        without an event loop (a DuckDB file: `RecallStore.close_now`), then the locks (the recall
        file's among them). Once: a second call does nothing."""
        persisted, recall, locks = self._taken()
        try:
            if persisted is not None:
                persisted.close()
        finally:
            try:
                if recall is not None:
                    recall.close_now()
            finally:
                _release(locks)

    async def aclose(self) -> None:
        """As `close`, with the recall store closed in the session's loop (a PostgreSQL pool too), and
        the Redis histories' connections after the last save."""
        redis, self.redis = self.redis, None
        persisted, recall, locks = self._taken()
        try:
            if persisted is not None:
                persisted.close()
            if redis is not None:
                await redis.aclose()
        finally:
            try:
                if recall is not None:
                    await recall.close()
            finally:
                _release(locks)

    def _taken(self) -> tuple[PersistedSessions | None, Recall | None, list[FolderLock]]:
        taken = self.persisted, self.recall or self.recall_store, self.locks
        self.persisted, self.recall, self.recall_store, self.locks = None, None, None, []
        return taken


def _release(locks: list[FolderLock]) -> None:
    for lock in locks:
        lock.release()


def open_for_start(
    *,
    persisted: Callable[[], PersistedSessions] | None,
    agent_memory: AgentMemoryConfig,
    recall: RecallConfig,
    redis: str | None = None,
    agents: Sequence[Agent] = (),
) -> Opened:
    """Open what the options ask for (`persisted` opens the persisted sessions when --persist asked;
    `redis`: the server --persist keeps the histories on; `agents`: the user's, whose memories' folders
    are locked); StartFailed with one line when any of it cannot be, and whatever was opened before is
    let go."""
    opened = Opened()
    try:
        if redis is not None:
            _check_redis(redis)
        if persisted is not None:
            opened.persisted = _step("the persisted sessions", persisted)
        if (folder := agent_memory.folder) is not None:
            _step("the agent memory", lambda: private_dir(folder))
            opened.locks.append(_step("the agent memory", lambda: FolderLock(folder / LOCK_FILE, str(folder))))
        if recall.enabled:
            _open_recall(recall, opened)
        if agents:
            _lock_agents_folders(agents, opened)
    except BaseException:
        opened.close()
        raise
    return opened


def _check_redis(url: str) -> None:
    from workbench.agentmem.redis_server import check_reachable

    _step("the Redis server", lambda: check_reachable(url))


def check_agents_folders(agents: Sequence[Agent]) -> None:
    """StartFailed (one line, as a start's) when another workbench holds a folder of the user's agents'
    memories; nothing is locked or written: for the drift lab, which only copies them
    (`workbench.drift.copies`)."""
    from workbench.agentmem.recognise import folders

    for folder in _step("your agents' memories", lambda: folders(agents)):
        if (holder := lock_holder(folder / OTHERS_LOCK_FILE)) is not None:
            in_use = f"another workbench ({holder}) is using {folder}; quit it first"
            raise StartFailed(f"your agents' memory could not be opened: {in_use}")


def _lock_agents_folders(agents: Sequence[Agent], opened: Opened) -> None:
    from workbench.agentmem.recognise import folders

    for folder in _step("your agents' memories", lambda: folders(agents)):
        lock = partial(OthersFolderLock, folder, OTHERS_LOCK_FILE, str(folder))
        opened.locks.append(_step("your agents' memory", lock))


def _open_recall(recall: RecallConfig, opened: Opened) -> None:
    if (conninfo := recall.postgres) is not None:
        from workbench.recall.postgres_store import check_reachable

        _step("the recall store", lambda: check_reachable(conninfo))
    elif (path := recall.store_path) is not None:
        path = path.expanduser().resolve()
        _step("the recall file", lambda: private_dir(path.parent))
        lock = path.with_name(path.name + ".lock")
        opened.locks.append(_step("the recall file", lambda: FolderLock(lock, str(path))))
        store = recall.make_store()
        _step("the recall store", store.open)
        opened.recall_store = store


def _step(what: str, open_: Callable[[], T]) -> T:
    """`open_()`, or StartFailed naming `what` and the reason when it raises."""
    try:
        return open_()
    except Exception as exc:
        raise StartFailed(visible(clip(f"{what} could not be opened: {_reason(exc)}", _LINE_CHARS))) from exc


def _reason(exc: Exception) -> str:
    """The error's own words, first line only; an OSError as its file and the system's reason."""
    if isinstance(exc, OSError) and exc.strerror and exc.filename:
        return f"{exc.filename}: {exc.strerror}"
    text = next((line.strip() for line in str(exc).splitlines() if line.strip()), "")
    return text or type(exc).__name__
