"""Embeddings on Azure OpenAI through the framework's OpenAIEmbeddingClient, checked by the retrieved
memory's Embedder: the seam the --embedding-model option plugs into."""

from tests.azure.helpers import azure_config
from tests.support.azure_server import API_KEY, EMBEDDING_DIMENSIONS, TOKEN
from workbench.recall.embedders import Embedder, EmbeddingError, LexicalEmbeddingClient
from workbench.runtime.azure import azure_client_options, azure_embedding_client

TEXTS = ["module=Billing; database=SQL Server 2022", "Where can I find logs?"]


def embedder(config, deployment, credential=None) -> Embedder:
    client = azure_embedding_client(config, deployment, azure_client_options(config, credential))
    return Embedder(client, f"azure: {deployment}", deployment, semantic=True)


async def test_an_embedding_deployment_with_the_key(azure):
    azure.deployments = ("gpt-4o-mini", "text-embedding-3-large")
    vectors = await embedder(azure_config(azure.endpoint), "text-embedding-3-large").embed(TEXTS)
    assert vectors == [LexicalEmbeddingClient(EMBEDDING_DIMENSIONS).embed(t) for t in TEXTS]
    (request,) = azure.seen
    assert request.path == "/openai/deployments/text-embedding-3-large/embeddings"
    assert (request.api_version, request.api_key, request.authorization) == ("2024-10-21", API_KEY, None)


async def test_an_embedding_deployment_with_entra_id(azure):
    azure.deployments = ("text-embedding-3-large",)

    async def credential() -> str:
        return TOKEN

    config = azure_config(azure.endpoint, key=None)
    assert len(await embedder(config, "text-embedding-3-large", credential).embed(TEXTS[:1])) == 1
    assert [(r.api_key, r.authorization) for r in azure.seen] == [(None, f"Bearer {TOKEN}")]


async def test_a_missing_embedding_deployment_names_its_option(azure):
    try:
        await embedder(azure_config(azure.endpoint), "text-embedding-3-large").embed(TEXTS)
    except EmbeddingError as exc:
        assert str(exc) == (
            f"the embeddings call failed: Azure OpenAI at {azure.endpoint} has no deployment "
            "'text-embedding-3-large' (HTTP 404): check --embedding-model / AZURE_OPENAI_EMBEDDING_DEPLOYMENT_NAME "
            "(the deployment's name, not the model's)"
        )
    else:
        raise AssertionError("a missing deployment must fail")
