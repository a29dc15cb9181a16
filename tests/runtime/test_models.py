"""Model configuration: the built-in model by default, live only when a model is named, clear errors."""

import subprocess
import sys
from typing import Any, cast

import pytest

from tests.runtime.helpers import live
from tests.support.openai_server import Canned
from workbench.runtime import ConfigError, ModelConfig, build_models
from workbench.runtime.scripted import SCRIPTED_LABEL

SECRET = "sk-test-DO-NOT-LEAK-0123456789abcdef"


def test_default_is_the_scripted_model_even_with_a_key_in_the_environment(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    config = ModelConfig.from_options()
    assert not config.is_live
    assert build_models(config).agent_label == SCRIPTED_LABEL


def test_live_model_needs_a_key_or_a_local_server():
    with pytest.raises(ConfigError, match="OPENAI_API_KEY"):
        ModelConfig.from_options(model="gpt-4o-mini")


def test_base_url_needs_a_model():
    with pytest.raises(ConfigError, match="--model"):
        ModelConfig.from_options(base_url="http://127.0.0.1:11434/v1")


@pytest.mark.parametrize("pasted", ["http://127.0.0.1:11434/v1\n", " http://127.0.0.1:11434/v1\r\n"])
def test_a_server_url_pasted_with_its_line_end_is_used_without_it(monkeypatch, pasted):
    assert ModelConfig.from_options(model="m", base_url=pasted).base_url == "http://127.0.0.1:11434/v1"
    monkeypatch.setenv("OPENAI_BASE_URL", pasted)  # a .env file written on Windows ends its lines so
    assert ModelConfig.from_options(model="m").base_url == "http://127.0.0.1:11434/v1"
    monkeypatch.setenv("OPENAI_BASE_URL", "http://h\x1b/v1")
    assert not ModelConfig.from_options().is_live  # the built-in model does not read it


LOCAL = ["--model", "m", "--base-url", "http://127.0.0.1:1/v1"]


@pytest.mark.parametrize(
    "argv",
    [
        ["drift", "--model", "m", "--base-url", "http://127.0.0.1:1/v1\x1b[7m"],
        ["qualify", "--model", "m", "--base-url", "http://127.0.0.1:1/v\x1b[7m1"],
        ["--base-url", "http://127.0.0.1:1/v1\x1b[7m"],  # and without --model
        ["--recall", "--embedding-model", "e", "--embedding-base-url", "http://e\x07/v1", *LOCAL, "drift"],
    ],
    ids=["drift", "qualify", "no model", "embeddings"],
)
def test_a_server_url_with_a_control_character_is_one_line_naming_it(argv, capsys):
    """The HTTP client refused it deep in the first call: drift and qualify ended in a traceback and the
    TUI opened without its agents; the error without --model wrote the escape sequence to the terminal."""
    from workbench.cli import main

    assert main(argv) == 2
    err = capsys.readouterr().err
    assert len(err.splitlines()) == 1 and "\x1b" not in err and "\x07" not in err
    assert "base-url" in err and ("\\x1b" in err or "\\x07" in err)


def test_local_server_needs_no_key(monkeypatch):
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:11434/v1")
    config = ModelConfig.from_options(model="llama3.2")
    assert config.is_live and config.api_key is None
    models = build_models(config)
    assert models.agent_label == "llama3.2 @ 127.0.0.1:11434"
    assert models.writer_client is models.agent_client


def test_separate_writer_model(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    models = build_models(ModelConfig.from_options(model="big", writer_model="small"))
    assert (models.agent_label, models.writer_label) == ("big @ api.openai.com", "small @ api.openai.com")
    assert models.writer_client is not models.agent_client


def test_the_key_is_not_in_the_config_repr(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    config = ModelConfig.from_options(model="gpt-4o-mini")
    assert SECRET not in repr(config) and SECRET not in repr(build_models(config))


def test_the_sdk_is_imported_only_for_a_live_model():
    probe = (
        "import sys; from workbench.runtime import ModelConfig, build_models; build_models(ModelConfig()); "
        "print('openai' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"


async def test_a_rejected_key_is_explained_without_the_key(loopback, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    runtime = live(loopback.base_url)
    loopback.enqueue(Canned(status=401, body={"error": {"message": f"Incorrect API key provided: {SECRET}"}}))
    result = await runtime.ask("support", "module=Billing")
    assert "refused the API key (HTTP 401): check OPENAI_API_KEY" in result.error
    everything = result.error + " ".join(e.describe() for e in runtime.memory.ledger.latest())
    everything += " ".join(c.error for c in runtime.calls.records())
    assert SECRET not in everything and "sk-test" not in everything


async def test_a_writer_call_rejected_for_its_key_leaves_no_key_behind(loopback, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    runtime = live(loopback.base_url)
    loopback.enqueue(Canned(), Canned(status=403, body={"error": {"message": f"key {SECRET} is not allowed"}}))
    result = await runtime.ask("support", "module=Billing")
    assert result.ok
    writer_call = runtime.calls.records(purpose="writer")[0]
    assert "HTTP 403" in writer_call.error
    everything = writer_call.error + " ".join(e.describe() for e in runtime.memory.ledger.latest())
    assert SECRET not in everything and "sk-test" not in everything


async def test_an_unknown_model_is_explained(loopback):
    runtime = live(loopback.base_url)
    loopback.enqueue(Canned(status=404, body={"error": {"message": "model 'x' not found"}}))
    result = await runtime.ask("support", "hello")
    assert "HTTP 404" in result.error and "--model" in result.error


@pytest.mark.parametrize("azure", [False, True])
def test_the_function_loop_runs_only_when_a_function_can_be_called(monkeypatch, azure):
    """Only on-demand recall offers the agents a function; without one the framework's loop copies
    the history on every call and assembles every streamed reply once more at its end."""
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    monkeypatch.setenv("AZURE_OPENAI_API_KEY", SECRET)
    endpoint = "https://example-resource.openai.azure.com" if azure else None
    config = ModelConfig.from_options(model="big", writer_model="small", azure_endpoint=endpoint)
    for function_calls in (False, True):
        models = build_models(config, function_calls=function_calls)
        clients = (models.agent_client, models.writer_client)
        loops = [cast(Any, c).function_invocation_configuration["enabled"] for c in clients]  # the concrete clients
        assert loops == [function_calls] * 2


def test_the_app_runs_the_function_loop_only_for_on_demand_recall(monkeypatch):
    from workbench.cli.configs import model_config
    from workbench.cli.parser import build_parser
    from workbench.cli.start import build_app
    from workbench.runtime import models

    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    asked: list[bool] = []
    build = models.build_models

    def recording(*args: Any, **kwargs: Any) -> models.ModelSet:
        asked.append(kwargs["function_calls"])
        return build(*args, **kwargs)

    monkeypatch.setattr("workbench.runtime.build_models", recording)
    for options in (
        [],
        ["--recall", "--recall-store", "memory"],
        ["--recall", "--recall-on-demand", "--recall-store", "memory"],
    ):
        args = build_parser().parse_args(["--model", "big", *options])
        start = build_app(args, model_config(args))._start
        assert start is not None
        start()
    assert asked == [False, False, True]


def test_a_password_in_the_server_url_is_never_in_the_label():
    """The header, F2, the drift lab's report and traces name the model by its label: a base URL with a
    user name and password (`http://user:key@host/v1`, as some proxies take it) gives only host and port."""
    config = ModelConfig.from_options(model="m", base_url="http://user:sk-SECRETVALUE123@127.0.0.1:9/v1")
    assert build_models(config).agent_label == "m @ 127.0.0.1:9"
