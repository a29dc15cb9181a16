"""The headless agent runtime: two agents on one working memory, the writer, model clients.
Knows nothing of Textual."""

from workbench.runtime.agents import AGENT_NAMES, AgentRuntime, Mode, TurnResult, WriterKind
from workbench.runtime.calls import CallLog, CallRecord, SentMessage
from workbench.runtime.models import ConfigError, ModelConfig, ModelSet, build_models
from workbench.runtime.usage import Usage, describe_usage, total_usage

__all__ = [
    "AGENT_NAMES",
    "AgentRuntime",
    "CallLog",
    "CallRecord",
    "ConfigError",
    "Mode",
    "ModelConfig",
    "ModelSet",
    "SentMessage",
    "TurnResult",
    "Usage",
    "WriterKind",
    "build_models",
    "describe_usage",
    "total_usage",
]
