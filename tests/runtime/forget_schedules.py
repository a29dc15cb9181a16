"""Asks and forgets at random instants, seeded: the schedules the barrier tests and
`bench/forget_barrier.py` drive. A turn or a forget is asked when it is called; what asked it may start
awaiting it later (a task started at another instant, a gather of what was asked earlier), so each
schedule asks, starts and yields to the event loop in a random order. Afterwards every turn must have
started after each forget asked before it took effect (its ticket's epoch counts them), and every turn
asked after the last forget must be in its agent's history."""

from __future__ import annotations

import asyncio
import random
from collections.abc import Coroutine
from dataclasses import dataclass, field
from typing import Any

from workbench.memory.forget import ForgetReport
from workbench.runtime import AGENT_NAMES, Mode, ModelConfig, TurnResult, build_models
from workbench.session.assemble import assemble

KEYS = ("customer", "module", None)


@dataclass
class Schedule:
    """What one seeded schedule asked, in the order it asked it, and what went wrong."""

    seed: int
    mode: Mode
    turns: list[tuple[int, str, str]] = field(default_factory=list)  # (forgets asked before, agent, text)
    forgets: int = 0
    decisions: int = 0  # how many times it chose what to do next: ask, start, or yield to the loop
    broken: list[str] = field(default_factory=list)


async def run(seed: int, mode: Mode, *, asks: int = 12, forget_chance: float = 0.25) -> Schedule:
    """One schedule: `asks` calls (turns on either agent, a forget at `forget_chance`), each started at a
    random later instant, the loop given a random number of steps between decisions."""
    rng = random.Random(seed)
    runtime = assemble(build_models(ModelConfig()), mode=mode).runtime
    done = Schedule(seed, mode)
    waiting: list[tuple[int, Coroutine[Any, Any, TurnResult | ForgetReport]]] = []
    started: list[tuple[int, asyncio.Task[TurnResult | ForgetReport]]] = []
    asked = 0
    while asked < asks or waiting:
        choice = rng.random()
        done.decisions += 1
        if asked < asks and choice < 0.45:
            if rng.random() < forget_chance:
                waiting.append((-1, runtime.forget(rng.choice(KEYS))))
                done.forgets += 1
            else:
                agent = rng.choice(AGENT_NAMES)
                text = (
                    f"turn {seed}.{asked}: customer=C{asked}" if rng.random() < 0.4 else f"turn {seed}.{asked}: logs?"
                )
                waiting.append((len(done.turns), runtime.ask(agent, text)))
                done.turns.append((done.forgets, agent, text))
            asked += 1
        elif waiting and choice < 0.8:
            index, call = waiting.pop(rng.randrange(len(waiting)))
            started.append((index, asyncio.ensure_future(call)))
        for _ in range(rng.randrange(3)):
            await asyncio.sleep(0)
    ended = await asyncio.gather(*(task for _, task in started))
    results = {index: result for (index, _), result in zip(started, ended, strict=True) if index >= 0}
    for index, (before, agent, text) in enumerate(done.turns):
        result = results[index]
        assert isinstance(result, TurnResult) and result.ok, result
        if result.turn.epoch < before:
            done.broken.append(f"{text!r} started before {before - result.turn.epoch} forget(s) asked before it")
        kept = [m.text or "" for m in runtime.history(agent) if str(m.role) == "user"]
        if before == done.forgets and not any(text in message for message in kept):
            done.broken.append(f"{text!r}, asked after the last forget, is not in the {agent} agent's history")
    return done
