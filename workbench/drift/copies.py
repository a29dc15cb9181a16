"""Where the lab runs the memories of the user's agents: never in the user's own stores. Each row of the
user's agents (`workbench.drift.yours_policy`) runs every memory its agents carry on a store of the
lab's own, made from the user's when the row is built and removed when the lab closes it:

- `FileHistoryProvider`, `FileMemoryProvider` on a `FileSystemAgentFileStore`, and the framework's
  extracted memory on its `MemoryFileStore`: the same provider on a temporary copy of its folder (the
  workbench's lock file left out), so it starts from what the user's holds;
- `RedisHistoryProvider`: the same provider, server and credentials, under a key prefix of the lab's own;
  afterwards every list under it is deleted, the server read again to verify none is left, and its files
  rewritten (`workbench.agentmem.redis_server`), since a deleted list stays in the append-only file;
- `InMemoryHistoryProvider`: as it is (its messages live in the lab's own sessions);
- the model service's own store (a Responses API client with `store` unset or on,
  `workbench.runtime.service_store`): the agent runs with `store=False` for the lab (`unstored`), the
  framework's own option, so the service keeps none of its responses; as the framework does when `store`
  is False, no `previous_response_id` then: the lab's history provider sends the conversation itself.
  A conversation its options name keeps every item given to it, whatever `store` says: not redirected.

Any other provider (one the workbench does not know, Mem0's, the workbench's recall provider, a store the
workbench cannot copy) writes where the lab cannot tell or cannot redirect: its agent's rows run only when
the user allows the lab to write into their stores (`--lab-writes-to-your-stores`), with that provider as
it is, and the report says so; otherwise those rows are not run, and say why."""

from __future__ import annotations

import copy
import importlib
import shutil
import tempfile
import uuid
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from agent_framework import (
    Agent,
    AgentSession,
    ContextProvider,
    FileHistoryProvider,
    FileMemoryProvider,
    FileSystemAgentFileStore,
    HistoryProvider,
    InMemoryHistoryProvider,
    Message,
)

from workbench.agentmem import extracted
from workbench.build.opening import OTHERS_LOCK_FILE
from workbench.drift.policies import Removal, folder_size
from workbench.runtime.service_store import kept_on_service

if TYPE_CHECKING:
    from workbench.agentmem.redis_history import LabRedis

# What the lab's temporary folders and its Redis key prefixes start with.
LAB_PREFIX = "workbench-drift-"
ALLOW_OPTION = "--lab-writes-to-your-stores"
_REDIS_PACKAGE = "agent_framework_redis"


@dataclass
class LabStore:
    """One memory of a user's agent as one lab row runs it: `provider` is the one the row's agent
    carries, `where` says where it writes."""

    kind: str  # the provider's class
    provider: ContextProvider
    where: str
    folder: Path | None = None  # the lab's copy, when it keeps files
    history: bool = False  # it keeps each session's messages (counted in the row's retained history)
    remove: Callable[[], Awaitable[Removal]] | None = None  # None: the temporary folder goes with the row's

    def describe(self) -> str:
        return f"{self.kind}: {self.where}"


# How a provider is run on a store of the lab's own: given the row's temporary folder, a LabStore.
Move = Callable[[Path], LabStore]


def _files(folder: Path) -> str:
    files = [p for p in folder.rglob("*") if p.is_file()] if folder.is_dir() else []
    return f"{len(files):,} file(s), {sum(p.stat().st_size for p in files):,} bytes"


def _copy(original: Path, into: Path) -> Path:
    """`original` copied to `into` (the workbench's lock file left out; a link's target copied, so nothing
    the lab writes reaches the user's through it); an empty folder when `original` holds none."""
    if original.is_dir():
        shutil.copytree(original, into, ignore=shutil.ignore_patterns(OTHERS_LOCK_FILE))
    else:
        into.mkdir(parents=True)
    return into


def _copied(original: Path, folder: Path) -> str:
    return f"on a copy of {original} ({_files(folder)} when copied), in {folder}; removed afterwards"


def _file_history(provider: FileHistoryProvider) -> Move:
    """The framework's own class, built again on the copy with the user's options (a subclass's own
    arguments are not known: it is not moved)."""

    def move(row: Path) -> LabStore:
        folder = _copy(provider.storage_path, row / f"history-{uuid.uuid4().hex[:8]}")
        clone = FileHistoryProvider(
            folder,
            source_id=provider.source_id,
            load_messages=provider.load_messages,
            store_inputs=provider.store_inputs,
            store_context_messages=provider.store_context_messages,
            store_context_from=provider.store_context_from,
            store_outputs=provider.store_outputs,
            skip_excluded=provider.skip_excluded,
            serialization_format=provider.serialization_format,
        )
        clone.dumps, clone.loads = provider.dumps, provider.loads
        where = _copied(provider.storage_path.resolve(), folder)
        return LabStore(type(provider).__name__, clone, where, folder, history=True)

    return move


def _file_memory(provider: FileMemoryProvider, store: FileSystemAgentFileStore) -> Move:
    def move(row: Path) -> LabStore:
        folder = _copy(store.root_path, row / f"files-{uuid.uuid4().hex[:8]}")
        clone = copy.copy(provider)  # its scope, instructions and source; only its store is the lab's
        clone.store = FileSystemAgentFileStore(folder)
        return LabStore(type(provider).__name__, clone, _copied(store.root_path, folder), folder)

    return move


def _extracted(provider: ContextProvider, base: Path) -> Move:
    def move(row: Path) -> LabStore:
        folder = _copy(base, row / f"extracted-{uuid.uuid4().hex[:8]}")
        clone = extracted.on_folder(provider, folder)
        return LabStore(type(provider).__name__, clone, _copied(base.resolve(), folder), folder)

    return move


def _redis(provider: ContextProvider) -> Move:
    """Imported only when one is found: the Redis support is optional."""
    module = importlib.import_module("workbench.agentmem.redis_history")

    def move(row: Path) -> LabStore:
        lab: LabRedis = module.LabRedis(provider, f"{LAB_PREFIX}{uuid.uuid4().hex[:12]}-")

        async def remove() -> Removal:
            return Removal(*await lab.remove())

        return LabStore(type(provider).__name__, lab.provider, lab.where, history=True, remove=remove)

    return move


def how(provider: ContextProvider) -> Move | str | None:
    """How the lab runs `provider` on a store of its own (see the module); None when it keeps nothing
    outside the lab's sessions; else why the lab cannot redirect it, in a phrase."""
    kind = type(provider).__name__
    if isinstance(provider, InMemoryHistoryProvider):
        return None
    if isinstance(provider, FileHistoryProvider) and not extracted.is_extracted(provider):
        if type(provider) is not FileHistoryProvider:
            return f"{kind} is a class of its own over FileHistoryProvider: the lab cannot build it on a copy"
        return _file_history(provider)
    if isinstance(provider, FileMemoryProvider):
        if isinstance(provider.store, FileSystemAgentFileStore):
            return _file_memory(provider, provider.store)
        return f"{kind}'s {type(provider.store).__name__} is not a folder the lab can copy"
    if extracted.is_extracted(provider):
        store, base = extracted.store_of(provider)
        if base is None or not extracted.movable(store):
            return f"{kind}'s {type(store).__name__} is not a folder the lab can copy"
        return _extracted(provider, base)
    if type(provider).__module__.startswith(_REDIS_PACKAGE) and kind == "RedisHistoryProvider":
        try:
            return _redis(provider)
        except ImportError:
            return f"this workbench has no Redis support, so it cannot give {kind} a key prefix of the lab's"
    return f"the workbench does not know where {kind} keeps what it is given"


@dataclass(frozen=True)
class Refused:
    """A provider the lab cannot redirect, on the agent `agent`, and why."""

    agent: str
    kind: str
    why: str

    def describe(self) -> str:
        return f"{self.agent}'s {self.kind}: {self.why}"


SERVICE_STORE = "the service's store"


def _conversation(agent: Agent) -> str | None:
    named = agent.default_options.get("conversation_id")
    return named if isinstance(named, str) and named else None


def unstored(agent: Agent) -> str | None:
    """For the lab's `agent` (on the client it runs on in the lab): its options set to `store=False` when
    that client would keep its responses on the service (see the module), and what that does, in a
    phrase; None when the service keeps nothing, or when a conversation its options name would keep it
    anyway (`refused` names that)."""
    if kept_on_service(agent) is None or _conversation(agent) is not None:
        return None
    agent.default_options["store"] = False
    return (
        f"{SERVICE_STORE} ({type(agent.client).__name__}): run with store=False for the lab, so the service "
        "keeps none of its responses; the lab's history sends the conversation instead of previous_response_id"
    )


def refused(agents: Sequence[Agent]) -> list[Refused]:
    """The providers on `agents` the lab cannot run on stores of its own (each once), and a conversation
    on the model service an agent's options name."""
    found: list[Refused] = []
    seen: set[int] = set()
    for agent in agents:
        if (conversation := _conversation(agent)) is not None and kept_on_service(agent) is not None:
            kept = f"its options name the conversation {conversation}, which keeps every item the lab would send"
            found.append(Refused(agent.name or "?", SERVICE_STORE, kept))
        for provider in agent.context_providers:
            why = how(provider)
            if isinstance(why, str) and id(provider) not in seen:
                seen.add(id(provider))
                found.append(Refused(agent.name or "?", type(provider).__name__, why))
    return found


def lab_stores(agents: Sequence[Agent]) -> list[str]:
    """What the lab runs `agents`' memories on instead of their stores, each kind once, in phrases: "copies
    of their folders" for a folder's, "a key prefix of the lab's on their Redis server" for Redis's;
    nothing for a memory that keeps nothing outside the lab's sessions or one the lab cannot redirect."""
    folders, redis = "copies of their folders", "a key prefix of the lab's on their Redis server"
    kinds = {
        redis if type(provider).__module__.startswith(_REDIS_PACKAGE) else folders
        for agent in agents
        for provider in agent.context_providers
        if callable(how(provider))
    }
    return [kind for kind in (folders, redis) if kind in kinds]


def withheld(agents: Sequence[Agent]) -> str:
    """Why the lab does not run `agents`' rows without ALLOW_OPTION ("" when every memory of theirs can
    be redirected): one phrase."""
    cannot = refused(agents)
    if not cannot:
        return ""
    named = "; ".join(r.describe() for r in cannot)
    return f"not run: it would write the story into your own store ({named}); {ALLOW_OPTION} runs it there, as it is"


@dataclass
class LabStores:
    """The stores of one row: each memory of its agents on a store of the lab's own (or, allowed, as it
    is), made when the row is built; `provider(p)` is what the row's agent carries instead of `p`."""

    folder: Path = field(default_factory=lambda: Path(tempfile.mkdtemp(prefix=LAB_PREFIX)))
    stores: dict[int, LabStore] = field(default_factory=dict)  # by the user's provider's id
    services: dict[str, str] = field(default_factory=dict)  # by agent name: what `unstored` did
    _removed: list[Removal] = field(default_factory=list)

    def provider(self, original: ContextProvider) -> ContextProvider:
        """The provider the row runs for the user's `original`: on the lab's store (made on first use, one
        per store, so two agents sharing one share the lab's), or `original` itself when it keeps nothing
        outside the lab's sessions or the user allowed it."""
        if (made := self.stores.get(id(original))) is not None:
            return made.provider
        move = how(original)
        if move is None:
            return original
        if isinstance(move, str):  # allowed (`withheld`): the user's own store
            made = LabStore(type(original).__name__, original, f"as it is, writing into your own store ({move})")
        else:
            made = move(self.folder)
        self.stores[id(original)] = made
        return made.provider

    def unstored(self, agent: Agent, original: Agent) -> None:
        """The row's `agent`, built from the user's `original`, keeps nothing on the model service
        (`unstored`), and `describe` says so."""
        if (done := unstored(agent)) is not None:
            self.services[original.name or ""] = done

    def describe(self, agent: Agent) -> tuple[str, ...]:
        """Each memory of the user's `agent` with where this row keeps it."""
        service = self.services.get(agent.name or "")
        extra = (service,) if service else ()
        if not agent.context_providers:
            return ("none: the framework's in-memory history, in the lab's own sessions", *extra)
        memories = tuple(
            made.describe()
            if (made := self.stores.get(id(p))) is not None
            else f"{type(p).__name__}: in the lab's own sessions"
            for p in agent.context_providers
        )
        return (*memories, *extra)

    async def messages(self, agent: Agent, session: AgentSession) -> list[Message]:
        """What the row's histories kept (on the lab's stores) for `session` of its agent `agent`."""
        kept: list[Message] = []
        for made in self.stores.values():
            lab = made.provider
            if made.history and isinstance(lab, HistoryProvider) and lab in agent.context_providers:
                kept += await lab.get_messages(session.session_id, state=session.state.get(lab.source_id, {}))
        return kept

    def on_disk(self) -> int | None:
        """Bytes of every file in the row's copies now; None when none of its memories keeps files."""
        folders = [made.folder for made in self.stores.values() if made.folder is not None]
        return sum(folder_size(f) for f in folders) if folders else None

    async def close(self) -> None:
        """Remove what the row wrote: its stores on servers (each verified) and its temporary folder."""
        for made in self.stores.values():
            if made.remove is not None:
                self._removed.append(await made.remove())
        copies = [made for made in self.stores.values() if made.folder is not None]
        shutil.rmtree(self.folder, ignore_errors=True)
        if copies:
            left = self.folder.exists()
            self._removed.append(
                Removal(
                    f"the lab's copies in {self.folder}: {'NOT removed' if left else 'removed'}",
                    not left,
                )
            )

    def removed(self) -> list[Removal]:
        return list(self._removed)
