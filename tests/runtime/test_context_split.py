"""The split of each agent request into instructions, facts block, history and current message."""

import pytest

from tests.runtime.helpers import live, scripted
from workbench.runtime import Mode


@pytest.mark.parametrize("mode", [Mode.MANUAL, Mode.PROVIDER])
async def test_each_request_splits_into_four_parts_that_add_up_to_what_was_sent(mode):
    runtime = scripted(mode)
    for text in ("module=Reporting; database=PostgreSQL", "module=Billing", "Where are the logs?"):
        assert (await runtime.ask("support", text)).ok
    splits = runtime.context_by_turn("support")
    calls = [c for c in runtime.calls.records(purpose="support")]
    assert [s.turn for s in splits] == [1, 2, 3]
    assert [s.chars for s in splits] == [c.request_chars for c in calls]
    assert len({s.instructions for s in splits}) == 1
    assert splits[0].history == 0 and splits[1].history < splits[2].history
    assert all(s.facts > 0 for s in splits)
    assert splits[-1].current == len("Where are the logs?") + (2 if mode is Mode.MANUAL else 0)
    assert all(s.usage is None for s in splits)  # the built-in model reports nothing
    assert splits[0].estimate == splits[0].chars // 4


async def test_a_provider_that_reports_usage_has_its_input_tokens_beside_the_split(loopback):
    runtime = live(loopback.base_url)
    assert (await runtime.ask("logs", "Where can I find logs?")).ok
    (split,) = runtime.context_by_turn("logs")
    (call,) = runtime.calls.records(purpose="logs")
    assert call.usage is not None and split.reported_input == call.usage.input_tokens
