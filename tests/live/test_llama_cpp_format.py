"""The llama.cpp family (llama.cpp's server, llama-cpp-python) refuses `json_schema` but accepts JSON
mode with a schema and constrains decoding to it: `auto` finds that format before plain JSON mode,
and the host verifies what it carries exactly as strictly as any other format."""

import json

import pytest

from tests.live.helpers import is_writer, live_runtime, writer_format_of
from tests.support.openai_server import Canned
from workbench.cli import main
from workbench.memory import SEED, EventKind, ReasonCode
from workbench.runtime import Mode
from workbench.runtime.writer import extraction_model

# What llama-cpp-python 0.3.x answers to response_format json_schema.
REFUSAL = "1 validation error: response_format.type: Input should be 'text' or 'json_object'"
UNCONSTRAINED = '{"facts": [{"key": "module", "val'  # a small model in plain JSON mode


def llama_cpp(constrained=None):
    """A llama.cpp-like server: json_schema refused; JSON mode with a schema answered by
    `constrained` (default: the correct extraction); plain JSON mode and text give broken JSON."""

    def responder(body):
        if not is_writer(body):
            return None
        writer_format = writer_format_of(body)
        if writer_format == "json_schema":
            return Canned(status=500, body={"error": {"message": REFUSAL}})
        if writer_format == "json_object_schema":
            return None if constrained is None else Canned(text=constrained)
        return Canned(text=UNCONSTRAINED)

    return responder


def writer_formats(server):
    return [writer_format_of(r) for r in server.requests if is_writer(r)]


@pytest.mark.parametrize("mode", [Mode.MANUAL, Mode.PROVIDER])
async def test_auto_finds_json_mode_with_the_schema_and_keeps_it(loopback, mode):
    loopback.state.responder = llama_cpp()
    runtime = live_runtime(loopback.base_url, "auto", mode=mode)
    assert (await runtime.ask("support", "module=Billing; database=SQL Server 2022")).ok
    assert {f.key: f.value for f in runtime.memory.facts()} == {"module": "Billing", "database": "SQL Server 2022"}
    assert writer_formats(loopback) == ["json_schema", "json_object_schema"]
    sent = [r for r in loopback.requests if is_writer(r)][-1]
    assert sent["response_format"] == {"type": "json_object", "schema": extraction_model(SEED).model_json_schema()}
    (note,) = [e.describe() for e in runtime.memory.ledger.latest() if e.kind is EventKind.NOTE]
    assert "rejected the writer's json_schema request format; using json_object_schema" in note
    assert (await runtime.ask("logs", "customer=Contoso")).ok
    assert writer_formats(loopback)[-1] == "json_object_schema"
    assert runtime.updater.writer.format_summary == "json_object_schema (auto)"


async def test_what_the_schema_carries_is_verified_as_strictly_as_ever(loopback):
    wrong = json.dumps({"facts": [{"key": "module", "value": "Reporting", "evidence": "module=Billing"}]})
    loopback.state.responder = llama_cpp(constrained=wrong)
    runtime = live_runtime(loopback.base_url, "json_object_schema")
    assert (await runtime.ask("support", "module=Billing")).ok
    event = runtime.memory.ledger.latest(1)[0]
    assert event.kind is EventKind.REJECTED and event.reasons[0].code is ReasonCode.DECLARATION_MISMATCH
    assert 'the proposed value "Reporting" is not the declared "Billing"' in event.describe()
    assert runtime.memory.facts() == ()


def test_qualify_names_the_format_a_llama_cpp_server_accepts(loopback, capsys):
    loopback.state.responder = llama_cpp()
    assert main(["qualify", "--json", "--model", "smollm2", "--base-url", loopback.base_url]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["formats"] == {
        "json_schema": "refused by the server",
        "json_object_schema": "accepted",
        "json_object": "accepted (reply not a valid extraction)",
        "prompt": "accepted (reply not a valid extraction)",
    }
    assert (data["kind"], data["qualified"], data["passed"]) == ("qualification", True, 8)
    assert {c["format"] for c in data["cases"]} == {"json_object_schema"}
