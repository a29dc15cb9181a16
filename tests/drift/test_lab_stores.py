"""The lab runs the user's agents' memories on stores of its own (`workbench.drift.copies`): what it
reports they retained and kept on disk is what its copies held when it measured them, before it removed
them; a memory it cannot redirect (a provider the workbench does not know) keeps its agent's rows from
running unless the user allows the lab to write into that store, and each says so."""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from agent_framework import (
    Agent,
    AgentSession,
    FileHistoryProvider,
    HistoryProvider,
    MemoryContextProvider,
    MemoryFileStore,
    Message,
    SessionContext,
)

from workbench import ScriptedChatClient
from workbench.agentmem.extracted import retiring
from workbench.drift import run_drift
from workbench.drift.copies import ALLOW_OPTION, LabStores
from workbench.drift.report_json import to_json
from workbench.loading import from_folder, from_objects
from workbench.runtime import ModelConfig, build_models

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "agents"


class CustomHistoryProvider(HistoryProvider):
    """The framework's published custom history sample (`conversations/custom_history_provider.py`)."""

    def __init__(self) -> None:
        super().__init__("custom-history")
        self._storage: dict[str, list[Message]] = {}

    async def get_messages(
        self, session_id: str | None, *, state: dict[str, Any] | None = None, **kwargs: Any
    ) -> list[Message]:
        return list(self._storage.get(session_id or "default", []))

    async def save_messages(
        self, session_id: str | None, messages: Sequence[Message], *, state: dict[str, Any] | None = None, **kw: Any
    ) -> None:
        self._storage.setdefault(session_id or "default", []).extend(messages)


def _custom() -> Agent:
    return Agent(
        ScriptedChatClient(),
        "You remember our conversation.",
        name="CustomBot",
        context_providers=[CustomHistoryProvider()],
    )


ROWS = ["yours:CustomBot", "yours:CustomBot+facts"]


def test_a_memory_the_lab_cannot_redirect_keeps_its_agents_rows_from_running_and_says_why():
    agent = _custom()
    drift = asyncio.run(run_drift(build_models(ModelConfig()), agents=from_objects([agent]), policies=ROWS))
    for name in ROWS:
        why = drift.unavailable[name]
        assert why.startswith(
            "not run: it would write the story into your own store (CustomBot's CustomHistoryProvider"
        )
        assert ALLOW_OPTION in why
        assert name not in drift.scores
    [provider] = agent.context_providers
    assert isinstance(provider, CustomHistoryProvider) and provider._storage == {}  # nothing written into it


def test_allowed_it_runs_on_the_users_own_store_and_the_report_says_so():
    agent = _custom()
    models = build_models(ModelConfig())
    drift = asyncio.run(run_drift(models, agents=from_objects([agent]), policies=ROWS, allow_your_stores=True))
    assert not drift.unavailable and set(ROWS) <= set(drift.scores)
    [custom] = to_json(drift)["policies"][0]["agents"]
    assert custom["memories"][0].startswith("CustomHistoryProvider: as it is, writing into your own store")
    [provider] = agent.context_providers
    assert isinstance(provider, CustomHistoryProvider) and provider._storage  # as allowed, its own dict holds the story


def test_the_command_says_which_memory_keeps_an_agent_from_running(tmp_path, capsys):
    from workbench.cli import main

    (tmp_path / "custom.py").write_text(
        "from tests.drift.test_lab_stores import _custom\nagent = _custom()\n", encoding="utf-8"
    )
    before = set(sys.modules)
    try:
        assert main(["drift", str(tmp_path), "--json", "--policies", ",".join(ROWS)]) == 0
    finally:
        for name in set(sys.modules) - before:
            del sys.modules[name]
    captured = capsys.readouterr()
    assert (
        "workbench drift: CustomBot's CustomHistoryProvider: the workbench does not know where CustomHistoryProvider "
        f"keeps what it is given: its agent's rows are not run (give {ALLOW_OPTION} to run them there)"
    ) in captured.err
    assert "stores of the lab's own" not in captured.err  # none of its memories runs on one: not said
    assert set(json.loads(captured.out)["unavailable"]) == set(ROWS)


def test_what_the_lab_reports_retained_and_on_disk_is_what_its_copies_held_before_it_removed_them(
    tmp_path, monkeypatch
):
    """Triage's history kept one earlier conversation: the copy starts with it (its bytes count on disk;
    its messages belong to no session of the lab's), and the lab's own sessions add their files."""
    data = tmp_path / "data"
    earlier = [Message(role="user", contents=["An earlier conversation: customer=Fabrikam 4410"])]
    asyncio.run(FileHistoryProvider(data / "triage-history").save_messages("earlier", earlier))
    held: dict[str, dict[str, bytes]] = {}
    close = LabStores.close

    async def measured(self: LabStores) -> None:  # what the copies hold as the lab removes them
        held[str(self.folder)] = {str(p): p.read_bytes() for p in self.folder.rglob("*") if p.is_file()}
        await close(self)

    monkeypatch.setattr(LabStores, "close", measured)
    monkeypatch.setenv("EXAMPLE_AGENTS_DATA", str(data))
    before = set(sys.modules)
    try:
        agents = [a for a in from_folder(EXAMPLES) if a.name == "triage"]
        rows = ["yours:triage", "yours:triage+facts"]
        drift = asyncio.run(run_drift(build_models(ModelConfig()), agents=agents, policies=rows))
    finally:
        for name in set(sys.modules) - before:
            del sys.modules[name]
    assert len(held) == 2  # one copy per row, both removed
    assert not any(Path(folder).exists() for folder in held)
    for name, (folder, files) in zip(rows, held.items(), strict=True):
        retained = drift.retained[name]
        assert retained.on_disk == sum(len(b) for b in files.values())
        assert sum(1 for f in files if f.endswith("earlier.jsonl")) == 1  # the user's, copied
        lines = {f: b.count(b"\n") for f, b in files.items() if not f.endswith("earlier.jsonl")}
        if name == "yours:triage":  # as configured: its sessions hold every message the lab sent and got
            assert retained.messages == sum(lines.values()) > 0
        else:  # in the workbench, the forget replaced the session: only the newer session's messages are retained
            assert 0 < retained.messages < sum(lines.values())
        assert folder.startswith(str(Path(folder).parent / "workbench-drift-"))


with retiring():  # the framework warns that it retires these classes: the workbench says so in its docs

    class OwnedMemory(MemoryContextProvider):
        """A user's extracted memory: the framework's provider, with the owner its author's app sets."""

        async def before_run(self, *, agent: Any, session: AgentSession, context: SessionContext, state: Any) -> None:
            session.state["owner"] = "ana"
            await super().before_run(agent=agent, session=session, context=context, state=state)


def test_extracted_memory_runs_on_a_copy_and_its_folder_is_left_as_it_was(tmp_path):
    with retiring():
        store = MemoryFileStore(tmp_path / "memory", owner_state_key="owner")
    coach = Agent(ScriptedChatClient(), "You coach.", name="coach", context_providers=[OwnedMemory(store=store)])

    async def earlier() -> None:  # the user's own conversation, before the lab
        await coach.run("customer=Fabrikam 4410; module=Reporting", session=coach.create_session())

    asyncio.run(earlier())

    def files() -> dict[str, tuple[int, bytes]]:
        found = sorted((tmp_path / "memory").rglob("*"))
        return {str(p): (p.stat().st_mode, p.read_bytes() if p.is_file() else b"") for p in found}

    before = files()
    assert any("/topics/" in name for name in before)  # the user's memory holds a topic already
    rows = ["yours:coach", "yours:coach+facts"]
    drift = asyncio.run(run_drift(build_models(ModelConfig()), agents=from_objects([coach]), policies=rows))
    assert files() == before
    for policy in to_json(drift)["policies"]:
        [agent] = policy["agents"]
        assert agent["memories"][0].startswith(f"OwnedMemory: on a copy of {tmp_path / 'memory'}")
        assert (drift.retained[policy["name"]].on_disk or 0) > 0
        assert [r["verified"] for r in policy["removed"]] == [True]
