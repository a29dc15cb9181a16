"""What the user chose on the command line: model, server, formats, modes. Light to import: the CLI
reads it before anything heavy (Agent Framework, the OpenAI SDK) is loaded."""

from __future__ import annotations

import importlib.util
import math
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from enum import StrEnum
from urllib.parse import urlsplit

from workbench.memory.shown import quoted
from workbench.text import hides

# The newest generally available Azure OpenAI inference API version: it has structured output
# (json_schema) and streamed usage. Previews come and go; a GA version stays.
DEFAULT_AZURE_API_VERSION = "2024-10-21"
AZURE_EXTRA = 'pip install "agent-memory-workbench[azure]"'
# The most tokens an agent's or the summarizer's reply may have (--max-tokens): a long answer fits,
# and a small model that loops is cut off in seconds instead of filling its context.
DEFAULT_MAX_TOKENS = 1024
_DEPLOYMENT_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")


class Mode(StrEnum):
    MANUAL = "manual"
    PROVIDER = "provider"


class WriterKind(StrEnum):
    MODEL = "model"
    HOST = "host"


class WriterFormat(StrEnum):
    JSON_SCHEMA = "json_schema"
    JSON_OBJECT_SCHEMA = "json_object_schema"
    JSON_OBJECT = "json_object"
    PROMPT = "prompt"
    AUTO = "auto"


class ConfigError(ValueError):
    """The model configuration cannot work; the message names what to set."""


@dataclass(frozen=True)
class AzureTarget:
    """An Azure OpenAI resource. The deployments are the config's models; the key, when there is
    one, is the config's api_key (sent as `api-key`), else Entra ID signs in."""

    endpoint: str
    api_version: str = DEFAULT_AZURE_API_VERSION

    @property
    def resource(self) -> str:
        """`contoso` for https://contoso.openai.azure.com (and the other Azure host shapes), else the host."""
        host = urlsplit(self.endpoint).netloc
        for suffix in (".openai.azure.com", ".cognitiveservices.azure.com", ".services.ai.azure.com"):
            if host.lower().endswith(suffix):
                return host[: -len(suffix)]
        return host


def entra_id_available() -> bool:
    """Whether the optional azure-identity package is installed (without importing it)."""
    try:
        return importlib.util.find_spec("azure.identity") is not None
    except (ImportError, ValueError):
        return False


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
    azure: AzureTarget | None = None
    max_tokens: int = DEFAULT_MAX_TOKENS

    @classmethod
    def from_options(
        cls,
        *,
        model: str | None = None,
        base_url: str | None = None,
        writer_model: str | None = None,
        timeout: float = 120.0,
        writer_format: str | None = None,
        azure_endpoint: str | None = None,
        api_version: str | None = None,
        max_tokens: int = DEFAULT_MAX_TOKENS,
        environ: Mapping[str, str] = os.environ,
    ) -> ModelConfig:
        """Command-line options first, then OPENAI_BASE_URL and OPENAI_API_KEY from `environ` (the process's).

        A live model is used only when a model (or an Azure endpoint) is named on the command line:
        a key in the environment alone never turns the built-in model into a billed one. Azure is
        chosen as Agent Framework chooses it: an explicit Azure option first, then an OpenAI key or
        server, then AZURE_OPENAI_ENDPOINT."""
        if not (math.isfinite(timeout) and timeout > 0):
            raise ConfigError("--timeout must be a positive number of seconds")
        if max_tokens < 1:
            raise ConfigError("--max-tokens must be a whole number of tokens, 1 or more")
        chosen_format = WriterFormat(writer_format) if writer_format else None
        if _wants_azure(environ, model, base_url, azure_endpoint, api_version):
            if base_url:
                raise ConfigError("--base-url and --azure-endpoint name two different servers: use one of them")
            azure = cls._azure(
                model=model,
                writer_model=writer_model,
                endpoint=azure_endpoint,
                api_version=api_version,
                timeout=timeout,
                writer_format=chosen_format,
                env=environ,
            )
            return replace(azure, max_tokens=max_tokens)
        given = server_url(base_url, "--base-url")
        if model is None:  # the built-in model: OPENAI_BASE_URL is not read
            if writer_model:
                raise ConfigError("--writer-model needs --model: name the agents' model too")
            if given and given != environ.get("OPENAI_BASE_URL", "").strip():
                raise ConfigError(f"--base-url {quoted(given, 120)} needs --model: name the model that server serves")
            return cls(timeout=timeout, writer_format=chosen_format, max_tokens=max_tokens)
        base_url = given or server_url(environ.get("OPENAI_BASE_URL"), "OPENAI_BASE_URL")
        api_key = environ.get("OPENAI_API_KEY") or None
        if api_key is None and base_url is None:
            raise ConfigError(
                "the OpenAI API needs a key: set OPENAI_API_KEY, or point --base-url (or OPENAI_BASE_URL) "
                "at a local OpenAI-compatible server, or --azure-endpoint (or AZURE_OPENAI_ENDPOINT) at Azure OpenAI"
            )
        return cls(
            model=model,
            base_url=base_url,
            writer_model=writer_model,
            api_key=api_key,
            timeout=timeout,
            writer_format=chosen_format,
            max_tokens=max_tokens,
        )

    @classmethod
    def _azure(
        cls,
        *,
        model: str | None,
        writer_model: str | None,
        endpoint: str | None,
        api_version: str | None,
        timeout: float,
        writer_format: WriterFormat | None,
        env: Mapping[str, str],
    ) -> ModelConfig:
        endpoint = _azure_endpoint(endpoint if endpoint is not None else env.get("AZURE_OPENAI_ENDPOINT"))
        if env.get("AZURE_OPENAI_BASE_URL"):
            raise ConfigError(
                "AZURE_OPENAI_BASE_URL is set as well as the Azure endpoint: unset it; workbench takes the "
                "resource endpoint from --azure-endpoint or AZURE_OPENAI_ENDPOINT"
            )
        deployment = model or env.get("AZURE_OPENAI_DEPLOYMENT_NAME") or None
        if deployment is None:
            raise ConfigError(
                "Azure OpenAI needs a deployment: pass --model DEPLOYMENT or set AZURE_OPENAI_DEPLOYMENT_NAME "
                "(the name you gave the deployment, not the model's)"
            )
        check_deployment("--model", deployment)
        if writer_model is not None:
            check_deployment("--writer-model", writer_model)
        api_key = env.get("AZURE_OPENAI_API_KEY") or None
        if api_key is None and not entra_id_available():
            raise ConfigError(
                "Azure OpenAI needs a key or an Entra ID sign-in: set AZURE_OPENAI_API_KEY, or install "
                f"azure-identity ({AZURE_EXTRA}) and sign in (az login) for DefaultAzureCredential"
            )
        version = api_version or env.get("AZURE_OPENAI_API_VERSION") or DEFAULT_AZURE_API_VERSION
        return cls(
            model=deployment,
            writer_model=writer_model,
            api_key=api_key,
            timeout=timeout,
            writer_format=writer_format,
            azure=AzureTarget(endpoint, version),
        )

    @property
    def is_live(self) -> bool:
        return self.model is not None

    @property
    def effective_writer_format(self) -> WriterFormat:
        """As chosen; else structured output for OpenAI and the built-in model, negotiation elsewhere."""
        if self.writer_format is not None:
            return self.writer_format
        elsewhere = self.base_url or self.azure
        return WriterFormat.AUTO if self.is_live and elsewhere else WriterFormat.JSON_SCHEMA


def check_deployment(option: str, name: str) -> str:
    """`name` if it can be an Azure deployment (it goes into the request's URL path as it is)."""
    if not _DEPLOYMENT_NAME.fullmatch(name):
        raise ConfigError(
            f"{option} {quoted(name, 80)} is not an Azure deployment name: up to 64 letters, digits, '.', '-', '_'"
        )
    return name


def _wants_azure(
    env: Mapping[str, str], model: str | None, base_url: str | None, azure_endpoint: str | None, api_version: str | None
) -> bool:
    """An Azure option on the command line; or a model with AZURE_OPENAI_ENDPOINT and no OpenAI key or server."""
    if azure_endpoint is not None or api_version is not None:
        return True
    openai_signals = (base_url, env.get("OPENAI_BASE_URL"), env.get("OPENAI_API_KEY"))
    return model is not None and bool(env.get("AZURE_OPENAI_ENDPOINT")) and not any(openai_signals)


def server_url(url: str | None, name: str) -> str | None:
    """`url` (from option or variable `name`) without the blanks around it, a line end pasted with it
    included; None when empty. One with a space or a control or invisible character inside is refused
    by name: the HTTP client rejects it only in the first call, deep inside."""
    stripped = (url or "").strip()
    if any(ch.isspace() or hides(ch) for ch in stripped):
        raise ConfigError(f"{name} {quoted(stripped, 120)} is not a URL: it holds a space or a control character")
    return stripped or None


def _azure_endpoint(endpoint: str | None) -> str:
    """The resource endpoint, checked: https://<resource>.openai.azure.com, with no /openai path."""
    example = "https://<resource>.openai.azure.com"
    if not endpoint:
        raise ConfigError(
            f"Azure OpenAI needs the resource endpoint: pass --azure-endpoint {example} or set AZURE_OPENAI_ENDPOINT"
        )
    parts = urlsplit(endpoint.strip())
    if parts.scheme not in ("https", "http") or not parts.netloc or parts.query or parts.fragment:
        raise ConfigError(f"the Azure endpoint {quoted(endpoint, 120)} is not a URL like {example}")
    if parts.username is not None or parts.password is not None:
        raise ConfigError(
            "the Azure endpoint must not carry credentials: set AZURE_OPENAI_API_KEY, or sign in with Entra ID"
        )
    if "/openai" in parts.path.lower():
        raise ConfigError(f"pass the Azure resource endpoint without its /openai path, like {example}")
    return f"{parts.scheme}://{parts.netloc}{parts.path.rstrip('/')}"
