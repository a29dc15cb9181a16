"""What the user chose on the command line: model, server, formats, modes. Light to import: the CLI
reads it before anything heavy (Agent Framework, the OpenAI SDK) is loaded."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from enum import StrEnum


class Mode(StrEnum):
    MANUAL = "manual"
    PROVIDER = "provider"


class WriterKind(StrEnum):
    MODEL = "model"
    HOST = "host"


class WriterFormat(StrEnum):
    JSON_SCHEMA = "json_schema"
    JSON_OBJECT = "json_object"
    PROMPT = "prompt"
    AUTO = "auto"


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
