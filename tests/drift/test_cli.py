"""`workbench drift`: tables for people, --json for machines, a clear non-zero exit when it stops."""

import json

from tests.support.openai_server import Canned
from workbench.cli import main


def test_json_output_shape(capsys):
    assert main(["drift", "--json", "--turns", "12"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert set(data) == {
        "chronology",
        "turns",
        "model",
        "live",
        "seconds",
        "policies",
        "probes",
        "matrix",
        "accounting",
    }
    assert data["turns"] == 12 and data["live"] is False and data["model"].startswith("scripted")
    names = [p["name"] for p in data["policies"]]
    assert names == ["full", "window", "summary", "facts", "compaction", "recall", "recall_purged"]
    assert [p["id"] for p in data["probes"]] == ["restart", "scope"]
    assert data["probes"][0]["forgotten"] == {"customer": ["Contoso"]}
    cell = data["matrix"]["facts"]["scope"]
    assert set(cell) == {"request_chars", "current", "superseded", "prohibition", "forgotten"}
    assert cell["forgotten"] == {"Contoso": False} and cell["prohibition"] is False
    for name in names:
        cost = data["accounting"][name]
        assert set(cost) == {"calls", "request_chars", "estimated_tokens", "reported_tokens", "retained_history"}
        assert cost["reported_tokens"] is None  # the built-in model reports nothing: unknown, not zero
        assert cost["estimated_tokens"] == cost["request_chars"] // 4


def test_tables_name_no_winner(capsys):
    assert main(["drift"]) == 0
    out = capsys.readouterr().out
    assert "probe 'restart'" in out and "reported tokens" in out and "unknown" in out
    assert "no policy is ranked" in out.replace("\n", " ")
    for word in ("winner", "best", "recommended"):
        assert word not in out.lower()


def test_too_few_turns_exit_non_zero(capsys):
    assert main(["drift", "--turns", "3"]) == 1
    assert "needs at least 10 turns" in capsys.readouterr().err


def test_a_bad_summary_stops_with_a_clear_message(loopback, capsys):
    loopback.state.responder = lambda body: (
        Canned(text="") if "summarizer agent" in body["messages"][0]["content"] else None
    )
    code = main(["drift", "--model", "loopback-model", "--base-url", loopback.base_url, "--json"])
    captured = capsys.readouterr()
    assert code == 1 and captured.out == ""
    assert "stopped: the summarizer returned an empty summary at turn 1" in captured.err


def test_an_unreachable_model_stops_with_a_clear_message(capsys):
    assert main(["drift", "--model", "m", "--base-url", "http://127.0.0.1:9/v1", "--timeout", "5"]) == 1
    assert "cannot reach http://127.0.0.1:9/v1" in capsys.readouterr().err


def test_live_answers_are_labelled_as_that_models_answers(loopback, capsys):
    assert main(["drift", "--model", "loopback-model", "--base-url", loopback.base_url]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "answers of loopback-model @ 127.0.0.1" in out and "not a verdict" in out
