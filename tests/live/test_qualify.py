"""`workbench qualify` on the built-in model and against a server that returns garbage."""

import json

from tests.live.helpers import is_writer
from tests.support.openai_server import Canned
from workbench.cli import main
from workbench.qualify import load_suite

CASE_KEYS = {
    "id", "title", "expected", "expected_reason", "outcome", "reasons", "facts", "format",
    "latency_ms", "reported_tokens", "passed", "detail",
}  # fmt: skip


def test_the_suite_covers_the_contract():
    ids = [c.id for c in load_suite().cases]
    assert ids == [
        "single", "multiple", "correction", "mixed", "equals", "repeated",
        "question", "six-keys", "unknown-key", "unicode",
    ]  # fmt: skip


def test_every_case_passes_on_the_built_in_model(capsys):
    assert main(["qualify", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert set(data) == {"suite", "model", "requested_format", "formats", "passed", "total", "reported_tokens", "cases"}
    assert (data["passed"], data["total"]) == (10, 10)
    assert data["model"].startswith("scripted") and data["reported_tokens"] is None
    assert data["formats"] == {"json_schema": "accepted", "json_object": "accepted", "prompt": "accepted"}
    for case in data["cases"]:
        assert set(case) == CASE_KEYS and case["passed"] and case["reported_tokens"] is None
    by_id = {c["id"]: c for c in data["cases"]}
    assert by_id["unicode"]["facts"]["product"] == "数据平台 2.0"
    assert by_id["six-keys"]["reasons"] == ["too_many_facts"]
    assert by_id["question"]["outcome"] == "nothing_declared"


def test_every_format_passes_on_the_built_in_model(capsys):
    for writer_format in ("json_object", "prompt"):
        assert main(["qualify", "--writer-format", writer_format]) == 0
    assert "10/10 cases as the contract says" in capsys.readouterr().out


def test_a_garbage_server_is_reported_with_reasons(loopback, capsys):
    loopback.state.responder = lambda body: Canned(text="I think the module is Billing!") if is_writer(body) else None
    code = main(["qualify", "--json", "--model", "loopback-model", "--base-url", loopback.base_url])
    data = json.loads(capsys.readouterr().out)
    assert code == 3
    assert data["formats"]["json_schema"] == "accepted (reply not a valid extraction)"
    by_id = {c["id"]: c for c in data["cases"]}
    assert by_id["single"]["outcome"] == "rejected" and by_id["single"]["reasons"] == ["malformed_output"]
    assert "not valid JSON" in by_id["single"]["detail"] and not by_id["single"]["passed"]
    # Rejected, but for the garbage, not for the contract's reason: that is not a pass.
    assert by_id["six-keys"]["outcome"] == "rejected" and by_id["six-keys"]["reasons"] == ["malformed_output"]
    assert not by_id["six-keys"]["passed"]
    assert data["passed"] == 0
    assert data["reported_tokens"] is not None  # the loopback server reports usage


def test_the_table_names_failures_and_claims_no_more(loopback, capsys):
    loopback.state.responder = lambda body: Canned(text="{}") if is_writer(body) else None
    assert main(["qualify", "--model", "loopback-model", "--base-url", loopback.base_url]) == 3
    out = " ".join(capsys.readouterr().out.split())
    assert "FAIL" in out and "says nothing about other messages" in out
