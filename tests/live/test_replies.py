"""Replies that are not answers: each fails its turn with one line naming what happened and what
to check; nothing enters history, no extraction runs, and the call log says the call failed.
Usage that cannot be trusted is "unknown" and never fails an answered turn."""

import json

import pytest

from tests.live.helpers import is_writer, live_runtime
from tests.support.openai_server import Canned
from workbench.memory import EventKind
from workbench.runtime import Mode, Usage, describe_usage


def chunk(delta: dict | None = None, finish: str | None = None, **extra) -> str:
    choices = [{"index": 0, "delta": delta or {}, "finish_reason": finish}] if delta is not None or finish else []
    return json.dumps(
        {"id": "c", "object": "chat.completion.chunk", "created": 0, "model": "m", "choices": choices, **extra}
    )


def completion(**extra) -> bytes:
    message = {"role": "assistant", "content": '{"facts": []}'}
    payload = {"id": "c", "object": "chat.completion", "created": 0, "model": "m"}
    payload |= {"choices": [{"index": 0, "message": message, "finish_reason": "stop"}]} | extra
    return json.dumps(payload).encode()


HELLO = chunk({"role": "assistant", "content": "Hello, the answer is"})

# name, what the server does to a streamed agent reply, words the one line must contain
STREAM_FAULTS = [
    (
        "early EOF",
        Canned(text="A partial answer that never ends", finish_reason=None),
        "closed the reply before it finished",
    ),
    (
        "connection dropped mid-event",
        Canned(raw=f"data: {HELLO}\n\ndata: {HELLO[:25]}".encode(), content_type="text/event-stream"),
        "closed the reply before it finished",
    ),
    ("empty body", Canned(raw=b"", content_type="text/event-stream"), "sent no reply it could read"),
    ("only [DONE]", Canned(events=["[DONE]"]), "sent no reply it could read"),
    ("empty choices", Canned(events=[chunk(), "[DONE]"]), "sent no reply it could read"),
    ("empty message", Canned(text=""), "sent no reply it could read"),
    ("HTML, not SSE", Canned(raw=b"<html><body>Welcome</body></html>", content_type="text/html"), "sent no reply"),
    ("not JSON", Canned(events=["this is not json", "[DONE]"]), "is not JSON"),
    ("wrong shape", Canned(events=[json.dumps({"choices": "none"}), "[DONE]"]), "not in the shape of an OpenAI chat"),
    ("no choices key", Canned(events=[json.dumps({"id": "x"}), "[DONE]"]), "not in the shape of an OpenAI chat"),
    (
        "error mid-stream",
        Canned(events=[HELLO, json.dumps({"error": {"message": "model worker died"}}), "[DONE]"]),
        "sent an error in the middle of the reply (model worker died)",
    ),
    ("cut off", Canned(text="The answer is cut", finish_reason="length"), "cut off at the token limit"),
]


def state(runtime):
    return runtime.memory.facts(), runtime.history("support"), runtime.history("logs")


@pytest.mark.parametrize("mode", list(Mode), ids=str)
@pytest.mark.parametrize(("name", "canned", "words"), STREAM_FAULTS, ids=[f[0] for f in STREAM_FAULTS])
async def test_a_streamed_reply_that_is_not_an_answer_fails_the_turn_and_stores_nothing(
    loopback, mode, name, canned, words
):
    runtime = live_runtime(loopback.base_url, mode=mode)
    assert (await runtime.ask("support", "module=Reporting")).ok
    before, calls_before = state(runtime), len(runtime.calls.records())
    loopback.enqueue(canned)
    result = await runtime.ask("support", "module=Billing; database=SQL Server 2022")
    assert not result.ok and words in result.error and "\n" not in result.error
    assert "Exception" not in result.error and "<class" not in result.error
    assert ": " in result.error and "cannot reach" not in result.error  # what happened: what to check
    assert state(runtime) == before  # nothing stored: no user message without an answer
    (call,) = runtime.calls.records()[calls_before:]  # the agent call only: no extraction ran
    assert call.purpose == "support" and not call.finished and words in call.error  # F2 shows it failed
    event = runtime.memory.ledger.latest(1)[0]
    assert event.kind is EventKind.ABANDONED and words in event.describe()
    assert (await runtime.ask("support", "module=Billing")).ok  # and the next turn works
    assert [f.value for f in runtime.memory.facts()] == ["Billing"]


WRITER_FAULTS = [
    ("empty body", Canned(raw=b""), "not JSON"),
    ("empty choices", Canned(raw=completion(choices=[])), "sent no reply it could read (no choices)"),
    ("not JSON", Canned(raw=b"Service Unavailable"), "not JSON"),
    ("wrong shape", Canned(raw=json.dumps({"foo": 1}).encode()), "not in the shape of an OpenAI chat completion"),
    ("dropped mid-body", Canned(raw=completion()[:40], declared_length=400), "closed the connection in the middle"),
]


@pytest.mark.parametrize("mode", list(Mode), ids=str)
@pytest.mark.parametrize(("name", "canned", "words"), WRITER_FAULTS, ids=[f[0] for f in WRITER_FAULTS])
async def test_a_writer_reply_that_is_not_an_answer_admits_nothing(loopback, mode, name, canned, words):
    runtime = live_runtime(loopback.base_url, "json_object", mode=mode)
    loopback.state.responder = lambda body: canned if is_writer(body) else None
    result = await runtime.ask("support", "module=Billing")
    assert result.ok and runtime.memory.facts() == ()
    event = runtime.memory.ledger.latest(1)[0]
    assert event.kind is EventKind.ABANDONED and "writer call failed" in event.describe()
    assert words in event.describe() and "cannot reach" not in event.describe()
    (writer_call,) = runtime.calls.records(purpose="writer")
    assert not writer_call.finished and words in writer_call.error


BAD_USAGE = [
    ("a string", {"prompt_tokens": "many", "completion_tokens": 7, "total_tokens": 7}),
    ("negative", {"prompt_tokens": -40, "completion_tokens": 7, "total_tokens": -33}),
    ("absurdly large", {"prompt_tokens": 10**30, "completion_tokens": 7, "total_tokens": 10**30}),
    ("a float", {"prompt_tokens": 12.5, "completion_tokens": 7, "total_tokens": 19.5}),
]


@pytest.mark.parametrize("mode", list(Mode), ids=str)
@pytest.mark.parametrize(("name", "usage"), BAD_USAGE, ids=[u[0] for u in BAD_USAGE])
async def test_usage_that_is_not_a_count_is_unknown_and_never_fails_the_turn(loopback, mode, name, usage):
    runtime = live_runtime(loopback.base_url, mode=mode)
    loopback.enqueue(Canned(usage=usage))
    result = await runtime.ask("support", "module=Billing")
    assert result.ok and [f.value for f in runtime.memory.facts()] == ["Billing"]
    assert result.usage == Usage(None, 7)
    total = runtime.calls.total("support")  # the agent's and the writer's calls
    assert total is not None and total.input_tokens is None and (total.output_tokens or 0) > 7
    assert describe_usage(total).startswith("unknown in / ")  # never a made-up 0


LOOPING = "customer=Fabrikam 2040. The customer is Fabrikam 2040. " * 40


@pytest.mark.parametrize(
    ("reply", "advice", "not_said"),
    [
        (LOOPING, "while repeating itself: the model loops, and a higher --max-tokens only lets it loop", "raise"),
        (" ".join(f"step {n}: check log file {n * 7} on host h{n}" for n in range(60)), "raise --max-tokens", "loops"),
    ],
    ids=["looping", "long"],
)
async def test_a_reply_cut_off_at_the_limit_is_advised_by_what_it_said(loopback, reply, advice, not_said):
    """SmolLM2 repeated the correction until the 1,024-token limit; the advice 'raise --max-tokens'
    cannot help a model that loops: it is told what a looping model needs instead."""
    runtime = live_runtime(loopback.base_url)
    loopback.enqueue(Canned(text=reply, finish_reason="length"))
    result = await runtime.ask("support", "customer=Fabrikam 2040")
    assert not result.ok and "cut off at the token limit" in result.error and advice in result.error
    assert not_said not in result.error and runtime.memory.facts() == ()
