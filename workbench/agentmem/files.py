"""Memory the model writes itself: Agent Framework's `FileMemoryProvider` (its `file_memory_*` tools)
on a file store in the user's data directory, scoped to the user so both agents share one folder.

The model decides what is written: only a model that calls functions writes anything. The store is the
framework's `FileSystemAgentFileStore`, made user-only (it creates files with the process umask). A
forget rewrites every memory file (and description) that holds a forgotten value, deletes a file whose
name holds one, and rebuilds the framework's `memories.md` index from what is left. A rewrite is a
private work file renamed over the file: a crash leaves the file whole, its other facts kept (the
forget a crash cut short is completed at the next start, which erases the work file left beside it)."""

from __future__ import annotations

import asyncio
import shutil
from pathlib import Path
from typing import Any

from agent_framework import (
    AgentSession,
    ContextProvider,
    FileMemoryProvider,
    FileSystemAgentFileStore,
    SessionContext,
)
from agent_framework._harness._file_access import _store_write_lock  # the lock the file_memory_* tools take

from workbench.agentmem.base import USER_ID, FileBackedMemory
from workbench.files import WORK_SUFFIX, erase_file, private_dir, private_file, private_tree, rewrite_private
from workbench.memory.forget import ForgetPlan
from workbench.runtime.remembered import HeldItem

INDEX = "memories.md"  # the framework's index of the folder (rebuilt on every write and delete)
DESCRIPTION_SUFFIX = "_description.md"  # the framework's companion description files


def description_name(file_name: str) -> str:
    """The framework's name for `file_name`'s description (`notes.md` -> `notes_description.md`)."""
    stem, dot, _ = file_name.rpartition(".")
    return f"{stem}{DESCRIPTION_SUFFIX}" if dot and stem else f"{file_name}{DESCRIPTION_SUFFIX}"


def is_memory_file(name: str) -> bool:
    lowered = name.lower()
    return lowered != INDEX and not lowered.endswith(DESCRIPTION_SUFFIX)


class PrivateFileStore(FileSystemAgentFileStore):
    """The framework's disk store, every file it writes user-only (0600), every folder 0700."""

    async def write(self, path: str, content: str, *, overwrite: bool = True) -> None:
        await super().write(path, content, overwrite=overwrite)
        private_file(self.root_path / path)

    async def create_directory(self, path: str) -> None:
        await super().create_directory(path)
        private_tree(self.root_path / path)  # the framework made it with the umask's mode


class WatchedFileMemoryProvider(FileMemoryProvider):
    """The framework's provider, telling the workbench what it put into each turn (the index)."""

    def __init__(self, memory: FileMemory, agent: str) -> None:
        super().__init__(memory.store, scope=memory.scope)
        self._memory = memory
        self._agent = agent

    async def before_run(
        self, *, agent: Any, session: AgentSession, context: SessionContext, state: dict[str, Any]
    ) -> None:
        await super().before_run(agent=agent, session=session, context=context, state=state)
        self._memory.injected(self._agent, context.context_messages.get(self.source_id, []))


class FileMemory(FileBackedMemory):
    """Both agents' `FileMemoryProvider`s over one user-only folder, `root/<user>`; or, made by
    `over`, one working folder of a provider already on a loaded agent, on that provider's own store."""

    name = "memory files"
    unit = "memory file(s) deleted or rewritten"
    framework_name = "FileMemoryProvider"
    calls_functions = True

    def __init__(self, root: Path, *, scope: str = USER_ID) -> None:
        super().__init__(root)
        self.scope = scope  # a plain scope such as `local-user`: the framework uses it as the folder name
        self.store: FileSystemAgentFileStore = PrivateFileStore(root)

    @classmethod
    def over(cls, store: FileSystemAgentFileStore, working_folder: str) -> FileMemory:
        """The memory files in `working_folder` of `store`, an existing provider's (the folder name the
        framework derived from its scope or a session id): a forget takes the lock its tools take."""
        memory = cls(store.root_path, scope=working_folder)  # a folder name is its own plain scope
        memory.store = store  # the one its tools lock (the store built above writes nothing: it is dropped)
        return memory

    @property
    def folder(self) -> Path:
        """The working folder: `root/<user>` for the workbench's own."""
        return self.root / self.scope

    def providers(self, agent: str) -> list[ContextProvider]:
        private_dir(self.root)
        return [WatchedFileMemoryProvider(self, agent)]

    def _names(self) -> list[str]:
        if not self.folder.is_dir():
            return []
        return sorted((p.name for p in self.folder.iterdir() if p.is_file() and not p.is_symlink()), key=str.lower)

    def file_count(self) -> int:
        """The files `files` lists: memory files and the index (descriptions are shown with their file)."""
        return sum(1 for name in self._names() if is_memory_file(name) or name == INDEX)

    def _read(self, name: str) -> str:
        path = self.folder / name
        return path.read_text(encoding="utf-8", errors="replace") if path.is_file() else ""

    def files(self) -> list[HeldItem]:
        """Each memory file with its description and content, then the index the model is shown. The
        size of a file is its own and its description's."""
        names = self._names()
        shown: list[HeldItem] = []
        for name in [n for n in names if is_memory_file(n)] + ([INDEX] if INDEX in names else []):
            described = self.folder / description_name(name)
            description = self._read(described.name) if name != INDEX else ""
            try:
                size = (self.folder / name).stat().st_size + (described.stat().st_size if description else 0)
            except FileNotFoundError:  # deleted by a tool call since it was listed
                continue
            kind = "index" if name == INDEX else "memory file"
            shown.append(HeldItem(kind, name, description, self._read(name), size, described=True))
        return shown

    async def erase(self, plan: ForgetPlan) -> int:
        """Delete or rewrite every file of the folder that holds a forgotten value (all of them for a
        forget of everything), then rebuild the index from what is left; returns the memory files reached.
        A deleted file's bytes are erased first (`erase_file`)."""
        self._forget_injected(plan)
        if not self.folder.is_dir():
            return 0
        async with _store_write_lock(self.store, self.scope):
            reached = await asyncio.to_thread(self._apply, plan)
            if not plan.everything:
                # The framework's own index builder (private): the index must list what is left, as a tool would.
                await FileMemoryProvider(self.store, scope=self.scope)._rebuild_index(self.scope)
        return reached

    def _apply(self, plan: ForgetPlan) -> int:
        reached = 0
        names = self._names()
        cut_short = [n for n in names if n.endswith(WORK_SUFFIX) and n.removesuffix(WORK_SUFFIX) in names]
        for name in cut_short:  # a rewrite a crash cut short, beside the file it would have replaced
            erase_file(self.folder / name)
        for name in [n for n in names if n not in cut_short]:
            path = self.folder / name
            if plan.everything or plan.holds(name):
                erase_file(path)
                reached += is_memory_file(name)
                continue
            text = self._read(name)
            if plan.holds(text):
                scrubbed = plan.scrub(text)
                rewrite_private(path, scrubbed)
                reached += is_memory_file(name)
        left = self._names()
        described = {description_name(n) for n in left if is_memory_file(n)}
        for name in left:  # a description whose memory file is gone (a value in its extension)
            if name.endswith(DESCRIPTION_SUFFIX) and name not in described:
                erase_file(self.folder / name)
        if plan.everything:
            shutil.rmtree(self.folder)
        return reached
