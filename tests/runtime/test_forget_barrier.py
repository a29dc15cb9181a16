"""A forget is a barrier: 200 turns asked at once on both agents, with 8 forgets asked among them (the
last forgetting everything). Every turn asked after the last forget was asked starts after it, on the
sessions it left, and is in its agent's history afterwards; in memory and with `--persist` (read back
by a restart too)."""

import asyncio

import pytest

from tests.runtime.test_persist import quit_, started
from workbench.memory import WorkingMemory
from workbench.memory.forget import ForgetReport
from workbench.runtime import AGENT_NAMES, AgentRuntime, ModelConfig, TurnResult, build_models

TURNS = 200
KEYS = ("customer", "module", "database", "customer", "module", "database", "customer", None)


def asked_in_order(runtime: AgentRuntime) -> tuple[list[tuple[int, str, str]], list[int], list[object]]:
    """The turns and forgets in the order they are asked: a forget after turns 10, 35, ..., 185."""
    turns: list[tuple[int, str, str]] = []
    forgets: list[int] = []
    calls: list[object] = []
    keys = iter(KEYS)
    for i in range(TURNS):
        agent = AGENT_NAMES[i % 2]
        text = f"turn {i}: customer=C{i}" if i % 3 == 0 else f"turn {i}: where are the logs?"
        turns.append((len(calls), agent, text))
        calls.append(runtime.ask(agent, text))
        if i % 25 == 10:
            forgets.append(len(calls))
            calls.append(runtime.forget(next(keys)))
    return turns, forgets, calls


async def ask_everything(runtime: AgentRuntime) -> list[tuple[str, str]]:
    """Run it all at once; the turns asked after the last forget was asked, as (agent, text)."""
    turns, forgets, calls = asked_in_order(runtime)
    results = await asyncio.gather(*calls)  # type: ignore[call-overload]
    assert all(r.ok for r in results if isinstance(r, TurnResult))
    assert all(not r.failures for r in results if isinstance(r, ForgetReport))
    after = [(agent, text) for position, agent, text in turns if position > forgets[-1]]
    assert len(after) == 14  # 7 on each agent
    return after


def missing(runtime: AgentRuntime, turns: list[tuple[str, str]]) -> list[tuple[str, str]]:
    kept = {name: [m.text or "" for m in runtime.history(name) if str(m.role) == "user"] for name in AGENT_NAMES}
    return [(agent, text) for agent, text in turns if not any(text in message for message in kept[agent])]


async def test_every_turn_asked_after_the_last_forget_is_kept_in_memory():
    runtime = AgentRuntime(WorkingMemory(), build_models(ModelConfig()))
    after = await ask_everything(runtime)
    assert missing(runtime, after) == []


@pytest.mark.parametrize("restart", [False, True], ids=["running", "restarted"])
async def test_every_turn_asked_after_the_last_forget_is_kept_on_disk(tmp_path, restart):
    runtime = started(tmp_path / "sessions")
    after = await ask_everything(runtime)
    if restart:
        quit_(runtime)
        runtime = started(tmp_path / "sessions")
    assert missing(runtime, after) == []
