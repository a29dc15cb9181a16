"""Azure OpenAI through Agent Framework's own OpenAI clients: the framework routes to
`{endpoint}/openai/deployments/{deployment}/...?api-version=...` and sends the key as `api-key`,
or an Entra ID bearer token from a credential. Keys and tokens never leave the SDK's headers."""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import Awaitable, Callable
from enum import StrEnum
from typing import TYPE_CHECKING, Any

from workbench.runtime.config import AZURE_EXTRA, AzureTarget, ConfigError, ModelConfig, entra_id_available

if TYPE_CHECKING:
    from agent_framework.openai import OpenAIChatCompletionClient, OpenAIEmbeddingClient

# What Azure OpenAI accepts Entra ID tokens for (the framework's AZURE_OPENAI_TOKEN_SCOPE).
TOKEN_SCOPE = "https://cognitiveservices.azure.com/.default"

TokenProvider = Callable[[], str | Awaitable[str]]


class SignIn(StrEnum):
    """Which kind of credential the workbench sends to an Azure OpenAI resource."""

    KEY = "key"  # the resource's key, as `api-key`
    ENTRA_ID = "Entra ID"  # a bearer token from a credential (DefaultAzureCredential by default)


def azure_sign_in(config: ModelConfig) -> SignIn:
    """How the clients for `config` sign in: with the key when there is one, else with Entra ID. The one
    place this is decided: the clients are built by it (`azure_client_options`), and a refused request
    is read by it (`ModelSet.sign_in`), since the SDK does not keep the credential on a failed request."""
    return SignIn.KEY if config.api_key else SignIn.ENTRA_ID


def azure_label(deployment: str, target: AzureTarget) -> str:
    return f"azure: {deployment} @ {target.resource}"


def entra_token_provider() -> TokenProvider:
    """DefaultAzureCredential (az login, managed identity, workload identity, ...) as a token provider.
    azure-identity is imported and the credential built on the first call, in a worker thread like
    every token request, so neither start-up nor the event loop waits for it (importing it takes
    longer than importing Agent Framework's OpenAI clients); it caches the token until shortly
    before it expires."""
    if not entra_id_available():
        raise ConfigError(f"Entra ID sign-in needs azure-identity: {AZURE_EXTRA}, or set AZURE_OPENAI_API_KEY")
    lock = threading.Lock()
    providers: list[Callable[[], str]] = []

    def bearer_token() -> str:
        with lock:
            if not providers:
                from azure.identity import DefaultAzureCredential, get_bearer_token_provider

                # azure-identity reports each failed attempt as a multi-line warning; Python printed it
                # to stderr, over the TUI or around the CLI's one line, and the handler of the libraries'
                # warnings (workbench.notes) would say it again. A failed sign-in still reaches the user,
                # as one line (failures.explain_failure).
                azure = logging.getLogger("azure")
                azure.addHandler(logging.NullHandler())
                azure.propagate = False
                providers.append(get_bearer_token_provider(DefaultAzureCredential(), TOKEN_SCOPE))
        return providers[0]()

    async def token() -> str:
        return await asyncio.to_thread(bearer_token)

    return token


def azure_client_options(config: ModelConfig, credential: TokenProvider | None = None) -> dict[str, Any]:
    """The keyword arguments that put a framework OpenAI client (chat or embedding) on Azure:
    the key when there is one, else `credential` (default: DefaultAzureCredential)."""
    assert config.azure is not None
    auth: dict[str, Any] = (
        {"api_key": config.api_key}
        if azure_sign_in(config) is SignIn.KEY
        else {"credential": credential if credential is not None else entra_token_provider()}
    )
    return {"azure_endpoint": config.azure.endpoint, "api_version": config.azure.api_version, **auth}


def azure_chat_client(config: ModelConfig, deployment: str, options: dict[str, Any]) -> OpenAIChatCompletionClient:
    """One deployment's chat client, its calls bounded like any live model's."""
    from agent_framework.openai import OpenAIChatCompletionClient

    client = OpenAIChatCompletionClient(deployment, **options)
    client.client = client.client.with_options(timeout=config.timeout, max_retries=config.max_retries)
    return client


def azure_embedding_client(config: ModelConfig, deployment: str, options: dict[str, Any]) -> OpenAIEmbeddingClient:
    """An embedding deployment on the same resource, signed in and bounded the same way (seed 004's
    AZURE_OPENAI_EMBEDDING_DEPLOYMENT_NAME, for the retrieved memory)."""
    from agent_framework.openai import OpenAIEmbeddingClient

    client = OpenAIEmbeddingClient(model=deployment, **options)
    client.client = client.client.with_options(timeout=config.timeout, max_retries=config.max_retries)
    return client
