"""The same Azure OpenAI target in every surface: the TUI (header and a turn), `workbench qualify`
(json_schema first, stepping down when a deployment refuses it) and `workbench drift`."""

import json

from tests.azure.helpers import azure_runtime
from tests.live.helpers import is_writer, response_format_type
from tests.support.azure_server import API_KEY, TOKEN
from tests.support.openai_server import Canned
from tests.ui.helpers import say, start_ended
from workbench.cli import main
from workbench.cli.configs import model_config
from workbench.cli.parser import build_parser
from workbench.cli.start import build_app

ROUTE = "/openai/deployments/gpt-4o-mini/chat/completions"


def azure_args(azure, *args: str) -> list[str]:
    return [*args, "--azure-endpoint", azure.endpoint, "--model", "gpt-4o-mini"]


def label(azure) -> str:
    return f"azure: gpt-4o-mini @ {azure.endpoint.removeprefix('http://')}"


def refuse_json_schema(body):
    """What an Azure deployment says when its model or API version has no structured output."""
    if is_writer(body) and response_format_type(body) == "json_schema":
        message = "Invalid parameter: 'response_format' of type 'json_schema' is not supported with this model."
        error = {"message": message, "type": "invalid_request_error", "param": "response_format", "code": None}
        return Canned(status=400, body={"error": error})
    if is_writer(body) and "schema" in (body.get("response_format") or {}):
        # JSON mode with a schema is the llama.cpp family's; an API that validates strictly refuses it.
        message = "Additional properties are not allowed ('schema' was unexpected) - 'response_format'"
        error = {"message": message, "type": "invalid_request_error", "param": "response_format", "code": None}
        return Canned(status=400, body={"error": error})
    return None


async def test_the_tui_signs_in_with_entra_id_and_says_where_it_runs(azure, monkeypatch):
    for name, value in azure.managed_identity_environment().items():
        monkeypatch.setenv(name, value)
    args = build_parser().parse_args(azure_args(azure))
    app = build_app(args, model_config(args))
    async with app.run_test(size=(140, 40)) as pilot:
        await start_ended(pilot)
        assert app.ready and f"model: {label(azure)} ·" in app.sub_title
        await say(pilot, "support", "module=Billing; database=SQL Server 2022")
        assert {f.key: f.value for f in app.session.runtime.memory.facts()} == {
            "module": "Billing",
            "database": "SQL Server 2022",
        }
    assert [(r.path, r.authorization) for r in azure.seen] == [(ROUTE, f"Bearer {TOKEN}")] * 2


async def test_the_writer_runs_on_its_own_deployment(azure):
    azure.deployments = ("gpt-4o-mini", "writer-mini")
    runtime = azure_runtime(azure.endpoint, writer="writer-mini")
    assert runtime.models.writer_label == f"azure: writer-mini @ {azure.endpoint.removeprefix('http://')}"
    assert (await runtime.ask("support", "module=Billing")).ok
    assert [r.deployment for r in azure.seen] == ["gpt-4o-mini", "writer-mini"]
    assert [f.value for f in runtime.memory.facts()] == ["Billing"]


def test_qualify_on_azure(azure, monkeypatch, capsys):
    monkeypatch.setenv("AZURE_OPENAI_API_KEY", API_KEY)
    assert main(azure_args(azure, "qualify", "--json")) == 0
    captured = capsys.readouterr()
    data = json.loads(captured.out)
    assert data["model"] == label(azure) and data["requested_format"] == "auto"
    assert (data["passed"], data["total"], data["host_checks"]["passed"]) == (8, 8, 2)
    assert data["formats"]["json_schema"] == "accepted" and data["reported_tokens"] is not None
    assert {(r.path, r.api_version, r.api_key) for r in azure.seen} == {(ROUTE, "2024-10-21", API_KEY)}
    assert API_KEY not in captured.out + captured.err


def test_qualify_steps_down_on_a_deployment_without_structured_output(azure, monkeypatch, capsys):
    monkeypatch.setenv("AZURE_OPENAI_API_KEY", API_KEY)
    azure.state.responder = refuse_json_schema
    assert main(azure_args(azure, "qualify", "--json")) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["formats"] == {
        "json_schema": "refused by the server",
        "json_object_schema": "refused by the server",
        "json_object": "accepted",
        "prompt": "accepted",
    }
    assert {case["format"] for case in data["cases"]} == {"json_object"}
    assert (data["passed"], data["total"], data["host_checks"]["passed"]) == (8, 8, 2)


def test_drift_on_azure(azure, monkeypatch, capsys):
    monkeypatch.setenv("AZURE_OPENAI_API_KEY", API_KEY)
    # Both clients: the agents' (full history) and the writer's (the summarizer, the bounded facts' writer).
    assert main(azure_args(azure, "drift", "--json", "--policies", "full,summary,facts")) == 0
    captured = capsys.readouterr()
    data = json.loads(captured.out)
    assert data["model"] == label(azure) and data["live"] is True
    assert {(r.path, r.api_key) for r in azure.seen} == {(ROUTE, API_KEY)}
    assert API_KEY not in captured.out + captured.err


def test_drift_and_qualify_stop_with_one_line_on_a_refused_key(azure, monkeypatch, capsys):
    monkeypatch.setenv("AZURE_OPENAI_API_KEY", "ffffffffffffffffffffffffffffffff")
    expected = (
        f"Azure OpenAI at {azure.endpoint} refused the key (HTTP 401): check that AZURE_OPENAI_API_KEY is a key "
        "of this resource"
    )
    for command in ("drift", "qualify"):
        assert main(azure_args(azure, command)) == 1
        captured = capsys.readouterr()
        assert captured.err.count("\n") == 1 and expected in captured.err
        assert "ffffffffffffffff" not in captured.out + captured.err
