"""Recall's embeddings on Azure OpenAI: an embedding deployment on the chat model's resource and
sign-in, through the framework's OpenAIEmbeddingClient, checked by recall's Embedder."""

import pytest

from tests.azure.helpers import azure_config
from tests.support.azure_server import API_KEY, EMBEDDING_DIMENSIONS, TOKEN
from tests.ui.helpers import say, start_ended
from workbench.cli.configs import model_config, recall_config
from workbench.cli.parser import build_parser
from workbench.cli.start import build_app
from workbench.recall.config import RecallConfig
from workbench.recall.embedders import EmbeddingError, LexicalEmbeddingClient
from workbench.runtime import ConfigError

TEXTS = ["module=Billing; database=SQL Server 2022", "Where can I find logs?"]
EMBEDDING = "text-embedding-3-large"


def azure_recall(azure, **options) -> RecallConfig:
    return RecallConfig.from_options(enabled=True, store="memory", chat=azure_config(azure.endpoint), **options)


async def test_an_embedding_deployment_on_the_chat_models_resource(azure):
    azure.deployments = ("gpt-4o-mini", EMBEDDING)
    embedder = azure_recall(azure, embedding_model=EMBEDDING).build().embedder
    assert embedder.label == f"azure: {EMBEDDING} @ {azure.endpoint.removeprefix('http://')}" and embedder.semantic
    vectors = await embedder.embed(TEXTS)
    assert vectors == [LexicalEmbeddingClient(EMBEDDING_DIMENSIONS).embed(t) for t in TEXTS]
    (request,) = azure.seen
    assert request.path == f"/openai/deployments/{EMBEDDING}/embeddings"
    assert (request.api_version, request.api_key, request.authorization) == ("2024-10-21", API_KEY, None)


def test_the_seed_environment_names_the_embedding_deployment(azure, monkeypatch):
    monkeypatch.setenv("AZURE_OPENAI_EMBEDDING_DEPLOYMENT_NAME", EMBEDDING)
    assert azure_recall(azure).embedding_model == EMBEDDING
    assert azure_recall(azure, embedding_model="small-embedder").embedding_model == "small-embedder"
    # An embeddings server of its own still wins, as an OpenAI-compatible server.
    local = azure_recall(azure, embedding_model="nomic-embed-text", embedding_base_url="http://127.0.0.1:1/v1")
    assert local.azure is None and local.embedding_base_url == "http://127.0.0.1:1/v1"
    monkeypatch.delenv("AZURE_OPENAI_EMBEDDING_DEPLOYMENT_NAME")
    assert azure_recall(azure).build().embedder.name == "lexical"
    with pytest.raises(ConfigError, match='--embedding-model "a/b" is not an Azure deployment name'):
        azure_recall(azure, embedding_model="a/b")


async def test_a_missing_embedding_deployment_names_its_option(azure):
    with pytest.raises(EmbeddingError) as raised:
        await azure_recall(azure, embedding_model=EMBEDDING).build().embedder.embed(TEXTS)
    assert str(raised.value) == (
        f'the embeddings call failed: Azure OpenAI at {azure.endpoint} has no deployment "{EMBEDDING}" (HTTP 404): '
        "check --embedding-model / AZURE_OPENAI_EMBEDDING_DEPLOYMENT_NAME (the deployment's name, not the model's)"
    )


@pytest.mark.parametrize(
    ("key", "role_assigned", "line"),
    [
        (
            "0123456789abcdef0123456789abcdef",
            True,
            "refused the key (HTTP 401): check that AZURE_OPENAI_API_KEY is a key",
        ),
        (None, False, "denied your Entra ID identity (HTTP 403): it needs the 'Cognitive Services OpenAI User' role"),
    ],
    ids=["a key of another resource", "an identity without the role"],
)
async def test_a_refused_embeddings_call_names_the_credential_it_was_built_with(
    azure, monkeypatch, key, role_assigned, line
):
    azure.deployments = ("gpt-4o-mini", EMBEDDING)
    azure.role_assigned = role_assigned
    for name, value in azure.managed_identity_environment().items():
        monkeypatch.setenv(name, value)
    chat = azure_config(azure.endpoint, key=key)
    embedder = RecallConfig.from_options(enabled=True, store="memory", chat=chat, embedding_model=EMBEDDING).build()
    with pytest.raises(EmbeddingError) as raised:
        await embedder.embedder.embed(TEXTS)
    assert str(raised.value).startswith(f"the embeddings call failed: Azure OpenAI at {azure.endpoint} {line}")
    assert not any(secret in str(raised.value) for secret in (key or API_KEY, TOKEN))


async def test_the_tui_recalls_through_azure_with_entra_id(azure, monkeypatch):
    azure.deployments = ("gpt-4o-mini", EMBEDDING)
    for name, value in azure.managed_identity_environment().items():
        monkeypatch.setenv(name, value)
    options = ["--azure-endpoint", azure.endpoint, "--model", "gpt-4o-mini", "--recall", "--recall-store", "memory"]
    args = build_parser().parse_args([*options, "--embedding-model", EMBEDDING])
    assert recall_config(args, model_config(args)).embedding_model == EMBEDDING
    app = build_app(args, model_config(args))
    async with app.run_test(size=(140, 40)) as pilot:
        await start_ended(pilot)
        await say(pilot, "support", "module=Billing")
    embeddings = [r for r in azure.seen if r.path.endswith("/embeddings")]
    assert embeddings and {r.deployment for r in embeddings} == {EMBEDDING}
    assert {r.authorization for r in azure.seen} == {f"Bearer {TOKEN}"}
