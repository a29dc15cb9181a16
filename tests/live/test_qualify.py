"""`workbench qualify` on the built-in model and against a server that returns garbage."""

import io
import json

import pytest

from tests.live.helpers import is_writer
from tests.support.openai_server import Canned
from workbench.cli import main
from workbench.qualify import load_suite

CASE_KEYS = {
    "id", "title", "expected", "expected_reason", "outcome", "reasons", "facts", "format", "decided_by",
    "latency_ms", "latency_may_include_previous_case", "reported_tokens", "passed", "detail", "model_outcome",
}  # fmt: skip


def test_the_suite_covers_the_contract():
    ids = [c.id for c in load_suite().cases]
    assert ids == [
        "single", "multiple", "correction", "mixed", "equals", "repeated",
        "question", "six-keys", "unknown-key", "unicode",
    ]  # fmt: skip


def test_the_built_in_model_checks_the_suite_and_qualifies_nothing(capsys):
    assert main(["qualify", "--json"]) == 4  # never 0: no CI job can read it as a qualification
    data = json.loads(capsys.readouterr().out)
    assert set(data) == {
        "kind", "qualified", "suite", "configured_contract", "contract_note", "model", "requested_format",
        "formats", "passed", "total", "host_checks", "next_steps", "reported_tokens", "cases",
    }  # fmt: skip
    assert (data["configured_contract"], data["contract_note"]) == (None, None)
    assert (data["kind"], data["qualified"], data["formats"]) == ("suite self-check", False, None)
    assert (data["passed"], data["total"], data["host_checks"]) == (8, 8, {"passed": 2, "total": 2})
    assert data["model"].startswith("scripted") and data["reported_tokens"] is None
    for case in data["cases"]:
        assert set(case) == CASE_KEYS and case["passed"] and case["reported_tokens"] is None
    by_id = {c["id"]: c for c in data["cases"]}
    assert by_id["unicode"]["facts"]["product"] == "数据平台 2.0"
    assert by_id["six-keys"]["reasons"] == ["too_many_facts"]
    assert by_id["question"]["outcome"] == "nothing_declared"


def test_the_self_check_says_so_in_words_in_every_format(capsys):
    for writer_format in ("json_object_schema", "json_object", "prompt"):
        assert main(["qualify", "--writer-format", writer_format]) == 4
    out = " ".join(capsys.readouterr().out.split())
    assert out.count("NOT A QUALIFICATION: no model was asked") == 3
    assert "checked the suite itself" in out
    assert "8/8 cases the model decides and 2/2 host-decided cases agree with the contract · no model qualified" in out
    for claim in ("request formats the server accepts", "cases as the contract says", "this model"):
        assert claim not in out


def test_a_model_that_passes_every_case_qualifies(loopback, capsys):
    assert main(["qualify", "--model", "loopback-model", "--base-url", loopback.base_url]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "8/8 cases as the contract says, scored on what the model's output decides" in out
    assert "host-decided checks, apart: 2/2" in out and "request formats the server accepts" in out
    assert "NOT A QUALIFICATION" not in out and "What to do next" not in out


def test_each_case_reports_exactly_its_own_calls(loopback, capsys):
    """json_schema is refused (no usage to report), every other call reports usage: each case's
    tokens are the sum over its own answered calls, never another case's with the same turn number."""

    def responder(body):
        if is_writer(body) and (body.get("response_format") or {}).get("type") == "json_schema":
            return Canned(status=500, body={"error": {"message": "response_format json_schema is not supported"}})
        return None

    loopback.state.responder = responder
    assert main(["qualify", "--json", "--model", "loopback-model", "--base-url", loopback.base_url]) == 0
    data = json.loads(capsys.readouterr().out)
    answered = [r for r in loopback.requests if (r.get("response_format") or {}).get("type") != "json_schema"]
    cases = answered[len(data["formats"]) - 1 :]  # after the probes (the refused one is not answered)
    assert len(cases) == len(data["cases"])
    for request, case in zip(cases, data["cases"], strict=True):
        prompt_chars = sum(len(m["content"]) for m in request["messages"])
        assert case["reported_tokens"]["input"] == max(1, prompt_chars // 4), case["id"]
    total = sum(c["reported_tokens"]["input"] for c in data["cases"])
    assert data["reported_tokens"]["input"] == total


def test_a_garbage_server_is_reported_with_reasons(loopback, capsys):
    loopback.state.responder = lambda body: Canned(text="I think the module is Billing!") if is_writer(body) else None
    code = main(["qualify", "--json", "--model", "loopback-model", "--base-url", loopback.base_url])
    data = json.loads(capsys.readouterr().out)
    assert code == 3
    assert data["formats"]["json_schema"] == "accepted (reply not a valid extraction)"
    by_id = {c["id"]: c for c in data["cases"]}
    assert by_id["single"]["outcome"] == "rejected" and by_id["single"]["reasons"] == ["malformed_output"]
    assert "not valid JSON" in by_id["single"]["detail"] and not by_id["single"]["passed"]
    # The host rejects six keys from the message alone: the garbage reply does not decide it, and is shown.
    for case in ("six-keys", "unknown-key"):
        assert by_id[case]["passed"] and by_id[case]["decided_by"] == "host"
        assert by_id[case]["model_outcome"] == "rejected (malformed_output)"
        assert "the model's reply did not decide this case" in by_id[case]["detail"]
    assert by_id["six-keys"]["reasons"] == ["too_many_facts"] and by_id["unknown-key"]["reasons"] == ["unknown_key"]
    assert data["passed"] == 0 and data["host_checks"] == {"passed": 2, "total": 2}
    assert data["reported_tokens"] is not None  # the loopback server reports usage


def test_the_table_names_failures_and_claims_no_more(loopback, capsys):
    loopback.state.responder = lambda body: Canned(text="{}") if is_writer(body) else None
    assert main(["qualify", "--model", "loopback-model", "--base-url", loopback.base_url]) == 3
    out = " ".join(capsys.readouterr().out.split())
    assert "FAIL" in out and "says nothing about other messages" in out


def test_progress_shows_each_case_on_a_terminal_and_nothing_when_piped_or_json(monkeypatch, capsys):
    assert main(["qualify"]) == 4  # stderr is not a terminal under pytest
    assert capsys.readouterr().err == ""
    monkeypatch.setenv("TTY_COMPATIBLE", "1")  # Rich treats stderr as a terminal
    assert main(["qualify", "--json"]) == 4
    captured = capsys.readouterr()
    assert captured.err == "" and len(json.loads(captured.out)["cases"]) == 10
    assert main(["qualify"]) == 4
    err = capsys.readouterr().err
    assert "case unicode" in err and "10/10" in err and "0:00:" in err  # the step, its count, the elapsed time


async def test_a_live_run_counts_the_format_probe_as_its_first_step(loopback):
    from workbench.qualify import run_qualify
    from workbench.runtime import ModelConfig, build_models

    steps: list[tuple[str, int, int]] = []
    models = build_models(ModelConfig(model="loopback-model", base_url=loopback.base_url))
    await run_qualify(models, timeout=10, progress=lambda *step: steps.append(step))
    assert steps[0] == ("probing request formats", 1, 11)
    assert steps[1] == ("case single", 2, 11) and steps[-1] == ("case unicode", 11, 11)


def test_an_empty_reply_scores_nothing_and_the_host_decided_cases_are_apart(loopback, capsys):
    """An empty extraction passed six-keys and unknown-key (the host rejects them from the message
    alone): they are reported apart, and the model scores only on what its output decides."""
    loopback.state.responder = lambda body: Canned(text='{"facts": []}') if is_writer(body) else None
    code = main(["qualify", "--json", "--model", "loopback-model", "--base-url", loopback.base_url])
    data = json.loads(capsys.readouterr().out)
    assert code == 3 and data["qualified"] is False
    decided = {c["id"]: c["decided_by"] for c in data["cases"]}
    assert [i for i, by in decided.items() if by == "host"] == ["six-keys", "unknown-key"]
    assert (data["passed"], data["total"]) == (1, 8)  # only the plain question: nothing declared, nothing proposed
    assert data["host_checks"] == {"passed": 2, "total": 2}
    assert "--writer host" in data["next_steps"] and "--writer-format" in data["next_steps"]
    assert "larger model" in data["next_steps"]


def test_the_table_says_what_to_do_next_and_that_a_case_after_a_timeout_may_include_its_time(loopback, capsys):
    loopback.state.responder = lambda body: (
        Canned(delay=1.5) if is_writer(body) and "priority=low" in json.dumps(body["messages"]) else None
    )
    args = ["qualify", "--model", "loopback-model", "--base-url", loopback.base_url, "--timeout", "1"]
    assert main([*args, "--json"]) == 3
    by_id = {c["id"]: c for c in json.loads(capsys.readouterr().out)["cases"]}
    assert "timed out" in by_id["repeated"]["detail"]
    assert [i for i, c in by_id.items() if c["latency_may_include_previous_case"]] == ["question"]
    assert main(args) == 3
    out = " ".join(capsys.readouterr().out.split())
    assert "may include the previous request's time" in out and "What to do next: run with --writer host" in out


def test_host_decided_cases_pass_when_the_reply_times_out_and_the_next_latency_is_marked(loopback, capsys):
    """SmolLM2 with --timeout 3: host-decided 0/2, because a timed-out call was abandoned before the
    message-alone checks ran. The host decides them whatever the reply, including none."""
    slow = ("product=Suite", "password=hunter2")
    loopback.state.responder = lambda body: (
        Canned(delay=1.5) if is_writer(body) and any(m in json.dumps(body["messages"]) for m in slow) else None
    )
    args = ["qualify", "--json", "--model", "loopback-model", "--base-url", loopback.base_url, "--timeout", "1"]
    assert main(args) == 0
    data = json.loads(capsys.readouterr().out)
    by_id = {c["id"]: c for c in data["cases"]}
    assert data["host_checks"] == {"passed": 2, "total": 2} and data["qualified"] is True
    for case in ("six-keys", "unknown-key"):
        assert by_id[case]["model_outcome"] == "abandoned" and "timed out" in by_id[case]["detail"]
    assert [i for i, c in by_id.items() if c["latency_may_include_previous_case"]] == ["unknown-key", "unicode"]


def test_a_timed_out_format_probe_marks_the_first_cases_latency(loopback, capsys):
    """The last format probe (prompt: no response_format) times out: the first case may include its time."""
    delayed: list[bool] = []

    def responder(body):
        if is_writer(body) and "response_format" not in body and not delayed:
            delayed.append(True)
            return Canned(delay=1.5)
        return None

    loopback.state.responder = responder
    args = ["qualify", "--json", "--model", "loopback-model", "--base-url", loopback.base_url, "--timeout", "1"]
    main(args)
    data = json.loads(capsys.readouterr().out)
    assert "timed out" in data["formats"]["prompt"]
    assert [c["id"] for c in data["cases"] if c["latency_may_include_previous_case"]] == ["single"]


def test_usage_reported_with_a_cut_off_reply_is_kept(loopback, capsys):
    """A reply cut off at the token limit fails the case, but the server reported what it used: that is
    the case's usage, not unknown."""
    loopback.state.responder = lambda body: (
        Canned(text='{"facts": [', finish_reason="length", usage={"prompt_tokens": 321, "completion_tokens": 64})
        if is_writer(body) and "module=Billing;" in json.dumps(body["messages"])
        else None
    )
    assert main(["qualify", "--json", "--model", "loopback-model", "--base-url", loopback.base_url]) == 3
    by_id = {c["id"]: c for c in json.loads(capsys.readouterr().out)["cases"]}
    assert not by_id["multiple"]["passed"] and "cut off" in by_id["multiple"]["detail"]
    assert by_id["multiple"]["reported_tokens"] == {"input": 321, "output": 64}


# A writer model that proposes a fact the message does not declare, as SmolLM2 did: declaration_mismatch.
MISMATCHED = json.dumps({"facts": [{"key": "database", "value": "PostgreSQL", "evidence": "database=PostgreSQL"}]})


async def mismatched_report(loopback):
    from workbench.qualify import run_qualify
    from workbench.runtime import ModelConfig, build_models

    loopback.state.responder = lambda body: Canned(text=MISMATCHED) if is_writer(body) else None
    return await run_qualify(build_models(ModelConfig(model="loopback-model", base_url=loopback.base_url)), timeout=10)


@pytest.mark.parametrize("width", [60, 80, 100, 140, 200])
async def test_the_report_never_cuts_a_word_in_two_at_any_width(loopback, width):
    """At 140 columns the table wrapped "declaration_misma|tch"."""
    from rich.console import Console

    from workbench.qualify.report import render

    report = await mismatched_report(loopback)
    assert any("declaration_mismatch" in r.reasons for r in report.results)
    out = io.StringIO()
    console = Console(width=width, force_terminal=True, color_system=None, file=out)
    console.print(render(report))
    shown = out.getvalue()
    lines = shown.splitlines()
    assert max(map(len, lines)) <= width
    words = {
        w
        for r in report.results
        for text in (r.outcome, r.case.title, r.writer_format, *r.reasons)
        for w in text.split()
    }
    for word in words | {"declaration_mismatch", "reported", "tokens"}:
        assert any(word in line for line in lines), (word, width)


async def test_piped_the_report_has_bounded_lines(loopback):
    """Piped, the report had lines of 1,146 characters."""
    from rich.console import Console

    from workbench.qualify.report import PIPED_WIDTH, render
    from workbench.tables import UNWRAPPED_WIDTH

    report = await mismatched_report(loopback)
    out = io.StringIO()
    console = Console(width=UNWRAPPED_WIDTH, file=out)  # what `report_console` gives a pipe
    assert not console.is_terminal
    console.print(render(report))
    lines = out.getvalue().splitlines()
    assert max(map(len, lines)) <= PIPED_WIDTH and "declaration_mismatch" in "\n".join(lines)


def test_a_refused_format_is_asked_once_and_no_case_asks_it_again(loopback, capsys):
    """llama.cpp refuses json_schema with a 500: the client retried it twice in the probe and twice more
    in the first case (six requests), and the first case's latency held the three refused ones."""

    def responder(body):
        if is_writer(body) and (body.get("response_format") or {}).get("type") == "json_schema":
            return Canned(status=500, body={"error": {"message": "response_format json_schema is not supported"}})
        return None

    loopback.state.responder = responder
    assert main(["qualify", "--json", "--model", "loopback-model", "--base-url", loopback.base_url]) == 0
    data = json.loads(capsys.readouterr().out)
    refused = [r for r in loopback.requests if (r.get("response_format") or {}).get("type") == "json_schema"]
    assert len(refused) == 1 and data["formats"]["json_schema"] == "refused by the server"
    assert {c["format"] for c in data["cases"]} == {"json_object_schema"}


async def test_a_server_error_that_is_not_about_the_format_is_still_retried(loopback):
    from workbench.memory import SEED
    from workbench.runtime import ModelConfig, build_models
    from workbench.runtime.calls import CallLog
    from workbench.runtime.writer import ModelWriter

    loopback.state.queue.append(Canned(status=500, body={"error": {"message": "out of memory"}}))
    models = build_models(ModelConfig(model="loopback-model", base_url=loopback.base_url, max_retries=1))
    writer = ModelWriter(models.writer_client, CallLog(), "m", timeout=10, contract=SEED)
    assert [c.key for c in await writer.propose("module=Billing")] == ["module"]
    assert len(loopback.requests) == 2
