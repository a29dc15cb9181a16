"""Providers the workbench does not know, as the framework's samples write them (`01-get-started/04_memory.py`'s
`UserMemoryProvider`, `02-agents/conversations/custom_history_provider.py`'s `CustomHistoryProvider`), their
chat client replaced by the built-in scripted one: what they hold in this process is read (session state,
attributes) and said where it sits, the forget clears it and looks again, and a scan of everything the
process can reach from the runtime and the providers proves it; `workbench forget` exits 0 and names
what it cannot see."""

from __future__ import annotations

import asyncio
import io
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.support.residue import residue
from tests.test_startup import HANG
from workbench import scripts
from workbench.loading import from_reference
from workbench.runtime import build_models
from workbench.runtime.config import Mode, ModelConfig, WriterKind
from workbench.runtime.inprocess import MAX_OBJECTS, InProcess, walk
from workbench.session.assemble import assemble

VALUE = "Contoso Ltd 7731"

# 04_memory.py's provider and agent as published, on the scripted client.
MEMORY_SAMPLE = '''
from typing import Any

from agent_framework import Agent, AgentSession, ContextProvider, SessionContext

from workbench import ScriptedChatClient


class UserMemoryProvider(ContextProvider):
    """A context provider that remembers user info in session state."""

    DEFAULT_SOURCE_ID = "user_memory"

    def __init__(self):
        super().__init__(self.DEFAULT_SOURCE_ID)

    async def before_run(self, *, agent: Any, session: AgentSession | None, context: SessionContext, state: dict[str, Any]) -> None:
        user_name = state.get("user_name")
        if user_name:
            context.extend_instructions(self.source_id, f"The user's name is {user_name}. Always address them by name.")
        else:
            context.extend_instructions(self.source_id, "You don't know the user's name yet. Ask for it politely.")

    async def after_run(self, *, agent: Any, session: AgentSession | None, context: SessionContext, state: dict[str, Any]) -> None:
        for msg in context.input_messages:
            text = msg.text if hasattr(msg, "text") else ""
            if isinstance(text, str) and "my name is" in text.lower():
                state["user_name"] = text.lower().split("my name is")[-1].strip().split()[0].capitalize()


agent = Agent(
    client=ScriptedChatClient(),
    name="MemoryAgent",
    instructions="You are a friendly assistant.",
    context_providers=[UserMemoryProvider()],
)
'''

# custom_history_provider.py's provider and agent as published, on the scripted client.
HISTORY_SAMPLE = """
from collections.abc import Sequence
from typing import Any

from agent_framework import Agent, HistoryProvider, Message

from workbench import ScriptedChatClient


class CustomHistoryProvider(HistoryProvider):
    def __init__(self) -> None:
        super().__init__("custom-history")
        self._storage: dict[str, list[Message]] = {}

    async def get_messages(self, session_id: str | None, *, state: dict[str, Any] | None = None, **kwargs: Any) -> list[Message]:
        key = session_id or "default"
        return list(self._storage.get(key, []))

    async def save_messages(self, session_id: str | None, messages: Sequence[Message], *, state: dict[str, Any] | None = None, **kwargs: Any) -> None:
        key = session_id or "default"
        if key not in self._storage:
            self._storage[key] = []
        self._storage[key].extend(messages)


agent = Agent(
    client=ScriptedChatClient(),
    name="CustomBot",
    instructions="You are a helpful assistant that remembers our conversation.",
    context_providers=[CustomHistoryProvider()],
)
"""

SAMPLES = {"memory_sample": MEMORY_SAMPLE, "history_sample": HISTORY_SAMPLE}


@pytest.fixture
def samples(tmp_path, monkeypatch):
    for module, text in SAMPLES.items():
        (tmp_path / f"{module}.py").write_text(text)
    monkeypatch.syspath_prepend(str(tmp_path))
    before = set(sys.modules)
    yield tmp_path
    for name in set(sys.modules) - before:
        del sys.modules[name]


def session_of(reference: str):
    agents = [loaded.agent for loaded in from_reference(reference)]
    return assemble(build_models(ModelConfig()), agents=agents, mode=Mode.PROVIDER, writer=WriterKind.HOST)


async def system(runtime, name):
    return next(s for s in (await runtime.remembered()).systems if s.name == name)


def test_the_custom_history_sample_is_said_to_hold_the_value_in_its_attribute_and_a_forget_clears_it(samples):
    session = session_of("history_sample:agent")
    runtime = session.runtime
    [reader] = [m for m in runtime.memories if isinstance(m, InProcess)]
    name = "CustomBot: CustomHistoryProvider"
    assert reader.name == name

    async def story() -> None:
        assert (await runtime.ask("CustomBot", f"customer={VALUE}; my name is Contoso")).ok
        listed = await system(runtime, name)
        assert listed.keys == ("customer",)  # it holds the customer's value: not "no key's value"
        held = [i for i in listed.items if i.kind == "attribute"]  # the message, and the reply quoting it
        assert [i.keys for i in held] == [("customer",), ("customer",)]
        assert held[0].name.startswith("_storage[") and held[0].name.endswith("][0].contents[0].text")
        assert held[0].content == f"customer={VALUE}; my name is Contoso"
        looked = listed.items[-1]
        assert looked.kind == "looked" and "what it keeps outside this process" in looked.content

        preview = await session.forget_preview(["customer"])
        assert preview.unreached == ()
        assert f"{name} (in this process; what it keeps outside it is not known, and stays)" in preview.reaches

        report = await runtime.forget("customer")
        assert not report.failures and not report.unreached, report
        assert report.removed[name] >= 1 and name in report.outside
        assert residue([VALUE], runtime, reader.provider) == {}  # the proof: nothing the process reaches holds it
        after = await system(runtime, name)
        assert after.keys == () and [i.kind for i in after.items] == ["looked"]

    asyncio.run(story())


def test_the_user_memory_sample_is_read_in_its_session_state_and_the_session_replacement_clears_it(samples):
    session = session_of("memory_sample:agent")
    runtime = session.runtime
    name = "MemoryAgent: UserMemoryProvider"

    async def story() -> None:
        assert (await runtime.ask("MemoryAgent", f"customer={VALUE}; my name is Contoso")).ok
        listed = await system(runtime, name)
        [state] = [i for i in listed.items if i.kind == "state"]
        assert state.name == "session state `user_memory` of MemoryAgent"
        assert state.content == "['user_name']: Contoso"  # what it holds, read: the first word of a name
        assert '"Contoso" is a word of customer\'s value "Contoso Ltd 7731"' in state.description
        assert state.keys == ()  # a word, not the whole value: a forget removes whole values
        # A value it keeps whole is said to be held there.
        assert (await runtime.ask("MemoryAgent", "customer=Fabrikam; my name is Fabrikam")).ok
        [state] = [i for i in (await system(runtime, name)).items if i.kind == "state"]
        assert state.keys == ("customer",) and "['user_name']: Fabrikam" in state.content

        report = await runtime.forget("customer")
        assert not report.failures and report.removed[name] >= 1 and name in report.outside
        assert residue(["Fabrikam", VALUE], runtime) == {}
        [state] = [i for i in (await system(runtime, name)).items if i.kind == "state"] or [None]
        assert state is None  # the new session: the provider has written nothing there yet
        # The next turn no longer knows the name: the provider said so to the model.
        assert (await runtime.ask("MemoryAgent", "hello")).ok
        [call] = [c for c in runtime.last_turn_calls("MemoryAgent") if c.purpose == "MemoryAgent"]
        assert "You don't know the user's name yet" in call.instructions

    asyncio.run(story())


@pytest.mark.parametrize("barrier", [True, False], ids=["barrier", "without-it"])
def test_a_turn_running_through_the_forget_writes_nothing_that_holds_the_value_after_it(samples, monkeypatch, barrier):
    """The provider saves the turn's messages after the forget replaced the sessions (its own dict keeps
    them by session id): the forget clears what it wrote once that turn ends."""
    session = session_of("history_sample:agent")
    runtime = session.runtime
    [reader] = [m for m in runtime.memories if isinstance(m, InProcess)]
    provider: Any = reader.provider  # the sample's CustomHistoryProvider
    saving = provider.save_messages
    forgot = asyncio.Event()

    async def late_save(*args, **kwargs):  # the turn's save waits for the forget to have ended
        await forgot.wait()
        await saving(*args, **kwargs)

    provider.save_messages = late_save
    if not barrier:  # what the test would see without it: the value saved after the forget
        monkeypatch.setattr(type(runtime.forgetting), "turn_ended", lambda self, turn: 0)

    async def story() -> None:
        turn = asyncio.create_task(runtime.ask("CustomBot", f"customer={VALUE}"))
        while not runtime.memory.facts():
            await asyncio.sleep(0.01)
        report = await runtime.forget("customer")
        assert not report.failures
        forgot.set()
        assert (await turn).ok
        del provider.save_messages
        assert (residue([VALUE], runtime, provider) == {}) is barrier

    asyncio.run(story())


def test_the_walk_is_bounded_and_handles_cycles():
    loop: list[object] = []
    loop.append(loop)
    assert walk(loop, "x").stopped is None
    wide = [[str(i)] for i in range(MAX_OBJECTS + 10)]
    assert walk(wide, "x").stopped == f"{MAX_OBJECTS:,} objects"


def _workbench(folder: Path, *words: str, script: str = "") -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "WORKBENCH_DATA_DIR": str(folder / "data"), "PYTHONPATH": str(folder)}
    command = [sys.executable, *(["-c", script] if script else ["-m", "workbench"]), *words]
    return subprocess.run(
        command, env=env, cwd=folder, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=HANG
    )


@pytest.mark.parametrize(("module", "name"), [("memory_sample", "MemoryAgent"), ("history_sample", "CustomBot")])
def test_workbench_forget_over_a_sample_exits_0_and_names_what_it_cannot_see(samples, module, name):
    kind = {"memory_sample": "UserMemoryProvider", "history_sample": "CustomHistoryProvider"}[module]
    memory = f"{name}: {kind}"
    listed = _workbench(samples, "remembered", "--agents", f"{module}:agent")
    assert listed.returncode == 0, listed.stderr
    assert f"{memory} · this process, read; what it keeps outside it: not known" in listed.stdout
    assert "no string there holds a value it knows" in listed.stdout

    forgot = _workbench(samples, "forget", "customer", "--agents", f"{module}:agent", "--yes")
    assert forgot.returncode == 0, forgot.stdout + forgot.stderr
    lines = forgot.stdout.splitlines()
    assert f"  {memory}: 0 {InProcess.unit}" in lines
    assert "outside what the workbench can see (not known; what it holds there stays):" in lines
    assert any(line.startswith(f"  {memory}: what it keeps outside this process") for line in lines)
    out = json.loads(_workbench(samples, "forget", "customer", "--agents", f"{module}:agent", "--yes", "--json").stdout)
    assert out["failures"] == {} and memory in out["outside"]
    assert scripts.NOT_REACHED == 3


def test_what_the_forget_cannot_take_out_is_scrubbed_and_what_it_cannot_change_is_said_to_still_hold_it():
    from workbench.memory.forget import ForgetPlan
    from workbench.memory.holder_kinds import StillHolds

    class Slotted:
        __slots__ = ("text",)  # a slot: the walk reads it, a forget writes only an object's own __dict__

        def __init__(self) -> None:
            self.text = VALUE

    class Notes:
        def __init__(self) -> None:
            self.last = f"customer={VALUE}; module=Billing"
            self.kept = {"name": VALUE, "note": f"met {VALUE} today", "other": "stays"}
            self.frozen = ((VALUE,), "stays")
            self.slotted = Slotted()
            self.raw = [VALUE.encode()]

    class Provider:
        source_id = "notes"

        def __init__(self) -> None:
            self.notes = Notes()

    reader = InProcess("mine: Notes", Provider(), ("mine",))  # type: ignore[arg-type]
    plan = ForgetPlan(("customer",), frozenset({"customer"}), frozenset({VALUE}))
    with pytest.raises(StillHolds, match=r"^notes\.slotted\.text$"):
        asyncio.run(reader.erase(plan))
    notes = reader.provider.notes  # type: ignore[attr-defined]
    assert notes.last == "customer=(forgotten); module=Billing"
    assert notes.kept == {"note": "met (forgotten) today", "other": "stays"} and notes.raw == []
    assert notes.frozen == ("stays",)


@pytest.mark.parametrize("barrier", [True, False], ids=["barrier", "without-it"])
def test_a_turn_running_through_the_forget_leaves_no_value_in_a_file_history_either(tmp_path, monkeypatch, barrier):
    """A provider the workbench knows (`FileHistoryProvider`): the turn's messages are appended to its old
    session's file after the forget rewrote the files; once the turn ends the forget is applied again, and
    no byte of any file holds the value."""
    from agent_framework import Agent, FileHistoryProvider

    from workbench import ScriptedChatClient

    history: Any = FileHistoryProvider(tmp_path / "history")
    agent = Agent(ScriptedChatClient(), "You help.", name="mine", context_providers=[history])
    runtime = assemble(build_models(ModelConfig()), agents=[agent], writer=WriterKind.HOST).runtime
    saving = history.save_messages
    forgot, held = asyncio.Event(), asyncio.Event()

    async def late_save(*args, **kwargs):
        held.set()
        await forgot.wait()
        await saving(*args, **kwargs)

    history.save_messages = late_save
    if not barrier:
        monkeypatch.setattr(type(runtime.forgetting), "turn_ended", lambda self, turn: [])

    def holding() -> list[str]:
        return [p.name for p in (tmp_path / "history").rglob("*") if p.is_file() and VALUE.encode() in p.read_bytes()]

    async def story() -> None:
        turn = asyncio.create_task(runtime.ask("mine", f"customer={VALUE}"))
        await held.wait()  # the turn is saving its messages: the forget comes now
        assert not (await runtime.forget("customer")).failures
        forgot.set()
        assert (await turn).ok
        assert (holding() == []) is barrier
        assert (residue([VALUE], runtime) == {}) is barrier

    asyncio.run(story())


def test_f3_says_where_the_value_sits_in_a_provider_the_workbench_does_not_know(samples):
    from rich.console import Console

    from workbench.ui.remembered_screen import _item, _system

    runtime = session_of("history_sample:agent").runtime

    def drawn(renderable: Any) -> str:
        console = Console(width=140, record=True, file=io.StringIO())
        console.print(renderable)
        return console.export_text()

    async def story() -> None:
        assert (await runtime.ask("CustomBot", f"customer={VALUE}")).ok
        listed = await system(runtime, "CustomBot: CustomHistoryProvider")
        shown = drawn(_system(listed))
        assert "CustomBot: CustomHistoryProvider CustomHistoryProvider, read in this process" in shown
        assert f"{InProcess.location} · holds customer" in shown
        first = drawn(_item(listed.items[0], 256))
        assert first.startswith("  attribute _storage['") and "].contents[0].text · holds customer" in first
        assert drawn(_item(listed.items[-1], 256)).startswith("  looked what was looked at · holds no key's value")
        await runtime.forget("customer")
        after = drawn(_system(await system(runtime, "CustomBot: CustomHistoryProvider")))
        assert f"{InProcess.location} · holds no key's value" in after  # said after looking

    asyncio.run(story())
