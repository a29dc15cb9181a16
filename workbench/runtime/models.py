"""Which chat clients the runtime talks to: the built-in scripted model, or an OpenAI-compatible server."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from urllib.parse import urlsplit

from agent_framework import SupportsChatGetResponse

from workbench.runtime.scripted import SCRIPTED_LABEL, ScriptedChatClient
from workbench.runtime.writer import WriterFormat

LOCAL_PLACEHOLDER_KEY = "no-key-needed"


class ConfigError(ValueError):
    """The model configuration cannot work; the message names what to set."""


@dataclass(frozen=True)
class ModelConfig:
    """`model` None means the built-in scripted model. The key is never shown in repr."""

    model: str | None = None
    base_url: str | None = None
    writer_model: str | None = None
    api_key: str | None = field(default=None, repr=False)
    timeout: float = 120.0
    max_retries: int = 2
    writer_format: WriterFormat | None = None

    @classmethod
    def from_options(
        cls,
        *,
        model: str | None = None,
        base_url: str | None = None,
        writer_model: str | None = None,
        timeout: float = 120.0,
        writer_format: str | None = None,
    ) -> ModelConfig:
        """Command-line options first, then OPENAI_BASE_URL and OPENAI_API_KEY from the environment.

        A live model is used only when a model is named: a key in the environment alone never
        turns the built-in model into a billed one."""
        base_url = base_url or os.environ.get("OPENAI_BASE_URL") or None
        chosen_format = WriterFormat(writer_format) if writer_format else None
        if model is None:
            if writer_model:
                raise ConfigError("--writer-model needs --model: name the agents' model too")
            if base_url and base_url != os.environ.get("OPENAI_BASE_URL"):
                raise ConfigError(f"--base-url {base_url} needs --model: name the model that server serves")
            return cls(timeout=timeout, writer_format=chosen_format)
        api_key = os.environ.get("OPENAI_API_KEY") or None
        if api_key is None and base_url is None:
            raise ConfigError(
                "the OpenAI API needs a key: set OPENAI_API_KEY, or point --base-url (or OPENAI_BASE_URL) "
                "at a local OpenAI-compatible server"
            )
        if timeout <= 0:
            raise ConfigError("--timeout must be a positive number of seconds")
        return cls(
            model=model,
            base_url=base_url,
            writer_model=writer_model,
            api_key=api_key,
            timeout=timeout,
            writer_format=chosen_format,
        )

    @property
    def is_live(self) -> bool:
        return self.model is not None

    @property
    def effective_writer_format(self) -> WriterFormat:
        """As chosen; else structured output for OpenAI and the built-in model, negotiation elsewhere."""
        if self.writer_format is not None:
            return self.writer_format
        return WriterFormat.AUTO if self.is_live and self.base_url else WriterFormat.JSON_SCHEMA


@dataclass(frozen=True)
class ModelSet:
    agent_client: SupportsChatGetResponse
    writer_client: SupportsChatGetResponse
    agent_label: str
    writer_label: str
    base_url: str | None = None
    secrets: tuple[str, ...] = field(default=(), repr=False)
    writer_format: WriterFormat = WriterFormat.JSON_SCHEMA


def _label(model: str, base_url: str | None) -> str:
    host = urlsplit(base_url).netloc if base_url else "api.openai.com"
    return f"{model} @ {host}"


def build_models(config: ModelConfig, *, scripted_delay: float = 0.0) -> ModelSet:
    """Clients for `config`. The OpenAI SDK is imported only here, and only for a live model."""
    if not config.is_live:
        client = ScriptedChatClient(delay=scripted_delay)
        return ModelSet(client, client, SCRIPTED_LABEL, SCRIPTED_LABEL, writer_format=config.effective_writer_format)
    from agent_framework.openai import OpenAIChatCompletionClient
    from openai import AsyncOpenAI

    assert config.model is not None
    sdk = AsyncOpenAI(
        api_key=config.api_key or LOCAL_PLACEHOLDER_KEY,
        base_url=config.base_url,
        timeout=config.timeout,
        max_retries=config.max_retries,
    )
    agent_client = OpenAIChatCompletionClient(config.model, async_client=sdk)
    writer_model = config.writer_model or config.model
    writer_client = (
        agent_client if writer_model == config.model else OpenAIChatCompletionClient(writer_model, async_client=sdk)
    )
    return ModelSet(
        agent_client,
        writer_client,
        _label(config.model, config.base_url),
        _label(writer_model, config.base_url),
        base_url=config.base_url or "https://api.openai.com/v1",
        secrets=tuple(s for s in (config.api_key,) if s),
        writer_format=config.effective_writer_format,
    )
