"""Extracted long-term memory: Agent Framework's `MemoryContextProvider` over its `MemoryFileStore` in
the user's data directory, one owner (the user) for both agents.

After every answered turn the provider appends the turn to a transcript (JSON Lines, one file per
session), asks the agent's own model to extract up to five memories with its extraction prompt, and
appends each to a topic file (`topics/<slug>.md`) indexed by `MEMORY.md`; before every turn it injects
the index and up to three topic files whose words match the message. After five sessions and 24 hours
it consolidates each topic with the consolidation prompt. The framework writes these files with the
process umask; after each turn and each forget the whole folder is made user-only again (the folder
itself is 0700 from the start, so no other user could open them meanwhile).

A forget drops every topic memory that holds a forgotten value (the topic when none is left, or when
its name holds one), drops every transcript message that holds one, and rebuilds `MEMORY.md`. A turn
that a forget overlapped stores nothing (as recall).

The framework retires these classes (agent-framework-core 1.26 deprecates `MemoryContextProvider`,
`MemoryStore`, `MemoryFileStore`, `MemoryTopicRecord` and `MemoryIndexEntry`, "removed after December 31,
2026"; their successor `FileMemoryProvider` extracts nothing). This is the one module that names them:
it imports them guarded, and the rest of the workbench asks it (`unavailable`, `is_extracted`,
`store_of`, `owners`, `framework_parts`). On a framework without them `--agent-memory extracted` is
refused, the lab's policy is unavailable, and a user's agent cannot carry one. The framework's
deprecation warning is kept from the user's terminal (`retiring`)."""

from __future__ import annotations

import asyncio
import base64
import copy
import json
import os
import re
import shutil
import warnings
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from importlib.metadata import version
from pathlib import Path
from typing import Any, cast

from agent_framework import (
    AgentSession,
    ContextProvider,
    FileHistoryProvider,
    Message,
    SessionContext,
    SupportsChatGetResponse,
)

from workbench.agentmem.base import CONSOLIDATION_CALL, EXTRACTION_CALL, USER_ID, FileBackedMemory, line_holds
from workbench.files import erase_file, private_dir, private_tree, write_private
from workbench.memory.forget import ForgetPlan, declared_in
from workbench.runtime.calls import RecordingMiddleware, recorder_of
from workbench.runtime.config import ConfigError
from workbench.runtime.remembered import HeldItem

BOUND_OPTIONS = ("max_tokens", "extra_body")  # how an agent's reply bound travels (workbench.runtime.bounds)
OWNER_KEY = "workbench_memory_owner"  # the session-state key MemoryFileStore reads the owner from
FORGETS_KEY = "workbench_forgets_seen"  # how many forgets had run when the session's turn started
# MemoryFileStore writes each file through a work file of this name beside it, then renames it; a kill
# in between leaves it.
_WORK_FILE_PREFIX = ".maf-state-"
# What the framework's DeprecationWarning for each retiring class says (1.26).
RETIRING_WARNING = r"Memory(ContextProvider|Store|FileStore|TopicRecord|IndexEntry) is deprecated"
# The maintenance state's random id of each session's latest finished turn (1.26), as "What is remembered"
# shows it: a token the framework compares, never the user's text, and different on every run.
PENDING_TURN_IDS = "pending_turn_ids"
TURN_ID_SHOWN = "(turn id)"
# Set while the provider injects memory before a turn (`UserMemoryProvider.before_run`).
_injecting: ContextVar[bool] = ContextVar("workbench_extracted_injecting", default=False)
_LINE_BREAK = re.compile(rb"\r\n|\r|\n")  # what a text-mode read splits lines at (universal newlines)
_TAIL_BLOCK = 64 * 1024


@contextmanager
def retiring() -> Iterator[None]:
    """While the block runs, the framework's DeprecationWarning for the retiring classes is silenced:
    the workbench says in its docs that they retire, and refuses extracted memory once they are gone."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", RETIRING_WARNING, DeprecationWarning)
        yield


# The framework warns again from its own module whenever its provider builds one of its records during
# a turn, while other turns run: no block can hold that silence, so it is silenced for the process, as
# the framework's experimental warnings are (`workbench.agentmem`).
warnings.filterwarnings("ignore", RETIRING_WARNING, DeprecationWarning, module=r"agent_framework\.")

with retiring():  # importing them does not warn in 1.26; subclassing does
    try:
        from agent_framework import MemoryContextProvider, MemoryFileStore, MemoryTopicRecord
    except ImportError:
        _UNAVAILABLE: str | None = (
            f"agent-framework-core {version('agent-framework-core')} no longer has extracted memory "
            "(MemoryContextProvider, retired after 2026-12-31): use --agent-memory files (FileMemoryProvider, "
            "the memory files the model writes)"
        )
    else:
        _UNAVAILABLE = None

        class UserMemoryProvider(MemoryContextProvider):
            """The framework's provider with the user as the owner of every session, telling the workbench
            what it injected, and leaving the folder user-only after each turn."""

            def __init__(self, memory: ExtractedMemory, agent: str) -> None:
                super().__init__(store=memory.store)
                self._memory = memory
                self._agent = agent

            async def before_run(
                self, *, agent: Any, session: AgentSession, context: SessionContext, state: dict[str, Any]
            ) -> None:
                session.state[OWNER_KEY] = self._memory.user_id
                session.state[FORGETS_KEY] = self._memory.forgets
                token = _injecting.set(True)
                try:
                    await super().before_run(agent=agent, session=session, context=context, state=state)
                finally:
                    _injecting.reset(token)
                self._memory.injected(self._agent, context.context_messages.get(self.source_id, []))

            async def get_messages(
                self, session_id: str | None, *, state: dict[str, Any] | None = None, **kwargs: Any
            ) -> list[Message]:
                """The session's transcript; none while memory is injected before a turn with `recent_turns`
                0: the framework reads the whole transcript there and keeps none of it (it injects the last
                `recent_turns` turns), so every turn read all earlier ones back for nothing."""
                if _injecting.get() and self.recent_turns == 0:
                    return []
                return await super().get_messages(session_id, state=state, **kwargs)

            def _create_history_provider(self, session: AgentSession) -> FileHistoryProvider:
                """The framework's transcript provider, as it configures it, appending after a read of the
                transcript's last lines only (`TailCheckedTranscript`)."""
                transcript = super()._create_history_provider(session)
                transcript.__class__ = TailCheckedTranscript
                return transcript

            def _chat_client(  # type: ignore[override]
                self, agent: Any, *, override: SupportsChatGetResponse[Any] | None = None
            ) -> SupportsChatGetResponse[Any] | None:
                """The framework's choice of client (private: its only hook for the extraction client),
                bounded like the agent's own replies and recorded with the agent's calls (`MemoryClient`)."""
                client = super()._chat_client(agent, override=override)
                if client is None:
                    return None
                defaults = getattr(agent, "default_options", None) or {}
                bound = {k: v for k, v in defaults.items() if k in BOUND_OPTIONS}
                recorded = MemoryClient(client, bound, recorder_of(agent), self.extraction_prompt)
                return cast(SupportsChatGetResponse[Any], recorded)

            async def after_run(
                self, *, agent: Any, session: AgentSession, context: SessionContext, state: dict[str, Any]
            ) -> None:
                if session.state.get(FORGETS_KEY) != self._memory.forgets:
                    return  # a forget ran during this turn: its transcript and extraction could bring a value back
                try:
                    await super().after_run(agent=agent, session=session, context=context, state=state)
                finally:
                    private_tree(self._memory.root)


class TailCheckedTranscript(FileHistoryProvider):
    """The framework's JSON Lines transcript, whose append reads back only as many of the file's last
    messages as it is given. The framework's append reads the whole file, to drop the part of the new
    messages that repeats the file's end (`filter_new_messages`); with N new messages that part depends
    on the last N stored ones only, so the file written is byte for byte the framework's. Reading the
    whole transcript at every turn made each turn slower than the one before (a 1,000-turn lab spent
    most of extracted memory's 31 s there). Every other read, and the MessagePack format, are the
    framework's own."""

    _tail: int | None = None  # during an append: how many of the file's last messages it reads

    async def save_messages(
        self, session_id: str | None, messages: Sequence[Message], *, state: dict[str, Any] | None = None, **kw: Any
    ) -> None:
        self._tail = len(messages)  # the framework makes a provider per call: nothing else reads this one
        try:
            await super().save_messages(session_id, messages, state=state, **kw)
        finally:
            self._tail = None

    def _read_json_messages(self, file_path: Path) -> list[Message]:
        if self._tail is None:
            return super()._read_json_messages(file_path)
        messages = []
        for line in last_lines(file_path, self._tail):
            try:
                payload = self.loads(line)
            except (TypeError, ValueError) as exc:
                raise ValueError(f"Failed to deserialize one of the last history lines of '{file_path}'.") from exc
            if not isinstance(payload, dict):
                raise ValueError(f"A history record near the end of '{file_path}' did not deserialize to a mapping.")
            messages.append(Message.from_dict(payload))
        return messages


def last_lines(path: Path, count: int) -> list[str]:
    """The last `count` lines of a UTF-8 text file that are not blank, stripped, as a text-mode read
    splits them, read from the file's end a block at a time."""
    with path.open("rb") as file:
        position = file.seek(0, os.SEEK_END)
        data = b""
        while True:
            step = min(_TAIL_BLOCK, position)
            position -= step
            file.seek(position)
            data = file.read(step) + data
            pieces = _LINE_BREAK.split(data)
            whole = pieces if position == 0 else pieces[1:]  # the first piece may be part of a line
            lines = [text for text in (piece.decode("utf-8").strip() for piece in whole) if text]
            if position == 0 or len(lines) >= count:
                return lines[-count:] if count else []


def unavailable() -> str | None:
    """Why this framework cannot run extracted memory (it no longer has the classes), in one line; None
    while it can."""
    return _UNAVAILABLE


def is_extracted(provider: object) -> bool:
    """Whether `provider` is the framework's extracted memory (never, on a framework without it)."""
    return _UNAVAILABLE is None and isinstance(provider, MemoryContextProvider)


def store_of(provider: ContextProvider) -> tuple[object, Path | None]:
    """The store of `provider` (extracted memory: `is_extracted`) and the folder it keeps its files in,
    None for a store whose files the workbench cannot read (not the framework's file store)."""
    store = cast(MemoryContextProvider, provider).store
    return store, store.base_path if isinstance(store, MemoryFileStore) else None


def framework_parts() -> tuple[tuple[type, tuple[str, ...]], ...]:
    """The provider's methods that read and write its files every turn (`after_run` includes its
    extraction call), for the lab to time as the framework's cost; none on a framework without it."""
    return () if _UNAVAILABLE is not None else ((MemoryContextProvider, ("before_run", "after_run")),)


class MemoryClient:
    """The agent's chat client as the framework's extraction and consolidation prompts reach it: the
    framework sends them to the client directly, without the agent's options or middleware, so here
    each call gets the agent's reply bound (every request bounds its reply) and is recorded through
    the agent's recorder under its purpose (F2 lists it with the turn; the lab counts it)."""

    def __init__(
        self,
        client: SupportsChatGetResponse[Any],
        bound: Mapping[str, Any],
        recorder: RecordingMiddleware | None,
        extraction_prompt: str,
    ) -> None:
        self._client: Any = client  # any chat client: its overloads are the caller's
        self._bound = dict(bound)
        self._recorder = recorder
        self._extraction_prompt = extraction_prompt

    def get_response(self, messages: Any, *, stream: bool = False, options: Any = None, **kwargs: Any) -> Any:
        if self._recorder is not None:
            first = messages[0].text if messages else ""
            purpose = EXTRACTION_CALL if first == self._extraction_prompt else CONSOLIDATION_CALL
            extra = dict(kwargs.pop("client_kwargs", None) or {})
            extra["middleware"] = [*extra.get("middleware", []), self._recorder.aside(purpose)]
            kwargs["client_kwargs"] = extra
        return self._client.get_response(messages, stream=stream, options={**self._bound, **(options or {})}, **kwargs)


class ExtractedMemory(FileBackedMemory):
    """Both agents' `MemoryContextProvider`s over one `MemoryFileStore` under `root`."""

    name = "extracted memory"
    unit = "memory file(s) deleted or rewritten"
    framework_name = "MemoryContextProvider"
    calls_functions = False  # it offers tools, but extracts after every turn whether or not they are called

    def __init__(self, root: Path, *, user_id: str = USER_ID, provider: ContextProvider | None = None) -> None:
        """`provider`: one already on a loaded agent (`is_extracted`; its store's folder is `root`): this
        memory is then what its `MemoryFileStore` keeps for the owner `user_id` (`owners` finds them).
        ConfigError on a framework that no longer has extracted memory (`unavailable`)."""
        if _UNAVAILABLE is not None:
            raise ConfigError(_UNAVAILABLE)
        super().__init__(root)
        self.user_id = user_id
        # The provider's source id and index limits; the workbench's own built here.
        if provider is None:
            with retiring():
                provider = MemoryContextProvider(store=MemoryFileStore(root, owner_state_key=OWNER_KEY))
        if not isinstance(provider, MemoryContextProvider):
            raise TypeError(f"{type(provider).__name__} is not the framework's extracted memory")
        self._defaults = provider
        if not isinstance(self._defaults.store, MemoryFileStore):
            raise TypeError(f"{type(self._defaults.store).__name__} keeps no files the workbench can read")
        self.store = self._defaults.store
        self.source_id = self._defaults.source_id
        self._session = AgentSession(session_id="workbench-view")  # reads and forgets as the owner
        self._session.state[self.store.owner_state_key] = user_id
        self.forgets = 0

    @property
    def folder(self) -> Path:
        """The user's memory root: `MEMORY.md`, `topics/`, `transcripts/`, `state.json`."""
        return self.store.get_transcripts_directory(self._session, source_id=self.source_id).parent

    def providers(self, agent: str) -> list[ContextProvider]:
        private_dir(self.root)
        return [UserMemoryProvider(self, agent)]

    def _files(self) -> list[Path]:
        if not self.folder.is_dir():
            return []
        return sorted(p for p in self.folder.rglob("*") if p.is_file() and not p.is_symlink())

    def file_count(self) -> int:
        return len(self._files())

    def files(self) -> list[HeldItem]:
        """The index, each topic file, each transcript (and the maintenance state), as on disk, except
        the maintenance state's turn ids (`_state_shown`)."""
        kinds = {self.store.topics_directory_name: "topic", self.store.transcripts_directory_name: "transcript"}
        shown: list[HeldItem] = []
        for path in self._files():
            relative = path.relative_to(self.folder)
            what = "index" if relative.name == self.store.index_file_name else kinds.get(relative.parts[0], "state")
            try:
                content = path.read_text(encoding="utf-8", errors="replace")
                size = path.stat().st_size
            except FileNotFoundError:  # removed by the framework since it was listed
                continue
            if relative.as_posix() == self.store.state_file_name:
                content = self._state_shown(content)
            shown.append(HeldItem(what, relative.as_posix(), "", content, size))
        return shown

    def _state_shown(self, text: str) -> str:
        """The maintenance state as on disk, each pending turn's id shown as TURN_ID_SHOWN: a random
        token the framework compares to know which turns consolidation covered, never the user's text
        (so no forget needs it), and new on every run, which would make the same memory read differently.
        The sessions it names stay: each names a transcript. A state the store cannot read is shown as is."""
        try:
            state = self.store.loads(text)
        except ValueError:  # cut off by a crash, or not the store's format
            return text
        pending = state.get(PENDING_TURN_IDS) if isinstance(state, dict) else None
        for turn_id in pending.values() if isinstance(pending, dict) else ():
            if isinstance(turn_id, str):
                text = text.replace(json.dumps(turn_id), json.dumps(TURN_ID_SHOWN))
        return text

    async def declared(self, keys: frozenset[str]) -> set[str]:
        """What its files declare (`FileBackedMemory.declared`), and what each transcript message declares
        as its text reads: in the file a declaration after manual mode's facts block is JSON-escaped
        (`...\\n\\ncustomer=...`), and a run killed before the workbench saved the turn's facts leaves the
        value there alone."""
        found = await super().declared(keys)
        return found | declared_in(await asyncio.to_thread(self._transcript_texts), keys)

    def _transcript_texts(self) -> list[str]:
        directory = self.store.get_transcripts_directory(self._session, source_id=self.source_id)
        texts = []
        for path in sorted(directory.glob("*")) if directory.is_dir() else []:
            for line in path.read_text(encoding="utf-8").splitlines():
                try:
                    texts.append(Message.from_dict(json.loads(line)).text or "")
                except (ValueError, TypeError):
                    continue  # a line a crash cut off: `line_holds` reads it raw
        return texts

    async def erase(self, plan: ForgetPlan) -> int:
        """Every file that holds a forgotten value, rewritten without it or erased (`erase_file`; the
        whole folder for a forget of everything); returns the files reached. A work file of the
        framework's interrupted write (`.maf-state-*.tmp`, never read back) is erased whatever it holds."""
        self._forget_injected(plan)
        self.forgets += 1
        if not self.folder.is_dir():
            return 0
        for leftover in sorted(self.folder.rglob(f"{_WORK_FILE_PREFIX}*.tmp")):
            await asyncio.to_thread(erase_file, leftover)
        if plan.everything:
            files = self._files()
            for path in files:
                await asyncio.to_thread(erase_file, path)
            await asyncio.to_thread(shutil.rmtree, self.folder)
            return len(files)
        reached = self._forget_topics(plan) + await asyncio.to_thread(self._forget_transcripts, plan)
        self.store.rebuild_index(
            self._session,
            source_id=self.source_id,
            line_limit=self._defaults.index_line_limit,
            line_length=self._defaults.index_line_length,
        )
        private_tree(self.folder)
        return reached

    def _forget_topics(self, plan: ForgetPlan) -> int:
        reached = 0
        for record in self.store.list_topics(self._session, source_id=self.source_id):
            if not plan.holds(record.to_markdown()):
                continue
            reached += 1
            kept = [m for m in record.memories if not plan.holds(m)]
            if not kept or plan.holds(f"{record.topic}\n{record.slug}"):
                erase_file(self.folder / self.store.topics_directory_name / f"{record.slug}.md")  # delete_topic's file
                continue
            summary = "" if plan.holds(record.summary) else record.summary  # "": the first memory left
            with retiring():
                rewritten = MemoryTopicRecord(
                    topic=record.topic,
                    slug=record.slug,
                    summary=summary,
                    memories=kept,
                    updated_at=record.updated_at,
                    session_ids=record.session_ids,
                )
            self.store.write_topic(self._session, rewritten, source_id=self.source_id)
        return reached

    def _forget_transcripts(self, plan: ForgetPlan) -> int:
        """Each JSON Lines transcript without the messages that hold a forgotten value; lines are kept
        byte for byte, a transcript left empty is deleted."""
        reached = 0
        directory = self.store.get_transcripts_directory(self._session, source_id=self.source_id)
        for path in sorted(directory.glob("*")) if directory.is_dir() else []:
            lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
            kept = [line for line in lines if not line_holds(plan, line)]
            if len(kept) == len(lines):
                continue
            reached += 1
            if kept:
                write_private(path, "".join(kept))
            else:
                erase_file(path)
        return reached


def owners(provider: ContextProvider) -> tuple[list[str], list[Path]]:
    """Every owner the file store of `provider` (extracted memory whose files the workbench can read:
    `store_of`) keeps memory for (its folders under the provider's source), and the folders whose owner
    cannot be named (the framework names a folder after a very long owner id by a digest, which cannot
    be read back). A folder's name is the owner id itself or its base32 encoding (`~memory-...`); each
    candidate is checked by asking the store where that owner's files live."""
    store = cast(MemoryFileStore, cast(MemoryContextProvider, provider).store)
    probe = AgentSession(session_id="workbench-view")
    probe.state[store.owner_state_key] = "probe"
    source = store.get_transcripts_directory(probe, source_id=provider.source_id).parent.parent.parent
    found: list[str] = []
    unnamed: list[Path] = []
    for folder in sorted(p for p in source.iterdir() if p.is_dir()) if source.is_dir() else []:
        owner = _owner_named(folder.name, store.owner_prefix)
        session = AgentSession(session_id="workbench-view")
        session.state[store.owner_state_key] = owner
        if (
            owner is not None
            and store.get_transcripts_directory(session, source_id=provider.source_id).parent.parent == folder
        ):
            found.append(owner)
        else:
            unnamed.append(folder)
    return found, unnamed


def _owner_named(segment: str, prefix: str) -> str | None:
    """The owner id a folder name spells (prefix removed), if it spells one."""
    encoded = segment.rpartition("~memory-")[2] if segment.startswith("~") else None
    try:
        named = segment if encoded is None else base64.b32decode(encoded.upper() + "=" * (-len(encoded) % 8)).decode()
    except (ValueError, UnicodeDecodeError):
        return None
    return named.removeprefix(prefix) if named.startswith(prefix) else None


def movable(store: object) -> bool:
    """Whether the drift lab can run extracted memory on `store` on a folder of its own (`on_folder`): the
    framework's own file store (a subclass's own arguments are not known)."""
    return _UNAVAILABLE is None and type(store) is MemoryFileStore


def on_folder(provider: ContextProvider, folder: Path) -> ContextProvider:
    """`provider` (extracted memory on a `movable` store) keeping its files in `folder` instead, with its
    store's every other setting and its own: the drift lab's copy of a user's extracted memory."""
    store = cast(MemoryFileStore, cast(MemoryContextProvider, provider).store)
    with retiring():
        moved = MemoryFileStore(
            folder,
            kind=store.kind,
            owner_prefix=store.owner_prefix,
            owner_state_key=store.owner_state_key,
            index_file_name=store.index_file_name,
            topics_directory_name=store.topics_directory_name,
            transcripts_directory_name=store.transcripts_directory_name,
            state_file_name=store.state_file_name,
        )
    moved.dumps, moved.loads = store.dumps, store.loads
    clone = copy.copy(cast(MemoryContextProvider, provider))
    clone.store = moved
    return clone
