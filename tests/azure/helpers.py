from tests.support.azure_server import API_KEY
from workbench.runtime import Mode, ModelConfig, build_models
from workbench.runtime.agents import AgentRuntime
from workbench.runtime.azure import TokenProvider
from workbench.runtime.config import AzureTarget
from workbench.session.assemble import assemble


def azure_config(
    endpoint: str,
    deployment: str = "gpt-4o-mini",
    *,
    writer: str | None = None,
    key: str | None = API_KEY,
    version: str = "2024-10-21",
    writer_format=None,
) -> ModelConfig:
    return ModelConfig(
        model=deployment,
        writer_model=writer,
        api_key=key,
        timeout=30.0,
        max_retries=0,
        writer_format=writer_format,
        azure=AzureTarget(endpoint, version),
    )


def azure_runtime(
    endpoint: str, mode: Mode = Mode.MANUAL, *, credential: TokenProvider | None = None, **options
) -> AgentRuntime:
    models = build_models(azure_config(endpoint, **options), credential=credential)
    return assemble(models, mode=mode, timeout=30.0).runtime
