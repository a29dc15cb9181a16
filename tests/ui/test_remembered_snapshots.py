"""Snapshots of What is remembered with each memory system on, at a normal size and at 80x24.

Each inventory is the runtime's own, read from real files in a temporary directory after real turns
(the built-in model; the loopback server for memory files and Mem0). What differs from run to run is
then made steady, as a fixed clock would: the temporary directory reads as the data directory, each
generated id (a session's, a Mem0 memory's) as a numbered one, each timestamp as one fixed moment.
The screen is shown alone in a small host app. SVGs live under snapshots/test_remembered_snapshots/."""

from __future__ import annotations

import asyncio
import re
import shutil
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path

import pytest
from textual.widgets import OptionList

from tests.agentmem.helpers import live_runtime, say
from tests.agentmem.mem0_servers import mem0_servers
from tests.agentmem.test_mem0 import config, needs_mem0
from tests.support.openai_server import LoopbackOpenAI, memory_file_writer
from tests.ui.helpers import FIXED
from tests.ui.test_remembered_screen import Host
from workbench.agentmem.extracted import ExtractedMemory
from workbench.agentmem.files import FileMemory
from workbench.memory import WorkingMemory
from workbench.persist.sessions import PersistedSessions
from workbench.recall.config import RecallConfig
from workbench.runtime import CallLog, Mode, ModelConfig, WriterKind, build_models
from workbench.runtime.agents import AgentRuntime
from workbench.runtime.remembered import HeldItem, Remembered
from workbench.session.assemble import assemble

SIZES = {"normal": (120, 40), "80x24": (80, 24)}
SEED = "module=Reporting; database=PostgreSQL"
CORRECTION = "module=Billing; database=SQL Server 2022"
DATA_DIR = "/home/you/.local/share/workbench"
_ID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
_MOMENT = re.compile(r"\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?")


def steady(remembered: Remembered, root: Path) -> Remembered:
    """The inventory with what differs from run to run made fixed (see the module's docstring)."""
    ids: dict[str, str] = {}

    def fixed(text: str) -> str:
        text = text.replace(str(root), DATA_DIR)
        text = _ID.sub(lambda m: ids.setdefault(m[0], f"00000000-0000-4000-8000-{len(ids) + 1:012d}"), text)
        return _MOMENT.sub(FIXED.strftime("%Y-%m-%dT%H:%M:%S"), text)

    def item(held: HeldItem) -> HeldItem:
        return replace(held, name=fixed(held.name), description=fixed(held.description), content=fixed(held.content))

    def unnumbered(held: HeldItem) -> tuple[str, str]:
        """The order ids are numbered in: what the item says, its ids left out."""
        return held.kind, _ID.sub("", f"{held.description}\n{held.content}\n{held.name}")

    def ordered(items: tuple[HeldItem, ...]) -> tuple[HeldItem, ...]:
        """The product's order, except among items named by a generated id (their order is the ids')."""
        named = [i for i, held in enumerate(items) if _ID.search(held.name)]
        fixed_items = [item(held) for held in items]
        for place, held in zip(named, sorted((fixed_items[i] for i in named), key=lambda h: h.name), strict=True):
            fixed_items[place] = held
        return tuple(fixed_items)

    for held in sorted((i for s in remembered.systems for i in s.items), key=unnumbered):
        fixed(f"{held.name}\n{held.description}\n{held.content}")  # numbers the ids in a steady order
    systems = tuple(
        replace(
            s,
            location=fixed(s.location) if s.location else None,
            description=fixed(s.description),
            items=ordered(s.items),
        )
        for s in remembered.systems
    )
    return replace(remembered, systems=systems)


@contextmanager
def folder() -> Iterator[Path]:
    root = Path(tempfile.mkdtemp(prefix="workbench-remembered-"))
    try:
        yield root
    finally:
        shutil.rmtree(root, ignore_errors=True)


def scripted(**options) -> AgentRuntime:
    return assemble(
        build_models(ModelConfig()), memory=WorkingMemory(clock=lambda: FIXED), writer=WriterKind.HOST, **options
    ).runtime


async def conversation(runtime: AgentRuntime) -> Remembered:
    await say(runtime, SEED, CORRECTION)
    await say(runtime, "customer=Contoso; where are the logs?", agent="logs")
    return await runtime.remembered()


def facts_only(root: Path) -> Remembered:
    return asyncio.run(conversation(scripted()))


def recall(root: Path) -> Remembered:
    """On a DuckDB file, closed (so checkpointed: its size no longer depends on when DuckDB wrote its log)
    before it is read."""
    calls = CallLog()
    setup = RecallConfig(store=str(root / "recall.duckdb")).build(calls)
    runtime = scripted(calls=calls, recall=setup, recall_on=True)

    async def run() -> Remembered:
        await conversation(runtime)
        await setup.store.close()
        try:
            return await runtime.remembered()
        finally:
            await setup.store.close()

    return asyncio.run(run())


def persist(root: Path) -> Remembered:
    persisted = PersistedSessions(root / "sessions")
    runtime = assemble(build_models(ModelConfig()), persisted=persisted, writer=WriterKind.HOST).runtime
    try:
        return asyncio.run(conversation(runtime))
    finally:
        persisted.close()


def memory_files(root: Path) -> Remembered:
    with LoopbackOpenAI() as loopback:
        loopback.state.responder = memory_file_writer(lambda key, value: f"{key}-{value}.md")
        return asyncio.run(conversation(live_runtime(loopback.base_url, FileMemory(root / "files"))))


def extracted(root: Path) -> Remembered:
    return asyncio.run(conversation(scripted(memories=[ExtractedMemory(root / "extracted")])))


def mem0(root: Path) -> Remembered:
    from workbench.agentmem.mem0 import Mem0Memory

    with mem0_servers() as servers:
        memory = Mem0Memory(config(servers, root / "mem0"))
        models = build_models(ModelConfig(model="loopback-model", base_url=servers.chat.base_url, max_retries=0))
        runtime = assemble(
            models,
            memory=WorkingMemory(clock=lambda: FIXED),
            mode=Mode.PROVIDER,
            writer=WriterKind.HOST,
            memories=[memory],
        ).runtime

        async def run() -> Remembered:
            try:
                return await conversation(runtime)
            finally:
                await memory.close()

        return asyncio.run(run())


GATHER: dict[str, Callable[[Path], Remembered]] = {
    "facts": facts_only,
    "recall": recall,
    "persist": persist,
    "memory_files": memory_files,
    "extracted": extracted,
    "mem0": mem0,
}
SYSTEMS = [pytest.param(name, marks=needs_mem0) if name == "mem0" else name for name in GATHER]


# The system each snapshot is about: the list is scrolled to it, its own line highlighted.
SHOWN = {
    "facts": "working memory",
    "recall": "recall store",
    "persist": "persisted sessions",
    "memory_files": "memory files",
    "extracted": "extracted memory",
    "mem0": "Mem0",
}


@pytest.mark.parametrize("size", SIZES)
@pytest.mark.parametrize("system", SYSTEMS)
def test_what_is_remembered(snap_compare, system, size):
    with folder() as root:
        remembered = steady(GATHER[system](root), root)
    (number,) = [n for n, s in enumerate(remembered.systems) if s.name == SHOWN[system]]

    async def run(pilot) -> None:
        await pilot.pause()
        listed = pilot.app.screen.query_one(OptionList)
        listed.highlighted = listed.get_option_index(f"system-{number}")
        listed.scroll_to_highlight(top=True)
        await pilot.pause()

    assert snap_compare(Host(remembered), terminal_size=SIZES[size], run_before=run)
