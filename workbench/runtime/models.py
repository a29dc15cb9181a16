"""Which chat clients the runtime talks to: the built-in scripted model, or an OpenAI-compatible server."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any
from urllib.parse import urlsplit

from agent_framework import FunctionInvocationConfiguration, SupportsChatGetResponse

from workbench.runtime.azure import (
    SignIn,
    TokenProvider,
    azure_chat_client,
    azure_client_options,
    azure_label,
    azure_sign_in,
)
from workbench.runtime.bounds import ReplyBound
from workbench.runtime.config import DEFAULT_MAX_TOKENS, ModelConfig, WriterFormat
from workbench.runtime.deadline import bound_retries
from workbench.runtime.failures import explain_failure
from workbench.runtime.scripted import SCRIPTED_LABEL, ScriptedChatClient

LOCAL_PLACEHOLDER_KEY = "no-key-needed"


@dataclass(frozen=True)
class ModelSet:
    agent_client: SupportsChatGetResponse
    writer_client: SupportsChatGetResponse
    agent_label: str
    writer_label: str
    base_url: str | None = None
    secrets: tuple[str, ...] = field(default=(), repr=False)
    writer_format: WriterFormat = WriterFormat.JSON_SCHEMA
    timeout: float = 120.0  # seconds per model call, in total: --timeout
    scripted: bool = False  # the built-in script: it answers, but qualifies no model
    function_calls: bool = False  # the framework's function-invocation loop runs (see build_models)
    max_tokens: int = DEFAULT_MAX_TOKENS  # an agent's or the summarizer's reply: --max-tokens
    compatible_server: bool = False  # an OpenAI-compatible server (--base-url), not OpenAI or Azure
    sign_in: SignIn | None = None  # on Azure OpenAI: the kind of credential the clients send (never its value)

    @property
    def bound(self) -> ReplyBound:
        """How a bound on a reply travels to this server."""
        return ReplyBound(compatible_server=self.compatible_server)

    @property
    def reply_options(self) -> dict[str, Any]:
        """Default options of the agents and the summarizer: their replies bounded by --max-tokens."""
        return self.bound.options(self.max_tokens)

    def explain(self, exc: BaseException) -> str:
        """A failed call of these clients in one line: their server, their credential's kind, no secret."""
        return explain_failure(exc, base_url=self.base_url, secrets=self.secrets, sign_in=self.sign_in)


def _label(model: str, base_url: str | None) -> str:
    """`model @ host[:port]`: a URL's user name and password (`http://user:key@host/v1`) are never part of it."""
    host = urlsplit(base_url).netloc.rpartition("@")[2] if base_url else "api.openai.com"
    return f"{model} @ {host}"


def build_models(
    config: ModelConfig,
    *,
    scripted_delay: float = 0.0,
    credential: TokenProvider | None = None,
    function_calls: bool = False,
) -> ModelSet:
    """Clients for `config`. The OpenAI SDK is imported only here, and only for a live model.
    `credential` signs in to Azure OpenAI when there is no key (default: DefaultAzureCredential).

    The framework's function-invocation loop runs only with `function_calls` (on-demand recall
    offers the agents a search function; the built-in script never calls one). Without a function
    to call it changes no request but costs: every call copied the whole history and scanned it for
    approvals (two fifths of a 1,000-turn drift lab: 51 s with the loop, 32 s without), and every
    streamed reply was assembled once more at its end (tens of milliseconds, with typing frozen)."""
    loop: FunctionInvocationConfiguration = {"enabled": function_calls}
    if not config.is_live:
        return _build_scripted_models(config, scripted_delay, loop, function_calls)
    if config.azure is not None:
        return replace(_build_azure_models(config, credential, loop), function_calls=function_calls)
    return _build_openai_models(config, loop, function_calls)


def _build_scripted_models(
    config: ModelConfig, delay: float, loop: FunctionInvocationConfiguration, function_calls: bool
) -> ModelSet:
    """The built-in script as both the agents' and the writer's client."""
    client = ScriptedChatClient(delay=delay, function_invocation_configuration=loop)
    return ModelSet(
        client,
        client,
        SCRIPTED_LABEL,
        SCRIPTED_LABEL,
        writer_format=config.effective_writer_format,
        timeout=config.timeout,
        scripted=True,
        function_calls=function_calls,
        max_tokens=config.max_tokens,
    )


def _build_openai_models(config: ModelConfig, loop: FunctionInvocationConfiguration, function_calls: bool) -> ModelSet:
    """OpenAI's or an OpenAI-compatible server's clients (`--base-url`), one SDK client for both models."""
    from agent_framework.openai import OpenAIChatCompletionClient
    from openai import AsyncOpenAI

    assert config.model is not None
    sdk = AsyncOpenAI(
        api_key=config.api_key or LOCAL_PLACEHOLDER_KEY,
        base_url=config.base_url,
        timeout=config.timeout,
        max_retries=config.max_retries,
    )
    bound_retries(sdk)
    agent_client = OpenAIChatCompletionClient(config.model, async_client=sdk, function_invocation_configuration=loop)
    writer_model = config.writer_model or config.model
    writer_client = (
        agent_client
        if writer_model == config.model
        else OpenAIChatCompletionClient(writer_model, async_client=sdk, function_invocation_configuration=loop)
    )
    return ModelSet(
        agent_client,
        writer_client,
        _label(config.model, config.base_url),
        _label(writer_model, config.base_url),
        base_url=config.base_url or "https://api.openai.com/v1",
        secrets=tuple(s for s in (config.api_key,) if s),
        writer_format=config.effective_writer_format,
        timeout=config.timeout,
        function_calls=function_calls,
        max_tokens=config.max_tokens,
        compatible_server=config.base_url is not None,
    )


def _build_azure_models(
    config: ModelConfig, credential: TokenProvider | None, loop: FunctionInvocationConfiguration
) -> ModelSet:
    """One client per deployment (Azure puts the deployment in the URL), sharing one sign-in."""
    assert config.model is not None and config.azure is not None
    options = azure_client_options(config, credential) | {"function_invocation_configuration": loop}
    agent_client = azure_chat_client(config, config.model, options)
    writer_model = config.writer_model or config.model
    writer_client = agent_client if writer_model == config.model else azure_chat_client(config, writer_model, options)
    for client in {agent_client, writer_client}:
        bound_retries(client.client)
    return ModelSet(
        agent_client,
        writer_client,
        azure_label(config.model, config.azure),
        azure_label(writer_model, config.azure),
        base_url=config.azure.endpoint,
        secrets=tuple(s for s in (config.api_key,) if s),
        writer_format=config.effective_writer_format,
        timeout=config.timeout,
        max_tokens=config.max_tokens,
        sign_in=azure_sign_in(config),
    )
