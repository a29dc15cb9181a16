"""The headless agent runtime: two agents on one working memory, the writer, model clients.
Knows nothing of Textual.

The runtime itself (`workbench.runtime.agents.AgentRuntime`) is not exported: built alone, its holders
are registered with no forget, so a forget would reach memory only. It is built, whole, by the one
assembly: `workbench.session.assemble.assemble(build_models(ModelConfig()), ...)`, whose session's
`runtime` it is; its `forget` refuses until then."""

from __future__ import annotations

from typing import TYPE_CHECKING

from workbench.lazy import lazy_exports

if TYPE_CHECKING:
    from workbench.runtime.agents import AGENT_NAMES
    from workbench.runtime.calls import CallLog, CallRecord, SentMessage
    from workbench.runtime.config import ConfigError, Mode, ModelConfig, WriterFormat, WriterKind
    from workbench.runtime.context import ContextSplit, split_request
    from workbench.runtime.models import ModelSet, build_models
    from workbench.runtime.turns import TurnResult
    from workbench.runtime.usage import Usage, describe_usage, total_usage
    from workbench.runtime.view import MemorySnapshot, MemoryUpdate, RuntimeStatus

_EXPORTS = {
    "AGENT_NAMES": "workbench.runtime.agents",
    "TurnResult": "workbench.runtime.turns",
    "CallLog": "workbench.runtime.calls",
    "CallRecord": "workbench.runtime.calls",
    "SentMessage": "workbench.runtime.calls",
    "ConfigError": "workbench.runtime.config",
    "ContextSplit": "workbench.runtime.context",
    "split_request": "workbench.runtime.context",
    "Mode": "workbench.runtime.config",
    "ModelConfig": "workbench.runtime.config",
    "WriterFormat": "workbench.runtime.config",
    "WriterKind": "workbench.runtime.config",
    "ModelSet": "workbench.runtime.models",
    "build_models": "workbench.runtime.models",
    "Usage": "workbench.runtime.usage",
    "describe_usage": "workbench.runtime.usage",
    "total_usage": "workbench.runtime.usage",
    "MemorySnapshot": "workbench.runtime.view",
    "MemoryUpdate": "workbench.runtime.view",
    "RuntimeStatus": "workbench.runtime.view",
}
__all__ = [
    "AGENT_NAMES",
    "CallLog",
    "CallRecord",
    "ConfigError",
    "ContextSplit",
    "MemorySnapshot",
    "MemoryUpdate",
    "Mode",
    "ModelConfig",
    "ModelSet",
    "RuntimeStatus",
    "SentMessage",
    "TurnResult",
    "Usage",
    "WriterFormat",
    "WriterKind",
    "build_models",
    "describe_usage",
    "split_request",
    "total_usage",
]


__getattr__ = lazy_exports(__name__, _EXPORTS, globals())
