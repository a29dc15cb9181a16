"""A turn whose model call fails mid-stream leaves nothing of its request after a forget.

The tester of issue 36 ran the framework's Content Review Workflow (its agents on `OpenAIChatClient`)
against a Responses server whose stream the openai SDK refused at the Reviewer: after that failed turn and
a forget of `customer`, the process still held the value in the failed stream's objects (the request's
`ByteStream`, the SSE body's `Data`, the SDK's `async_generator`s). Nothing kept them: they were garbage
in reference cycles (the exception's traceback and the generators' frames) until the collector ran, and
then the event loop held the abandoned generators to close them, reachable from the runtime through the
workflow's runner context. Here the loopback Responses server fails each stream after its first text
delta (`fail_streams`), as a service does with an `error` event, for a workflow's agents and for an
agent of the user's; every string reachable from the runtime and the loaded agents is searched after the
forget (`tests/support/residue.py`)."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Iterator

import pytest

from tests.support.residue import residue
from tests.support.responses_server import KEY, LoopbackResponses
from workbench.loading import load_folder
from workbench.memory.forget import written
from workbench.runtime import build_models
from workbench.runtime.config import ModelConfig, WriterKind
from workbench.session.assemble import assemble

VALUE = "Contoso Ltd 7731"
CLIENT = """
import os
from typing import Any

from agent_framework import Agent, WorkflowBuilder
from agent_framework.openai import OpenAIChatClient, OpenAIChatOptions
from pydantic import BaseModel


class Review(BaseModel):
    score: int
    feedback: str


def client():
    return OpenAIChatClient(
        model="gpt-loopback", base_url=os.environ["LOOPBACK_RESPONSES_URL"], api_key=os.environ["LOOPBACK_RESPONSES_KEY"]
    )
"""
# As the sample: a writer, then a reviewer asking for a response format (the openai SDK's stream helper).
FLOW = (
    CLIENT
    + """
writer = Agent(client=client(), name="Writer", instructions="You write.")
reviewer = Agent(
    client=client(), name="Reviewer", instructions="You review.", default_options=OpenAIChatOptions[Any](response_format=Review)
)
workflow = WorkflowBuilder(name="Content Review", start_executor=writer).add_edge(writer, reviewer).build()
"""
)
AGENT = CLIENT + '\nagent = Agent(client=client(), name="accounts", instructions="You help with accounts.")\n'


@pytest.fixture
def service(tmp_path, monkeypatch) -> Iterator[LoopbackResponses]:
    before = set(sys.modules)
    monkeypatch.setattr(sys, "path", list(sys.path))
    monkeypatch.setenv("WORKBENCH_DATA_DIR", str(tmp_path / "data"))
    with LoopbackResponses() as served:
        monkeypatch.setenv("LOOPBACK_RESPONSES_URL", served.base_url)
        monkeypatch.setenv("LOOPBACK_RESPONSES_KEY", KEY)
        yield served
    for name in set(sys.modules) - before:
        del sys.modules[name]


@pytest.mark.parametrize("entry", ["flow", "agent"])
def test_a_turn_that_failed_mid_stream_leaves_no_byte_of_its_request_after_a_forget(entry, service, tmp_path):
    folder = tmp_path / "agents"
    folder.mkdir()
    (folder / f"{entry}.py").write_text(FLOW if entry == "flow" else AGENT)
    loaded = load_folder(folder)
    flows = [(flow.name, flow.workflow, flow.cannot_run) for flow in loaded.workflows]
    agents = [item.agent for item in loaded.agents]
    runtime = assemble(build_models(ModelConfig()), agents=agents, workflows=flows, writer=WriterKind.HOST).runtime
    [pane] = runtime.names
    service.state.fail_streams = True
    forms = sorted(written(VALUE))

    async def story() -> dict[str, list[str]]:
        result = await runtime.ask(pane, f"customer={VALUE}; my name is Contoso")
        assert not result.ok and "ChatClientException" in (result.error or "")
        assert any(VALUE in str(body) for _, _, body in service.requests)  # the request that failed sent it
        report = await runtime.forget("customer")
        assert not report.failures, report.describe()
        return residue(forms, runtime, loaded)  # while the loop that ran the turn still runs

    assert asyncio.run(story()) == {}
