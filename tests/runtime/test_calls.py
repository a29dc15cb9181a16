"""What each model call was sent, and the usage its provider reported (or "unknown")."""

import pytest
from agent_framework import Content, Message

from tests.runtime.helpers import live, scripted
from workbench.memory.prompt import BLOCK_START
from workbench.runtime import Mode, Usage, describe_usage, total_usage
from workbench.runtime.calls import as_sent
from workbench.runtime.scripted import SCRIPTED_LABEL
from workbench.runtime.usage import usage_from_details


def test_no_report_is_unknown_never_zero():
    assert usage_from_details(None) is None
    assert usage_from_details({}) is None
    assert usage_from_details({"total_token_count": None}) is None
    assert usage_from_details({"input_token_count": 0, "output_token_count": 0}) == Usage(0, 0)
    assert usage_from_details({"input_token_count": 12}) == Usage(12, None)
    assert describe_usage(None) == "unknown"
    assert describe_usage(Usage(1200, None)) == "1,200 in / unknown out"
    assert total_usage([Usage(1, 2), Usage(3, 4)]) == Usage(4, 6)
    assert total_usage([Usage(1, 2), None]) is None


async def test_scripted_calls_record_what_was_sent_and_report_unknown():
    runtime = scripted(Mode.PROVIDER)
    await runtime.ask("support", "module=Billing")
    agent_call, writer_call = runtime.calls.records()
    assert (agent_call.purpose, agent_call.turn, agent_call.model) == ("support", 1, SCRIPTED_LABEL)
    assert agent_call.instructions.startswith("You are the support agent")
    assert [m.role for m in agent_call.messages] == ["user", "user"]
    assert agent_call.messages[0].text.startswith(BLOCK_START)
    assert agent_call.messages[1].text == "module=Billing"
    assert agent_call.reply.startswith("**support** (scripted)")
    assert agent_call.usage is None and agent_call.finished
    assert (writer_call.purpose, writer_call.turn) == ("writer", 1)
    assert [m.text for m in writer_call.messages] == ["module=Billing"]
    assert writer_call.instructions.startswith("You are the writer agent")


async def test_manual_mode_sends_the_block_inside_the_user_message():
    runtime = scripted(Mode.MANUAL)
    await runtime.ask("logs", "Where can I find logs?")
    (call,) = runtime.calls.records(purpose="logs")
    (message,) = call.messages
    assert message.text.startswith(BLOCK_START) and message.text.endswith("Where can I find logs?")


async def test_live_calls_record_the_reported_usage(loopback):
    runtime = live(loopback.base_url)
    await runtime.ask("support", "module=Billing")
    for call in runtime.calls.records():
        assert call.usage is not None and call.usage.input_tokens > 0 and call.usage.output_tokens > 0


async def test_a_provider_that_reports_nothing_is_unknown(loopback):
    loopback.state.report_usage = False
    runtime = live(loopback.base_url)
    result = await runtime.ask("support", "module=Billing")
    assert result.ok and result.usage is None
    assert all(call.usage is None for call in runtime.calls.records())
    assert total_usage(call.usage for call in runtime.calls.records()) is None


@pytest.mark.parametrize(
    "contents",
    [
        [],
        [Content.from_text("one text")],
        [Content.from_text("")],
        [Content.from_function_call("call-1", "search", arguments={"query": "x"})],
        [Content.from_text("two"), Content.from_text("texts")],
        [Content.from_function_call("call-1", "search", arguments={}), Content.from_text("after a call")],
    ],
)
def test_a_message_is_recorded_as_the_framework_reads_its_text(contents):
    message = Message(role="assistant", contents=contents)
    assert as_sent(message) == (str(message.role), message.text or "")


async def test_a_cut_off_call_counts_the_usage_its_server_reported(loopback):
    """A reply cut off at the token limit was answered, and its server said what it used: that counts.
    The total was "unknown" (a lab policy's tokens too) though the server had reported the call's usage."""
    from tests.support.openai_server import Canned

    loopback.enqueue(Canned(text="la " * 40, finish_reason="length"))
    runtime = live(loopback.base_url)
    result = await runtime.ask("support", "Where can I find logs?")
    assert not result.ok
    (call,) = runtime.calls.records(purpose="support")
    assert call.error and call.usage is not None and call.usage.output_tokens
    assert runtime.calls.total("support") == call.usage


async def test_a_failed_call_without_reported_usage_makes_its_pane_total_unknown_never_zero(loopback):
    """A reply cut off at the token limit used tokens the provider did not report: the pane's running
    total (the footer's figure) is unknown from then on, not `0 in / 0 out`."""
    from tests.support.openai_server import Canned

    loopback.enqueue(Canned(text="la " * 40, finish_reason="length", report_usage=False))
    runtime = live(loopback.base_url)
    result = await runtime.ask("support", "Where can I find logs?")
    assert not result.ok
    assert runtime.calls.total("support") is None and describe_usage(runtime.calls.total("support")) == "unknown"
