"""Every live failure is one line naming what to check, facts and histories stay as they were, and
the key never shows. Exercised through the runtime (as the TUI uses it), the drift lab and qualify."""

import json

import httpx2 as httpx  # the HTTP client the openai SDK 3.x is built on
import openai
import pytest

from tests.live.helpers import is_writer, live_runtime
from tests.support.openai_server import Canned
from workbench.cli import main
from workbench.memory import MAX_FACTS, EventKind, ReasonCode
from workbench.runtime.bounds import writer_max_tokens
from workbench.runtime.failures import explain_failure

SECRET = "sk-live-NEVER-SHOW-4f9a8b7c6d5e4f3a2b1c"


def state(runtime):
    return (
        runtime.memory.facts(),
        [m.text for m in runtime.history("support")],
        [m.text for m in runtime.history("logs")],
    )


FAILURES = [
    (
        "401",
        Canned(status=401, body={"error": {"message": f"Incorrect API key provided: {SECRET}"}}),
        "check OPENAI_API_KEY",
    ),
    ("403", Canned(status=403, body={"error": {"message": "forbidden"}}), "check OPENAI_API_KEY"),
    ("404", Canned(status=404, body={"error": {"message": "model 'x' not found"}}), "check --model and --base-url"),
    ("503", Canned(status=503, body={"error": {"message": "overloaded"}}), "check the server's log"),
    ("cut off", Canned(text="The answer is cut", finish_reason="length"), "raise --max-tokens"),
]


@pytest.mark.parametrize(("name", "canned", "check"), FAILURES, ids=[f[0] for f in FAILURES])
async def test_agent_call_failures_explain_themselves_and_change_nothing(loopback, monkeypatch, name, canned, check):
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    runtime = live_runtime(loopback.base_url)
    assert (await runtime.ask("support", "module=Reporting")).ok
    before = state(runtime)
    loopback.enqueue(canned)
    result = await runtime.ask("support", "module=Billing")
    assert not result.ok and check in result.error and "\n" not in result.error
    assert state(runtime) == before
    event = runtime.memory.ledger.latest(1)[0]
    assert event.kind is EventKind.ABANDONED and check in event.describe()
    assert SECRET not in result.error + event.describe()
    assert (await runtime.ask("support", "module=Billing")).ok  # and the next turn works


async def test_rate_limiting_is_retried_by_the_sdk_then_explained(loopback):
    runtime = live_runtime(loopback.base_url, retries=1)
    limited = Canned(status=429, body={"error": {"message": "slow down"}}, headers={"retry-after-ms": "10"})
    loopback.enqueue(limited, limited)
    result = await runtime.ask("support", "module=Billing")
    assert "rate limiting (HTTP 429) after the client's retries" in result.error
    assert len(loopback.requests) == 2 and runtime.memory.facts() == ()


async def test_a_timeout_is_explained_and_changes_nothing(loopback):
    runtime = live_runtime(loopback.base_url, timeout=0.3)
    loopback.enqueue(Canned(delay=1.0))
    result = await runtime.ask("support", "module=Billing")
    assert "timed out" in result.error and "--timeout" in result.error
    assert state(runtime) == ((), [], [])


async def test_a_cut_off_writer_reply_is_a_rejected_batch(loopback):
    runtime = live_runtime(loopback.base_url, "json_object")
    loopback.state.responder = lambda body: (
        Canned(text='{"facts": [{"key": "module"', finish_reason="length") if is_writer(body) else None
    )
    assert (await runtime.ask("support", "module=Billing")).ok
    event = runtime.memory.ledger.latest(1)[0]
    assert event.kind is EventKind.REJECTED and event.reasons[0].code is ReasonCode.MALFORMED_OUTPUT
    assert (
        f"the writer's reply was cut off at {writer_max_tokens('module=Billing', MAX_FACTS)} tokens" in event.describe()
    )
    assert runtime.memory.facts() == ()


def test_connection_refused_and_unknown_host_name_what_to_check():
    request = httpx.Request("POST", "http://no-such-host.invalid/v1/chat/completions")
    unknown = openai.APIConnectionError(request=request)
    unknown.__cause__ = httpx.ConnectError("[Errno -2] Name or service not known")
    assert explain_failure(unknown, base_url="http://no-such-host.invalid/v1") == (
        "cannot resolve the host of http://no-such-host.invalid/v1: check the name in --base-url / OPENAI_BASE_URL"
    )
    refused = openai.APIConnectionError(request=request)
    refused.__cause__ = httpx.ConnectError("[Errno 111] Connection refused")
    assert explain_failure(refused, base_url="http://127.0.0.1:9/v1").startswith("cannot reach http://127.0.0.1:9/v1")


def test_drift_fails_one_policy_on_a_cut_off_reply_with_one_line(loopback, capsys):
    loopback.enqueue(Canned(text="cut", finish_reason="length"))
    policies = ["--policies", "full,window"]  # the first request is full history's; the next policy goes on
    assert main(["drift", "--model", "loopback-model", "--base-url", loopback.base_url, "--json", *policies]) == 0
    captured = capsys.readouterr()
    assert captured.err.count("\n") == 1 and "full history: failed, the other policies went on" in captured.err
    assert json.loads(captured.out)["failures"]["full"]["reason"].startswith("the reply was cut off")


def test_qualify_stops_when_the_key_is_refused_without_showing_it(loopback, monkeypatch, capsys):
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    loopback.state.responder = lambda body: Canned(status=401, body={"error": {"message": f"bad key {SECRET}"}})
    assert main(["qualify", "--model", "loopback-model", "--base-url", loopback.base_url]) == 1
    captured = capsys.readouterr()
    assert "refused the API key (HTTP 401): check OPENAI_API_KEY" in captured.err
    assert SECRET not in captured.err + captured.out


def test_qualify_stops_when_the_server_cannot_be_reached(capsys):
    assert main(["qualify", "--model", "m", "--base-url", "http://127.0.0.1:9/v1", "--timeout", "5"]) == 1
    assert "cannot reach http://127.0.0.1:9/v1" in capsys.readouterr().err


def test_the_json_reports_never_carry_the_key(loopback, monkeypatch, capsys):
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    assert main(["drift", "--json", "--model", "loopback-model", "--base-url", loopback.base_url]) == 0
    assert main(["qualify", "--json", "--model", "loopback-model", "--base-url", loopback.base_url]) == 0
    out = capsys.readouterr().out
    assert SECRET not in out and json.loads(out.split("\n}\n")[0] + "\n}")
