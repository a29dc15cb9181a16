"""A forget is a barrier: 200 turns asked at once on both agents, with 8 forgets asked among them (the
last forgetting everything). Every turn asked after the last forget was asked starts after it, on the
sessions it left, and is in its agent's history afterwards; in memory and with `--persist` (read back
by a restart too), in both modes. And the same at random instants: seeded schedules that ask turns and
forgets, start awaiting them in another order and yield to the loop between (`forget_schedules`);
`bench/forget_barrier.py` runs thousands of them."""

import asyncio

import pytest

from tests.runtime import forget_schedules as schedules
from tests.runtime.test_persist import quit_, started
from workbench.memory.forget import ForgetReport
from workbench.runtime import AGENT_NAMES, Mode, ModelConfig, TurnResult, build_models
from workbench.runtime.agents import AgentRuntime
from workbench.session.assemble import assemble

# Every forget collects garbage (`release_garbage`): the worker's heap from earlier tests is not walked.
pytestmark = pytest.mark.usefixtures("frozen_heap")

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


@pytest.mark.parametrize("mode", list(Mode))
async def test_every_turn_asked_after_the_last_forget_is_kept_in_memory(mode):
    runtime = assemble(build_models(ModelConfig()), mode=mode).runtime
    after = await ask_everything(runtime)
    assert missing(runtime, after) == []


async def test_a_turn_asked_after_a_forget_waits_for_it_however_late_it_is_awaited():
    """Asked is called: a turn whose awaiting starts before the forget's still starts after it."""
    runtime = assemble(build_models(ModelConfig())).runtime
    assert (await runtime.ask("support", "customer=Early")).ok
    forget = runtime.forget()
    turn = runtime.ask("support", "customer=Late; where are the logs?")
    result = await asyncio.ensure_future(turn)  # started, and ended, before the forget is awaited
    await forget
    assert result.ok and result.turn.epoch == 1
    assert [m.text for m in runtime.history("support") if str(m.role) == "user"][-1].endswith("where are the logs?")
    assert {f.key: f.value for f in runtime.memory.facts()} == {"customer": "Late"}


@pytest.mark.parametrize("mode", list(Mode))
async def test_turns_and_forgets_asked_at_random_instants(mode):
    """60 seeded schedules in each mode, about 2,000 random decisions between them: none breaks the barrier."""
    seeds = range(0, 60) if mode is Mode.MANUAL else range(1000, 1060)
    ran = [await schedules.run(seed, mode) for seed in seeds]
    assert [s.broken for s in ran if s.broken] == []
    assert sum(s.decisions for s in ran) > 1_500


@pytest.mark.parametrize("restart", [False, True], ids=["running", "restarted"])
async def test_every_turn_asked_after_the_last_forget_is_kept_on_disk(tmp_path, restart):
    runtime = started(tmp_path / "sessions")
    after = await ask_everything(runtime)
    if restart:
        quit_(runtime)
        runtime = started(tmp_path / "sessions")
    assert missing(runtime, after) == []
