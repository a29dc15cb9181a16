"""Mem0 (seed 002) as the app runs it: agent-framework-mem0's `Mem0ContextProvider` over the
open-source mem0ai library (`AsyncMemory`), configured locally and shared by both agents.

- Its language model and embedder are the app's OpenAI-compatible model and embeddings endpoint.
- Its files live in one directory (default: mem0/ in the user's data directory), user-only:
  `history.db` (SQLite: every memory's change history and the raw messages Mem0 was given),
  `qdrant/` (Qdrant's local mode: each collection's points, payload text included, in a
  `storage.sqlite`), and `config.json` (mem0's own anonymous id; no user text).
- Telemetry is off: MEM0_TELEMETRY is set to false before mem0 is first imported (it reads it then,
  and also skips its remote notice configuration when it is off); a mem0 imported earlier with
  telemetry on is refused.
- Each agent stores under its own agent id and the one user id; each searches the whole user.
- Its language-model and embeddings requests are recorded in the call log of the agent whose turn made
  them ("Mem0" and "Mem0 embeddings" calls, mem0_calls.py): F2 lists them, usage counts them.
- Forget deletes every memory holding a forgotten value through Mem0's API (`delete`), then removes
  what Mem0 itself keeps of them (its history rows, which `delete` fills with the deleted text, and
  the raw messages it saved), and rewrites every SQLite file (VACUUM) so no deleted byte is left.
"""

from __future__ import annotations

import asyncio
import logging
import math
import os
import sqlite3
import sys
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from workbench.agentmem.base import MEM0_CALL, MEM0_EMBEDDINGS_CALL, USER_ID
from workbench.agentmem.mem0_calls import RecordedOpenAI, recording_for
from workbench.files import private_dir, private_file, private_tree
from workbench.memory.forget import ForgetPlan, declared_in
from workbench.runtime.remembered import HeldItem
from workbench.runtime.view import RecalledMessage

if TYPE_CHECKING:
    from agent_framework import AgentSession, ContextProvider, SessionContext, SupportsAgentRun
    from mem0 import AsyncMemory

    from workbench.agentmem.mem0_config import Mem0Config

COLLECTION = "workbench"
HISTORY_FILE = "history.db"
QDRANT_DIR = "qdrant"
SOURCE_ID = "mem0"
# Mem0's get_all stops at top_k; the view and forget want every memory.
_ALL = 1_000_000
_PROBE = "dimension probe"
MEMORY = "memory"  # the kind of a held item that is one of Mem0's memories (its name is the memory's id)


def _import_mem0(directory: Path) -> None:
    """Import mem0 with its telemetry off and its own files in `directory`: mem0 reads MEM0_TELEMETRY
    and MEM0_DIR once, when it is first imported (and writes MEM0_DIR/config.json then)."""
    if "mem0" not in sys.modules:
        os.environ["MEM0_TELEMETRY"] = "false"
        os.environ["MEM0_DIR"] = str(directory)
    # Its warnings (spaCy and fastembed absent: no entity boosts, no BM25) would print over the TUI;
    # its errors still show, and the failures themselves reach the caller.
    logging.getLogger("mem0").setLevel(logging.ERROR)
    from mem0.memory import main, telemetry

    if telemetry.MEM0_TELEMETRY or main.MEM0_TELEMETRY:
        raise RuntimeError("mem0 was imported with its telemetry on before workbench could turn it off")


def sqlite_files(directory: Path) -> Iterator[Path]:
    """Every SQLite database Mem0 keeps under `directory`: its history and each Qdrant collection."""
    history = directory / HISTORY_FILE
    if history.exists():
        yield history
    yield from sorted((directory / QDRANT_DIR).rglob("storage.sqlite"))


class Mem0Memory:
    """Mem0 for both agents: the runtime's `AgentMemory` and a holder registered with the one forget."""

    name = "Mem0"
    unit = "memory(ies) deleted through Mem0, its files rewritten"

    def __init__(self, config: Mem0Config) -> None:
        self.config = config
        self.directory = config.path
        self._memory: AsyncMemory | None = None
        self._dimensions_seen: int | None = None
        self._providers: list[Any] = []  # each agent's provider: it is handed the open Mem0 at each run
        self._lock = asyncio.Lock()  # a forget never runs beside an add or a search
        self._recalled: dict[str, list[str]] = {}
        self.generation = 0  # advances at every forget; a turn that began before it stores nothing

    @property
    def location(self) -> str | None:
        return str(self.directory)

    def describe(self) -> str:
        return f"{self.config.model} extracts, {self.config.embedding_model} embeds, local Qdrant"

    def open(self) -> AsyncMemory:
        """Mem0 on this directory: created user-only if new, Qdrant's local mode, SQLite history."""
        if self._memory is not None:
            return self._memory
        private_dir(self.directory)
        private_file(self.directory / HISTORY_FILE)  # SQLite takes an empty file as a new database
        _import_mem0(self.directory)
        from mem0 import AsyncMemory
        from mem0.configs.base import MemoryConfig

        llm_client, embed_client = self._clients()
        config = MemoryConfig(
            llm={"provider": "openai", "config": {"model": self.config.model, "api_key": "unused"}},
            embedder={"provider": "openai", "config": {"model": self.config.embedding_model, "api_key": "unused"}},
            vector_store={
                "provider": "qdrant",
                "config": {
                    "collection_name": COLLECTION,
                    "path": str(self.directory / QDRANT_DIR),
                    "embedding_model_dims": self._dimensions(embed_client),
                    "on_disk": True,
                },
            },
            history_db_path=str(self.directory / HISTORY_FILE),
        )
        with warnings.catch_warnings():
            # qdrant-client's local mode opens a probe connection to SQLite ':memory:' and leaves it to the
            # garbage collector (qdrant_client/local/persistence.py, `with sqlite3.connect(...)` closes
            # nothing); Python 3.13 warns of it (ResourceWarning) at once, here.
            warnings.filterwarnings("ignore", "unclosed database", ResourceWarning)
            memory = AsyncMemory(config)
        # mem0 builds its OpenAI clients with no timeout and an environment override
        # (OPENAI_BASE_URL); these are the app's, bounded by --timeout, and their requests recorded.
        memory.llm.client = RecordedOpenAI(llm_client, self.config.model, purpose=MEM0_CALL)
        memory.embedding_model.client = RecordedOpenAI(
            embed_client, self.config.embedding_model, purpose=MEM0_EMBEDDINGS_CALL
        )
        private_tree(self.directory)
        self._memory = memory
        return memory

    def _clients(self) -> tuple[Any, Any]:
        from openai import OpenAI

        from workbench.runtime.models import LOCAL_PLACEHOLDER_KEY

        key = self.config.api_key or LOCAL_PLACEHOLDER_KEY
        timeout = self.config.timeout
        return (
            OpenAI(api_key=key, base_url=self.config.base_url, timeout=timeout, max_retries=1),
            OpenAI(api_key=key, base_url=self.config.embedding_base_url, timeout=timeout, max_retries=1),
        )

    def _dimensions(self, client: Any) -> int:
        """The embedding size the server returns (the vector store is created with it), asked once."""
        if self._dimensions_seen is not None:
            return self._dimensions_seen
        data = client.embeddings.create(input=[_PROBE], model=self.config.embedding_model).data
        vector = data[0].embedding if data else None
        if not isinstance(vector, list) or not vector or not all(isinstance(x, int | float) for x in vector):
            raise ValueError(
                f"the embeddings server did not return one vector of numbers for {self.config.embedding_model!r} "
                "(a chat model served for embeddings returns one vector per token)"
            )
        self._dimensions_seen = len(vector)
        return len(vector)

    def providers(self, agent: str) -> list[ContextProvider]:
        provider = _provider(self, agent)
        self._providers.append(provider)
        return [provider]

    def turn_started(self, agent: str) -> None:
        self._recalled.pop(agent, None)

    def recalled(self, agent: str) -> list[RecalledMessage]:
        """The memories Mem0 put into `agent`'s latest turn. Mem0's provider does not pass on its
        scores, so the distance is NaN (unknown), never a made-up number."""
        return [
            RecalledMessage(text, "memory", math.nan, "Mem0", "any session", 0)
            for text in self._recalled.get(agent, [])
        ]

    def note_recalled(self, agent: str, texts: list[str]) -> None:
        self._recalled[agent] = texts

    def _reachable(self) -> bool:
        """Whether there is anything to reach: Mem0 ran, or an earlier run left its files."""
        return self._memory is not None or (self.directory / HISTORY_FILE).exists()

    async def held(self) -> list[HeldItem]:
        """What Mem0 holds now for the user: each memory through its API (kind "memory", named by its
        id), then each of its SQLite files with what it keeps of them (for a live view)."""
        if not self._reachable():
            return []
        async with self._lock:
            memories = await self._memories()
            return [*memories, *await asyncio.to_thread(self._files, memories)]

    async def memories(self) -> list[HeldItem]:
        """Each memory Mem0 holds now for the user, through its API."""
        if not self._reachable():
            return []
        async with self._lock:
            return await self._memories()

    async def _memories(self) -> list[HeldItem]:
        found = await self.open().get_all(filters={"user_id": USER_ID}, top_k=_ALL)
        # Oldest first (Mem0 lists them in its store's order, which changes from run to run).
        listed = sorted(found.get("results", []), key=lambda m: (str(m.get("created_at")), str(m.get("memory"))))
        return [
            HeldItem(MEMORY, str(m["id"]), f"stored by the {m.get('agent_id') or '?'} agent", str(m.get("memory", "")))
            for m in listed
        ]

    def _files(self, memories: list[HeldItem]) -> list[HeldItem]:
        """Its SQLite files: the history database (every change of a memory, and the messages Mem0 was
        given) and each Qdrant collection's storage (each memory above with its vector)."""
        items: list[HeldItem] = []
        for path in sqlite_files(self.directory):
            name = path.relative_to(self.directory).as_posix()
            if path.name == HISTORY_FILE:
                what, texts = "every change of a memory and the messages Mem0 was given", self._kept_texts()
            else:
                what, texts = "Qdrant's local storage: each memory above with its vector", [m.content for m in memories]
            items.append(HeldItem("file", name, what, "\n".join(texts), path.stat().st_size))
        return items

    def _kept_texts(self) -> list[str]:
        """The text Mem0 keeps beside its memories: history rows and the messages it was given."""
        path = self.directory / HISTORY_FILE
        if not path.exists():
            return []
        connection = sqlite3.connect(path)
        try:
            rows = connection.execute(
                "SELECT old_memory FROM history UNION ALL SELECT new_memory FROM history "
                "UNION ALL SELECT content FROM messages"
            ).fetchall()
        except sqlite3.OperationalError:  # a file Mem0 has not set up yet
            return []
        finally:
            connection.close()
        return [text for (text,) in rows if isinstance(text, str)]

    async def declared(self, keys: frozenset[str]) -> set[str]:
        """Every value the memories, their history or the messages Mem0 was given declared for `keys`."""
        if not self._reachable():
            return set()
        async with self._lock:
            texts = [m.content for m in await self._memories()]
        return declared_in([*texts, *self._kept_texts()], keys)

    async def erase(self, plan: ForgetPlan) -> int:
        """Delete through Mem0's API every memory holding a forgotten value (every memory of the user
        for a forget of everything), then what Mem0 keeps of them beside, then rewrite the files.
        Mem0 is closed meanwhile and reopened at its next use: Qdrant's local mode keeps a deleted
        point's payload in memory (only marked deleted) until its collection is loaded again."""
        self.generation += 1
        self._recalled.clear()
        if not self._reachable():
            return 0
        async with self._lock:
            memory = self.open()
            doomed = [m for m in await self._memories() if plan.everything or plan.holds(m.content)]
            for item in doomed:
                await memory.delete(item.name)
            if memory._entity_store is not None:  # private: the entity store exists only once mem0 used it
                await asyncio.to_thread(self._forget_entities, memory, plan)
            self._release()
            await asyncio.to_thread(self._forget_kept, plan, {m.name for m in doomed})
            await asyncio.to_thread(self._rewrite)
        return len(doomed)

    def _forget_entities(self, memory: AsyncMemory, plan: ForgetPlan) -> None:
        """Entities mem0 extracted (with spaCy, when installed) whose text holds a forgotten value."""
        store = memory.entity_store
        rows = store.list(filters={"user_id": USER_ID}, top_k=_ALL)
        listed = rows[0] if rows and isinstance(rows[0], list) else rows
        for row in listed or []:
            text = str((row.payload or {}).get("data", ""))
            if plan.everything or plan.holds(text):
                store.delete(vector_id=row.id)

    def _forget_kept(self, plan: ForgetPlan, deleted: set[str]) -> None:
        """History rows of the deleted memories (Mem0's delete writes the deleted text into one) and
        any holding a value; the raw messages holding a value (all of them for everything)."""
        connection = sqlite3.connect(self.directory / HISTORY_FILE)
        try:
            with connection:
                history = connection.execute("SELECT id, memory_id, old_memory, new_memory FROM history").fetchall()
                gone = [
                    (row_id,)
                    for row_id, memory_id, old, new in history
                    if plan.everything or memory_id in deleted or any(plan.holds(t) for t in (old, new) if t)
                ]
                connection.executemany("DELETE FROM history WHERE id = ?", gone)
                messages = connection.execute("SELECT id, content FROM messages").fetchall()
                said = [(row_id,) for row_id, text in messages if plan.everything or plan.holds(text or "")]
                connection.executemany("DELETE FROM messages WHERE id = ?", said)
        finally:
            connection.close()

    def _rewrite(self) -> None:
        """VACUUM every SQLite file: the database is rebuilt from its live rows, so no deleted row's
        bytes stay in free pages. The rollback journal SQLite writes meanwhile is removed at commit."""
        for path in sqlite_files(self.directory):
            connection = sqlite3.connect(path)
            try:
                connection.execute("VACUUM")
            finally:
                connection.close()
        private_tree(self.directory)

    async def close(self) -> None:
        """Release the files (Qdrant's local mode locks its folder against a second client)."""
        async with self._lock:
            self._release()

    def _release(self) -> None:
        """Close Mem0's database and Qdrant client, and let go of everything they loaded."""
        if self._memory is not None:
            self._memory.close()
            self._memory.vector_store.client.close()
            self._memory = None
        for provider in self._providers:
            provider.mem0_client = None


def _provider(owner: Mem0Memory, agent: str) -> ContextProvider:
    from agent_framework_mem0 import Mem0ContextProvider

    class WorkbenchMem0Provider(Mem0ContextProvider):
        """agent-framework-mem0's provider, run one at a time with a forget: a turn that began before a
        forget stores nothing (its messages may hold what was forgotten); what it recalled is kept
        for the view."""

        async def before_run(
            self, *, agent: SupportsAgentRun, session: AgentSession, context: SessionContext, state: dict[str, Any]
        ) -> None:
            state["generation"] = owner.generation
            async with owner._lock:
                self.mem0_client = owner.open()
                with recording_for(agent):
                    await super().before_run(agent=agent, session=session, context=context, state=state)
            # The provider injects one message: its context prompt, then one memory per line.
            injected = [
                m.text.removeprefix(self.context_prompt) for m in context.context_messages.get(self.source_id, [])
            ]
            owner.note_recalled(agent_name, [line for text in injected for line in text.splitlines() if line.strip()])

        async def after_run(
            self, *, agent: SupportsAgentRun, session: AgentSession, context: SessionContext, state: dict[str, Any]
        ) -> None:
            async with owner._lock:
                if state.get("generation") != owner.generation:
                    return
                self.mem0_client = owner.open()
                with recording_for(agent):
                    await super().after_run(agent=agent, session=session, context=context, state=state)
            await asyncio.to_thread(private_tree, owner.directory)

    agent_name = agent
    return WorkbenchMem0Provider(
        source_id=SOURCE_ID,
        mem0_client=owner.open(),
        user_id=USER_ID,
        agent_id=agent,
        search_user_id=USER_ID,
    )
