from __future__ import annotations

import stat
from pathlib import Path

from workbench.runtime import ModelConfig, WriterKind, build_models
from workbench.runtime.agents import AgentRuntime
from workbench.runtime.memories import AgentMemory
from workbench.session.assemble import assemble


def live_runtime(base_url: str, memory: AgentMemory) -> AgentRuntime:
    """Both agents on the loopback server, the framework's function-invocation loop on, facts by the host."""
    config = ModelConfig(model="loopback-model", base_url=base_url, timeout=30.0, max_retries=0)
    models = build_models(config, function_calls=True)
    return assemble(models, writer=WriterKind.HOST, timeout=30.0, memories=[memory]).runtime


def scripted_runtime(memory: AgentMemory) -> AgentRuntime:
    return assemble(build_models(ModelConfig()), writer=WriterKind.HOST, memories=[memory]).runtime


def files_holding(root: Path, value: str) -> list[str]:
    """Every file under `root` whose bytes or name hold `value` (the raw scan)."""
    needle = value.encode()
    return sorted(
        str(p.relative_to(root))
        for p in root.rglob("*")
        if needle in p.name.encode() or (p.is_file() and needle in p.read_bytes())
    )


def modes(root: Path) -> set[tuple[str, int]]:
    """(kind, permission bits) of everything under `root`, `root` included."""
    found = {("dir", stat.S_IMODE(root.stat().st_mode))}
    for p in root.rglob("*"):
        found.add(("dir" if p.is_dir() else "file", stat.S_IMODE(p.stat().st_mode)))
    return found


async def say(runtime: AgentRuntime, *texts: str, agent: str = "support") -> None:
    for text in texts:
        result = await runtime.ask(agent, text)
        assert result.ok, result.error
