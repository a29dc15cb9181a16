"""Choosing Azure OpenAI: options, the environment, and one line for each thing that is missing."""

import sys

import pytest

from tests.support.azure_server import API_KEY
from workbench.cli import main
from workbench.runtime import ConfigError, ModelConfig, WriterFormat, build_models
from workbench.runtime.config import DEFAULT_AZURE_API_VERSION, AzureTarget

ENDPOINT = "https://contoso.openai.azure.com"
NO_AUTH = (
    "Azure OpenAI needs a key or an Entra ID sign-in: set AZURE_OPENAI_API_KEY, or install azure-identity "
    '(pip install "agent-memory-workbench[azure]") and sign in (az login) for DefaultAzureCredential'
)


@pytest.fixture
def key(monkeypatch):
    monkeypatch.setenv("AZURE_OPENAI_API_KEY", API_KEY)


@pytest.fixture
def without_azure_identity(monkeypatch):
    """As after `pip install .`: azure-identity cannot be imported."""
    monkeypatch.setitem(sys.modules, "azure.identity", None)


def test_an_endpoint_and_a_deployment_with_a_key(key):
    config = ModelConfig.from_options(azure_endpoint=ENDPOINT + "/", model="chat", writer_model="writer")
    assert config.azure == AzureTarget(ENDPOINT, DEFAULT_AZURE_API_VERSION)
    assert (config.model, config.writer_model, config.api_key) == ("chat", "writer", API_KEY)
    assert config.effective_writer_format is WriterFormat.AUTO  # json_schema first, stepping down if refused
    models = build_models(config)
    assert (models.agent_label, models.writer_label) == ("azure: chat @ contoso", "azure: writer @ contoso")
    assert API_KEY not in repr(config) + repr(models)


def test_the_seed_environment_names_the_deployment_and_version(key, monkeypatch):
    monkeypatch.setenv("AZURE_OPENAI_DEPLOYMENT_NAME", "gpt-4o-mini")
    monkeypatch.setenv("AZURE_OPENAI_API_VERSION", "2024-06-01")
    config = ModelConfig.from_options(azure_endpoint=ENDPOINT)
    assert config.azure is not None and (config.model, config.azure.api_version) == ("gpt-4o-mini", "2024-06-01")
    chosen = ModelConfig.from_options(azure_endpoint=ENDPOINT, api_version="2025-04-01-preview").azure
    assert chosen is not None and chosen.api_version == ("2025-04-01-preview")


def test_the_environment_alone_never_leaves_the_built_in_model(key, monkeypatch):
    monkeypatch.setenv("AZURE_OPENAI_ENDPOINT", ENDPOINT)
    monkeypatch.setenv("AZURE_OPENAI_DEPLOYMENT_NAME", "gpt-4o-mini")
    assert not ModelConfig.from_options().is_live
    assert ModelConfig.from_options(model="gpt-4o-mini").azure == AzureTarget(ENDPOINT)


def test_an_openai_key_or_server_wins_over_the_azure_environment_as_in_agent_framework(key, monkeypatch):
    monkeypatch.setenv("AZURE_OPENAI_ENDPOINT", ENDPOINT)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-openai-0123456789")
    assert ModelConfig.from_options(model="gpt-4o-mini").azure is None
    assert ModelConfig.from_options(model="gpt-4o-mini", azure_endpoint=ENDPOINT).azure == AzureTarget(ENDPOINT)
    assert ModelConfig.from_options(model="llama3.2", base_url="http://127.0.0.1:11434/v1").azure is None


@pytest.mark.parametrize(
    ("endpoint", "domain"),
    [
        ("https://contoso.openai.azure.com", "contoso"),
        ("https://contoso.cognitiveservices.azure.com", "contoso"),
        ("https://contoso.services.ai.azure.com", "contoso"),
        ("https://gateway.example.com/aoai", "gateway.example.com"),
    ],
)
def test_the_resource_in_the_label(endpoint, domain):
    assert AzureTarget(endpoint).resource == domain


MISSING = [
    (
        "endpoint",
        {"api_version": "2024-10-21", "model": "chat"},
        "Azure OpenAI needs the resource endpoint: pass --azure-endpoint https://<resource>.openai.azure.com or "
        "set AZURE_OPENAI_ENDPOINT",
    ),
    (
        "deployment",
        {"azure_endpoint": ENDPOINT},
        "Azure OpenAI needs a deployment: pass --model DEPLOYMENT or set AZURE_OPENAI_DEPLOYMENT_NAME (the name "
        "you gave the deployment, not the model's)",
    ),
    (
        "an /openai path",
        {"azure_endpoint": ENDPOINT + "/openai/v1", "model": "chat"},
        "pass the Azure resource endpoint without its /openai path, like https://<resource>.openai.azure.com",
    ),
    (
        "not a URL",
        {"azure_endpoint": "contoso", "model": "chat"},
        'the Azure endpoint "contoso" is not a URL like https://<resource>.openai.azure.com',
    ),
    (
        "a deployment that cannot be one",
        {"azure_endpoint": ENDPOINT, "model": "chat/../../x"},
        "--model \"chat/../../x\" is not an Azure deployment name: up to 64 letters, digits, '.', '-', '_'",
    ),
    (
        "credentials in the URL",
        {"azure_endpoint": "https://me:s3cret@contoso.openai.azure.com", "model": "chat"},
        "the Azure endpoint must not carry credentials: set AZURE_OPENAI_API_KEY, or sign in with Entra ID",
    ),
    (
        "two servers",
        {"azure_endpoint": ENDPOINT, "model": "chat", "base_url": "http://127.0.0.1:8080/v1"},
        "--base-url and --azure-endpoint name two different servers: use one of them",
    ),
]


@pytest.mark.parametrize(("name", "options", "line"), MISSING, ids=[m[0] for m in MISSING])
def test_what_is_missing_or_wrong_is_named(key, name, options, line):
    with pytest.raises(ConfigError) as raised:
        ModelConfig.from_options(**options)
    assert str(raised.value) == line


def test_no_key_and_no_azure_identity_says_what_to_install_or_set(without_azure_identity, capsys):
    assert main(["--azure-endpoint", ENDPOINT, "--model", "gpt-4o-mini"]) == 2
    captured = capsys.readouterr()
    assert captured.err == f"workbench: {NO_AUTH}\n" and captured.out == ""
    for command in ("drift", "qualify"):
        assert main([command, "--azure-endpoint", ENDPOINT, "--model", "gpt-4o-mini"]) == 2
        assert capsys.readouterr().err == f"workbench: {NO_AUTH}\n"


def test_no_key_with_azure_identity_signs_in_with_entra_id():
    pytest.importorskip("azure.identity")
    config = ModelConfig.from_options(azure_endpoint=ENDPOINT, model="gpt-4o-mini")
    assert config.api_key is None and config.azure == AzureTarget(ENDPOINT)


def test_a_base_url_for_azure_in_the_environment_is_named(key, monkeypatch):
    monkeypatch.setenv("AZURE_OPENAI_BASE_URL", ENDPOINT + "/openai/v1")
    with pytest.raises(ConfigError, match="AZURE_OPENAI_BASE_URL is set"):
        ModelConfig.from_options(azure_endpoint=ENDPOINT, model="chat")


def test_a_missing_openai_key_mentions_azure():
    with pytest.raises(ConfigError, match=r"--azure-endpoint \(or AZURE_OPENAI_ENDPOINT\)"):
        ModelConfig.from_options(model="gpt-4o-mini")
