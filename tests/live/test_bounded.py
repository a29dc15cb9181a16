"""Every model call is bounded by --timeout as a total: a reply that trickles, the client's retries
and their sleeps included, for the agents, the writer, the drift lab and qualify. A 429 that
outlasts the budget is reported as the 429 it is."""

import pytest

from tests.live.helpers import is_writer, live_runtime
from tests.support.openai_server import Canned
from workbench.cli import main
from workbench.memory import EventKind
from workbench.runtime import Mode

SLOW_TEXT = "word " * 400  # as SSE, thousands of bytes: minutes at the trickle below


@pytest.mark.parametrize("mode", list(Mode), ids=str)
async def test_a_streamed_reply_that_trickles_is_cut_at_the_timeout(loopback, mode):
    runtime = live_runtime(loopback.base_url, mode=mode, timeout=0.5)
    loopback.enqueue(Canned(text=SLOW_TEXT, trickle=0.01))
    result = await runtime.ask("support", "module=Billing")
    assert not result.ok and "timed out" in result.error and "--timeout" in result.error
    assert runtime.memory.facts() == () and runtime.history("support") == []
    (call,) = runtime.calls.records()
    assert not call.finished and "took longer than 0.5 s, the --timeout" in call.error
    assert runtime.memory.ledger.latest(1)[0].kind is EventKind.ABANDONED


@pytest.mark.parametrize("mode", list(Mode), ids=str)
async def test_a_writer_reply_that_trickles_is_cut_at_the_timeout(loopback, mode):
    runtime = live_runtime(loopback.base_url, mode=mode, timeout=0.5)
    loopback.state.responder = lambda body: Canned(trickle=0.02) if is_writer(body) else None
    result = await runtime.ask("support", "module=Billing")
    assert result.ok and runtime.memory.facts() == ()
    event = runtime.memory.ledger.latest(1)[0]
    assert event.kind is EventKind.ABANDONED and "writer call failed: the model call timed out" in event.describe()
    (writer_call,) = runtime.calls.records(purpose="writer")
    assert "took longer than 0.5 s" in writer_call.error


@pytest.mark.parametrize("mode", list(Mode), ids=str)
async def test_a_429_asking_to_wait_past_the_timeout_is_reported_as_a_429_at_once(loopback, mode):
    runtime = live_runtime(loopback.base_url, mode=mode, timeout=2, retries=3)
    loopback.enqueue(Canned(status=429, body={"error": {"message": "slow down"}}, headers={"retry-after": "30"}))
    result = await runtime.ask("support", "module=Billing")
    assert "rate limiting (HTTP 429) and asked to wait 30 s" in result.error
    assert len(loopback.requests) == 1  # no retry that could not finish in time, no 30 s sleep


async def test_429s_that_outlast_the_timeout_between_retries_are_reported_as_429(loopback):
    runtime = live_runtime(loopback.base_url, timeout=0.3, retries=5)
    loopback.state.responder = lambda body: Canned(status=429, body={"error": {"message": "slow down"}})
    result = await runtime.ask("support", "module=Billing")  # the SDK's backoff sleeps past the budget
    assert "rate limiting (HTTP 429) for longer than --timeout" in result.error
    assert "timed out" not in result.error


def test_drift_honours_the_timeout_on_a_server_that_trickles(loopback, capsys):
    loopback.state.responder = lambda body: Canned(text=SLOW_TEXT, trickle=0.01)
    # A timeout fails a policy; the lab stops when the first three (these) failed in a row.
    policies = ["--policies", "full,window,summary"]
    code = main(["drift", "--model", "loopback-model", "--base-url", loopback.base_url, "--timeout", "0.5", *policies])
    last = capsys.readouterr().err.strip().splitlines()[-1]
    assert code == 1 and "timed out (the model call took longer than 0.5 s" in last


def test_drift_reports_a_429_that_outlasts_the_timeout(loopback, capsys):
    # The 429 is reported at once (its wait outlasts the timeout): 5 s only bounds its first request on
    # a loaded machine, where 1 s was once too short for it.
    limited = Canned(status=429, body={"error": {"message": "slow down"}}, headers={"retry-after": "30"})
    loopback.state.responder = lambda body: limited
    policies = ["--policies", "full,window,summary"]  # a 429 fails a policy: three in a row stop the lab
    assert (
        main(["drift", "--model", "loopback-model", "--base-url", loopback.base_url, "--timeout", "5", *policies]) == 1
    )
    assert "rate limiting (HTTP 429) and asked to wait 30 s" in capsys.readouterr().err


def test_qualify_honours_the_timeout_and_reports_the_429(loopback, capsys):
    limited = Canned(status=429, body={"error": {"message": "slow down"}}, headers={"retry-after": "30"})
    loopback.state.responder = lambda body: limited
    assert main(["qualify", "--model", "loopback-model", "--base-url", loopback.base_url, "--timeout", "5"]) == 1
    assert "rate limiting (HTTP 429)" in capsys.readouterr().err
