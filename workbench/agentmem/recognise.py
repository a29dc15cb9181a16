"""The memories on the user's own agents (`workbench.loading`), recognised by their providers' classes:
each becomes an `AgentMemory` whose provider already sits on the agent (`providers` gives none), so it
is listed in "What is remembered" (F3) and reached by the one forget as the workbench's own memories.

- `InMemoryHistoryProvider`: nothing here. Its messages live in the session's state, which the
  runtime's "agent sessions" holder lists (`workbench.runtime.loaded.in_memory_messages`) and
  replaces at every forget; a memory of its own would count them twice.
- `FileHistoryProvider`: its session files (`file_history.py`).
- `FileMemoryProvider` on a `FileSystemAgentFileStore`: its working folder (its scope's, or each
  session's when it has no scope), through `files.py`.
- The framework's extracted memory on its file store: every owner's memory in its store, through
  `extracted.py` (which alone knows its classes; on a framework that no longer has them, none is found).
- The workbench's own `RecallProvider`: its store, within the scope it stores and searches.
- `RedisHistoryProvider` (agent-framework-redis): `redis_history.py`, imported when one is found.
- The providers the workbench adds (its working memory, its histories, the memories it runs):
  skipped, each is listed and forgotten as the workbench's own.
- Not a provider but the agent's chat client: a client that keeps the conversation on the model service
  (the Responses API with `store` on or unset, a conversation id in the agent's options) is a memory of
  its own, one per agent, "<agent>: the service's store (<client class>)" (`workbench.runtime.service_store`).
- Anything else: read where the process holds it (its session state and its attributes, walked with
  bounds: `workbench.runtime.inprocess`), cleared there by a forget and looked at again; what it keeps
  outside the process is said to be not known, in F3 and in the forget's report.
- The above on a store the workbench cannot read, and Mem0's provider (see `_MEM0`): listed by its class
  with "forget cannot reach this", and a forget reports it NOT reached (`NotReached`: no failure, so it
  does not keep the forget's journal open for ever).

One memory per store: a provider shared by several agents, or two providers over one folder, are one
memory named after every agent that uses it, "triage, notes: FileHistoryProvider"."""

from __future__ import annotations

import asyncio
import importlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agent_framework import (
    Agent,
    ContextProvider,
    FileHistoryProvider,
    FileMemoryProvider,
    FileSystemAgentFileStore,
    InMemoryHistoryProvider,
    SessionContext,
)

from workbench.agentmem.base import FileBackedMemory, OnTheirAgents
from workbench.agentmem.extracted import ExtractedMemory, is_extracted, owners, store_of
from workbench.agentmem.file_history import FileHistoryMemory
from workbench.agentmem.files import FileMemory
from workbench.memory.forget import ForgetPlan
from workbench.memory.holder_kinds import UNREACHABLE, NotReached
from workbench.recall.provider import RecallProvider
from workbench.recall.records import SCOPE_FIELDS, RecallScope
from workbench.recall.setup import RecallSetup
from workbench.runtime.inprocess import InProcess
from workbench.runtime.loaded import provider_clients
from workbench.runtime.remembered import HeldItem
from workbench.runtime.service_store import ServiceStore, kept_on_service

if TYPE_CHECKING:
    from workbench.runtime.memories import AgentMemory

_REDIS_PACKAGE = "agent_framework_redis"
_MEM0_PACKAGE = "agent_framework_mem0"
_MEM0 = (
    "Mem0's provider runs the client its author configured (any vector store, or Mem0's platform): the "
    "workbench deletes and erases Mem0 memories only in the Mem0 it configures itself (--agent-memory mem0), "
    f"whose files it knows; {UNREACHABLE}"
)


@dataclass(frozen=True)
class Unreached(OnTheirAgents):
    """A memory the workbench cannot reach: listed by its class, and a forget reports it NOT reached."""

    name: str
    unreachable: str = UNREACHABLE  # why, said in F3, in the forget's question and in its report
    unit = "nothing (not reached)"
    location: str | None = None

    def describe(self) -> str:
        return self.unreachable

    async def held(self) -> list[HeldItem]:
        return []

    async def declared(self, keys: frozenset[str]) -> set[str]:
        return set()

    async def erase(self, plan: ForgetPlan) -> int:
        raise NotReached(self.unreachable)


class Gathered(OnTheirAgents):
    """One provider's memory kept in several folders found anew at every call (each session's working
    folder of a `FileMemoryProvider` without a scope, each owner's memory in extracted memory's store), each
    read and forgotten by the workbench's own memory of that kind (`parts`). `unnamed`: folders it
    finds but cannot open as its kind does (an owner named by a digest): a forget reaches the others,
    then says these were not reached."""

    def __init__(
        self,
        name: str,
        framework_name: str,
        location: Path,
        parts: Callable[[], list[FileBackedMemory]],
        unnamed: Callable[[], list[Path]] = list,
    ) -> None:
        self.name = name
        self.unit = "memory file(s) deleted or rewritten"
        self.framework_name = framework_name
        self.root = location
        self._parts = parts
        self._unnamed = unnamed

    @property
    def location(self) -> str | None:
        return str(self.root)

    @property
    def unreachable(self) -> str | None:
        """Why a part of it cannot be reached, if one cannot (asked before a forget; a folder that
        cannot be listed now is the forget's failure, said then)."""
        try:
            unnamed = self._unnamed()
        except OSError:
            return None
        if not unnamed:
            return None
        names = ", ".join(p.name for p in unnamed)
        return f"{len(unnamed)} folder(s) whose owner the workbench cannot name ({names}): {UNREACHABLE}"

    def describe(self) -> str:
        """For the header: counts the files, reads none (says so when its folder cannot be listed)."""
        try:
            files = sum(part.file_count() for part in self._parts())
        except OSError as exc:
            return f"{self.framework_name}, its folder cannot be read ({type(exc).__name__}: {exc})"
        missed = self.unreachable
        return f"{self.framework_name}, {files} file(s){f'; {missed}' if missed else ''}"

    async def held(self) -> list[HeldItem]:
        """Every part's files, each named by its path under this memory's folder."""
        items: list[HeldItem] = []
        for part in await asyncio.to_thread(self._parts):
            under = part.folder.relative_to(self.root).as_posix()
            items += [replace(item, name=f"{under}/{item.name}") for item in await part.held()]
        return items

    async def declared(self, keys: frozenset[str]) -> set[str]:
        found: set[str] = set()
        for part in await asyncio.to_thread(self._parts):
            found |= await part.declared(keys)
        return found

    async def erase(self, plan: ForgetPlan) -> int:
        reached = sum([await part.erase(plan) for part in await asyncio.to_thread(self._parts)])
        if why := self.unreachable:
            raise NotReached(f"{reached:,} file(s) of the others deleted or rewritten; {why}")
        return reached


@dataclass
class LoadedRecall(RecallSetup):
    """The workbench's own recall provider on a user's agent: its store, within the scope that holds
    what it stored and what it searches (the ids both scopes share; its sessions all)."""

    label: str = ""
    scope: RecallScope = field(default_factory=RecallScope)
    used: bool = True  # the provider may have stored already: always look

    def __post_init__(self) -> None:
        self.name = self.label

    @property
    def search_scope(self) -> RecallScope:
        return self.scope

    def providers(self, agent: str) -> list[ContextProvider]:
        return []


def recall_scope(provider: RecallProvider) -> RecallScope:
    """The narrowest scope that holds every record `provider` stores and every one it searches."""
    stored, searched = provider.storage_scope, provider.search_scope
    shared = {f: getattr(stored, f) for f in SCOPE_FIELDS if getattr(stored, f) == getattr(searched, f)}
    if stored.session_id is None:  # it stores under each running session
        shared.pop("session_id", None)
    return RecallScope(**shared)


def _file_memory(provider: FileMemoryProvider, name: str) -> AgentMemory:
    store = provider.store
    if not isinstance(store, FileSystemAgentFileStore):
        return Unreached(name, f"its {type(store).__name__} keeps files the workbench cannot read: {UNREACHABLE}")
    root = store.root_path

    def folders() -> list[FileBackedMemory]:
        if provider.scope:
            # The provider's own derivation of its folder from its scope (private: no public name for it).
            return [FileMemory.over(store, provider._resolve_working_folder(SessionContext(input_messages=[])))]
        found = sorted(p.name for p in root.iterdir() if p.is_dir() and not p.is_symlink()) if root.is_dir() else []
        return [FileMemory.over(store, folder) for folder in found]  # each session's

    return Gathered(name, "FileMemoryProvider", root, folders)


def _extracted(provider: ContextProvider, name: str) -> AgentMemory:
    store, base = store_of(provider)
    if base is None:
        return Unreached(name, f"its {type(store).__name__} keeps memory the workbench cannot read: {UNREACHABLE}")

    def parts() -> list[FileBackedMemory]:
        return [ExtractedMemory(base, user_id=o, provider=provider) for o in owners(provider)[0]]

    return Gathered(name, ExtractedMemory.framework_name, base.resolve(), parts, lambda: owners(provider)[1])


def _redis(provider: ContextProvider, name: str, agents: Sequence[str]) -> AgentMemory:
    """The Redis support's memory (named by it after the `agents`), imported only when one is found."""
    try:
        module = importlib.import_module("workbench.agentmem.redis_history")
    except ImportError:
        return Unreached(name, f"this workbench has no Redis support: {UNREACHABLE}")
    memory: AgentMemory = module.redis_history_memory(provider, ", ".join(agents))
    return memory


# How a memory is made of a provider, its name, and the agents that use it.
Build = Callable[[Any, str, Sequence[str]], "AgentMemory"]


def _named(make: Callable[[Any, str], AgentMemory]) -> Build:
    return lambda provider, name, _: make(provider, name)


@dataclass
class _Found:
    """One store and the agents whose providers use it, in the order they were found."""

    provider: ContextProvider
    build: Build
    agents: list[str] = field(default_factory=list)


def _workbenchs(provider: ContextProvider) -> bool:
    """Whether `provider` is one the workbench adds to an agent (its working memory, its histories, the
    memories it runs), each listed and forgotten as the workbench's own; its recall provider is one a
    user may put on an agent, and is recognised."""
    kind = type(provider)
    return kind.__module__.startswith("workbench.") and kind is not RecallProvider


def _kind(provider: ContextProvider) -> tuple[object, Build] | None:
    """What identifies `provider`'s store, and how its memory is made; None for a provider that keeps
    nothing of its own (in-memory history) or is the workbench's own."""
    if isinstance(provider, InMemoryHistoryProvider) or _workbenchs(provider):
        return None
    if isinstance(provider, FileHistoryProvider):
        return ("history", provider.storage_path.resolve(), provider.serialization_format), _named(FileHistoryMemory)
    if isinstance(provider, FileMemoryProvider):
        files = provider.store
        where = files.root_path.resolve() if isinstance(files, FileSystemAgentFileStore) else id(files)
        return ("files", where, provider.scope), _named(_file_memory)
    if is_extracted(provider):
        store, base = store_of(provider)
        return ("extracted", base.resolve() if base else id(store), provider.source_id), _named(_extracted)
    if isinstance(provider, RecallProvider):
        return ("recall", id(provider.store), recall_scope(provider)), _named(_recall)
    module = type(provider).__module__
    if module.startswith(_REDIS_PACKAGE) and type(provider).__name__ == "RedisHistoryProvider":
        return ("redis", id(provider)), _redis
    if module.startswith(_MEM0_PACKAGE):
        return ("mem0", id(provider)), _named(lambda _, name: Unreached(name, _MEM0))
    return ("unknown", id(provider)), _in_process


def _in_process(provider: ContextProvider, name: str, agents: Sequence[str]) -> AgentMemory:
    """A provider the workbench does not know: what it holds in this process is read (its session state,
    its attributes), what it keeps outside is said to be not known (`workbench.runtime.inprocess`)."""
    return InProcess(name, provider, tuple(agents))


def _recall(provider: RecallProvider, name: str) -> AgentMemory:
    return LoadedRecall(provider.store, provider.embedder, label=name, scope=recall_scope(provider))


def recognise(agents: Sequence[Agent]) -> tuple[AgentMemory, ...]:
    """One memory per store the `agents`' context providers keep, in the order the agents and their
    providers come; each named "<agents>: <provider class>", unique (`Forgetting.register` refuses
    a name twice). `agents`: the user's, as loaded; a provider the workbench adds is skipped (its
    working memory, its histories, the memories it runs: each is listed and forgotten as its own)."""
    found: dict[object, _Found] = {}
    for agent in agents:
        for provider in agent.context_providers:
            kind = _kind(provider)
            if kind is None:
                continue
            key, build = kind
            entry = found.setdefault(key, _Found(provider, build))
            if agent.name not in entry.agents:
                entry.agents.append(agent.name or "?")
    memories: list[AgentMemory] = []
    names: set[str] = set()
    for entry in found.values():
        users = ", ".join(entry.agents)
        name = f"{users}: {type(entry.provider).__name__}"
        if name in names:  # one agent with two stores of one class
            name = f"{name} ({entry.provider.source_id})"
        base, number = name, 2
        while name in names:
            name, number = f"{base} #{number}", number + 1
        names.add(name)
        memories.append(entry.build(entry.provider, name, entry.agents))
    on_service: dict[str, ServiceStore] = {}  # one per agent, found once however often it is listed
    for agent in agents:
        if (why := kept_on_service(agent)) is not None and (agent.name or "") not in on_service:
            client = type(agent.client).__name__
            on_service[agent.name or ""] = ServiceStore(f"{agent.name}: the service's store ({client})", agent, why)
    memories += on_service.values()
    memories += _provider_stores(agents, {id(s.client) for s in on_service.values()})
    return tuple(memories)


def _provider_stores(agents: Sequence[Agent], recorded: set[int]) -> list[ServiceStore]:
    """A store for each client a context provider calls itself that keeps what it is sent on the model
    service (the Responses API: `STORES_BY_DEFAULT`; the framework's `simple_context_provider` sample asks
    its client to extract the user's name with `store` unset), unless the store of an agent's own client
    (`recorded`) already records its calls: one per client, named after the first agent and provider."""
    stores: list[ServiceStore] = []
    for agent in agents:
        for client, holder in provider_clients(agent):
            if id(client) in recorded or getattr(client, "STORES_BY_DEFAULT", False) is not True:
                continue
            recorded.add(id(client))
            kind = type(client).__name__
            why = (
                f"{holder} calls {kind} itself, which leaves store unset (the Responses API) unless the call sets "
                "it, and the service's default keeps each response"
            )
            name = f"{agent.name}: {holder}'s own calls, the service's store ({kind})"
            stores.append(ServiceStore(name, agent, why, client=client, holder=holder))
    return stores


def folders(agents: Sequence[Agent]) -> list[Path]:
    """The folders the file-backed memories recognised on `agents` keep their files in (a history's
    storage path, a memory store's root), each once: what a start locks against a second process."""
    memories = recognise(agents)
    return sorted(
        {
            m.folder if isinstance(m, FileHistoryMemory) else m.root.resolve()
            for m in memories
            if isinstance(m, FileHistoryMemory | Gathered)
        }
    )
