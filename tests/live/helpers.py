from typing import Any

from workbench.runtime import Mode, ModelConfig, build_models
from workbench.runtime.agents import AgentRuntime
from workbench.runtime.config import WriterFormat
from workbench.session.assemble import assemble
from workbench.session.controller import SessionController


def live_session(
    base_url: str,
    writer_format: str | None = None,
    *,
    timeout: float = 30.0,
    retries: int = 0,
    mode: Mode = Mode.MANUAL,
) -> SessionController:
    config = ModelConfig(
        model="loopback-model",
        base_url=base_url,
        timeout=timeout,
        max_retries=retries,
        writer_format=WriterFormat(writer_format) if writer_format else None,
    )
    return assemble(build_models(config), mode=mode, timeout=timeout)


def live_runtime(base_url: str, writer_format: str | None = None, **options: Any) -> AgentRuntime:
    return live_session(base_url, writer_format, **options).runtime


def is_writer(body) -> bool:
    return "writer agent" in body["messages"][0]["content"]


def response_format_type(body) -> str | None:
    return (body.get("response_format") or {}).get("type")


def writer_format_of(body) -> str | None:
    """The writer format a request travels in: JSON mode with a schema is the llama.cpp family's own."""
    response_format = body.get("response_format") or {}
    if response_format.get("type") == "json_object" and "schema" in response_format:
        return "json_object_schema"
    return response_format.get("type")
