from workbench.memory import WorkingMemory
from workbench.runtime import Mode, ModelConfig, WriterKind, build_models
from workbench.runtime.agents import AgentRuntime
from workbench.session.assemble import assemble


def scripted(mode: Mode = Mode.MANUAL, *, delay: float = 0.0, timeout: float = 30.0, writer=WriterKind.MODEL):
    memory = WorkingMemory()
    models = build_models(ModelConfig(timeout=timeout), scripted_delay=delay)
    return assemble(models, memory=memory, mode=mode, writer=writer, timeout=timeout).runtime


def live(base_url: str, mode: Mode = Mode.MANUAL, *, timeout: float = 30.0, writer=WriterKind.MODEL):
    config = ModelConfig(model="loopback-model", base_url=base_url, timeout=timeout, max_retries=0)
    return assemble(build_models(config), mode=mode, writer=writer, timeout=timeout).runtime


def facts(runtime: AgentRuntime) -> dict[str, tuple[str, str]]:
    return {f.key: (f.value, f.evidence) for f in runtime.memory.facts()}


def transcript(runtime: AgentRuntime, name: str) -> list[tuple[str, str]]:
    return [(str(m.role), m.text or "") for m in runtime.history(name)]


def kinds(runtime: AgentRuntime) -> list[str]:
    return [str(e.kind) for e in runtime.memory.ledger.latest()]
