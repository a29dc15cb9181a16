"""Entra ID: a token provider's bearer token, and the real DefaultAzureCredential signing in at a
loopback managed identity endpoint. The token reaches the Azure server and nowhere else."""

import gc
import logging
import os
import subprocess
import sys
import types

from tests.azure.helpers import azure_runtime
from tests.support.azure_server import TOKEN
from workbench.cli.configs import model_config
from workbench.cli.parser import build_parser
from workbench.runtime import build_models
from workbench.runtime.config import ModelConfig
from workbench.session.assemble import assemble

FIRST = "module=Reporting; database=PostgreSQL"


def reachable_strings(root, *, besides) -> str:
    """Every str and bytes that objects reachable from `root` hold, except through `besides`. Code is
    not data: modules, classes and a function's globals are not followed (its closure is)."""
    seen, found, todo = {id(besides)}, [], [root]
    while todo:
        obj = todo.pop()
        if id(obj) in seen or isinstance(obj, types.ModuleType | type):
            continue
        seen.add(id(obj))
        if isinstance(obj, str):
            found.append(obj)
        elif isinstance(obj, bytes | bytearray):
            found.append(bytes(obj).decode("latin-1"))
        elif isinstance(obj, types.FunctionType):
            todo.extend([obj.__closure__ or (), obj.__defaults__ or (), obj.__kwdefaults__ or {}])
        else:
            todo.extend(gc.get_referents(obj))
    return "\n".join(found)


async def test_a_token_provider_bearer_token_reaches_the_server_and_nowhere_else(azure, caplog, capsys):
    caplog.set_level(logging.DEBUG)
    asked = []

    async def credential() -> str:
        asked.append(1)
        return TOKEN

    runtime = azure_runtime(azure.endpoint, key=None, credential=credential)
    first = await runtime.ask("support", FIRST)
    assert first.ok, first.error
    assert (await runtime.ask("logs", "Where can I find logs?")).ok
    assert len(azure.seen) == 3 and len(asked) == 3
    for request in azure.seen:
        assert request.authorization == f"Bearer {TOKEN}" and request.api_key is None
        assert request.path == "/openai/deployments/gpt-4o-mini/chat/completions"
    captured = capsys.readouterr()
    shown = [
        repr(runtime.models),
        *(e.describe() for e in runtime.memory.ledger.latest()),
        *(f"{c!r}" for c in runtime.calls.records()),
        *(m.text or "" for agent in ("support", "logs") for m in runtime.history(agent)),
        caplog.text,
        captured.out + captured.err,
    ]
    assert not any(TOKEN in text for text in shown)
    asked.clear()
    gc.collect()
    # Beyond what is shown: no object the runtime holds keeps the token once the calls are done,
    # except the credential that issues it.
    assert TOKEN not in reachable_strings(runtime, besides=credential)


def entra_config(azure, monkeypatch, *options: str) -> ModelConfig:
    for name, value in azure.managed_identity_environment().items():
        monkeypatch.setenv(name, value)
    args = build_parser().parse_args(["--azure-endpoint", azure.endpoint, "--model", "gpt-4o-mini", *options])
    return model_config(args)


async def test_default_azure_credential_signs_in_once_and_sends_a_bearer_token(azure, monkeypatch):
    config = entra_config(azure, monkeypatch)
    assert config.api_key is None
    runtime = assemble(build_models(config), timeout=30.0).runtime
    for text in (FIRST, "module=Billing"):
        assert (await runtime.ask("support", text)).ok
    assert azure.identity_requests == ["https://cognitiveservices.azure.com"]  # one sign-in, then cached
    assert [r.authorization for r in azure.seen] == [f"Bearer {TOKEN}"] * 4
    assert {r.api_key for r in azure.seen} == {None}
    assert {f.key: f.value for f in runtime.memory.facts()} == {"module": "Billing", "database": "PostgreSQL"}


async def test_a_failed_sign_in_is_one_line_and_changes_nothing(azure, monkeypatch):
    config = entra_config(azure, monkeypatch)
    azure.identity_failure = "Identity not found"
    runtime = assemble(build_models(config), timeout=30.0).runtime
    result = await runtime.ask("support", FIRST)
    assert not result.ok and "\n" not in result.error
    assert result.error.startswith("Entra ID sign-in failed")
    assert azure.seen == [] and runtime.memory.facts() == ()


def test_a_failed_sign_in_prints_one_line_and_nothing_of_azure_identity(azure):
    """In a process of its own, where no test harness catches azure-identity's warnings."""
    azure.identity_failure = "Identity not found"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("AZURE_", "OPENAI_"))}
    env.update(azure.managed_identity_environment())
    command = [
        sys.executable,
        "-m",
        "workbench",
        "qualify",
        "--azure-endpoint",
        azure.endpoint,
        "--model",
        "gpt-4o-mini",
    ]
    done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 1 and done.stdout == ""
    assert done.stderr == (
        "workbench qualify: stopped: Entra ID sign-in failed (DefaultAzureCredential got no token): run az login, "
        "or set AZURE_OPENAI_API_KEY\n"
    )


def test_building_the_clients_leaves_azure_identity_for_the_first_call():
    """Start-up does not pay for importing azure-identity; the first token request does, in a thread."""
    probe = (
        "import sys; from workbench.runtime import build_models; from workbench.runtime.config import AzureTarget, "
        "ModelConfig; build_models(ModelConfig(model='gpt-4o-mini', azure=AzureTarget('https://contoso.openai.azure.com'))); "
        "print('azure.identity' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"
