"""A memory's own model calls are in the call log F2 shows, with the turn that caused them: extracted
memory's extraction prompt and Mem0's language-model and embeddings requests, each with exactly what
was sent and the usage the server reported ("unknown" when it reported none), counted in the pane's
usage and in the lab's cost columns. Against the built-in model and loopback servers."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from tests.agentmem.helpers import live_runtime
from tests.agentmem.mem0_servers import Mem0Servers, mem0_servers
from tests.agentmem.test_mem0 import mem0_memory, mem0_of, needs_mem0
from tests.support.openai_server import Canned
from workbench.agentmem.base import EXTRACTION_CALL, MEM0_CALL, MEM0_EMBEDDINGS_CALL
from workbench.agentmem.extracted import ExtractedMemory
from workbench.cli.configs import model_config
from workbench.cli.parser import build_parser
from workbench.cli.start import build_app
from workbench.drift import run_drift
from workbench.runtime import ModelConfig, Usage, build_models
from workbench.runtime.agents import AgentRuntime
from workbench.runtime.config import Mode, WriterKind
from workbench.runtime.scripted import EXTRACTION_PROMPT_START
from workbench.runtime.usage import total_usage
from workbench.session.assemble import assemble


def is_extraction(body: dict[str, Any]) -> bool:
    return str(body["messages"][0]["content"]).startswith(EXTRACTION_PROMPT_START)


def reported(body: dict[str, Any], reply: str) -> Usage:
    """What the loopback chat server reports for a request and its reply (tests/support/openai_server.py)."""
    prompt = sum(len(str(m.get("content") or "")) for m in body["messages"])
    return Usage(max(1, prompt // 4), max(1, len(reply) // 4))


async def test_an_extraction_call_is_recorded_with_its_turn_what_was_sent_and_the_reported_usage(loopback, tmp_path):
    runtime = live_runtime(loopback.base_url, ExtractedMemory(tmp_path))
    assert (await runtime.ask("support", "module=Billing; database=PostgreSQL")).ok

    calls = runtime.last_turn_calls("support")
    assert [c.purpose for c in calls] == ["support", EXTRACTION_CALL]
    extraction = calls[1]
    (body,) = [r for r in loopback.requests if is_extraction(r)]
    assert extraction.turn == calls[0].turn == 1 and extraction.origin == "support"
    assert extraction.messages == tuple((m["role"], m["content"]) for m in body["messages"])
    assert json.loads(extraction.reply)["memories"]  # the ideal extractor's answer, as received
    assert extraction.usage == reported(body, extraction.reply)
    assert runtime.usage("support") == total_usage(c.usage for c in calls)  # the pane's "since start" counts it
    assert extraction.usage is not None and calls[0].usage is not None
    assert body["max_tokens"] == runtime.models.reply_options["max_tokens"]  # bounded like the agent's replies


async def test_an_extraction_that_reports_no_usage_makes_the_panes_usage_unknown(loopback, tmp_path):
    loopback.state.responder = lambda body: (
        Canned(text='{"memories": []}', report_usage=False) if is_extraction(body) else None
    )
    runtime = live_runtime(loopback.base_url, ExtractedMemory(tmp_path))
    assert (await runtime.ask("support", "module=Billing")).ok
    agent, extraction = runtime.last_turn_calls("support")
    assert agent.usage is not None and extraction.usage is None
    assert runtime.usage("support") is None  # never a guess, never zero


async def test_a_cut_off_or_timed_out_extraction_is_recorded_and_the_turn_still_answers(loopback, tmp_path):
    loopback.state.queue.clear()
    cut = Canned(text='{"memories": [{"topic"', finish_reason="length")
    loopback.state.responder = lambda body: cut if is_extraction(body) else None
    runtime = live_runtime(loopback.base_url, ExtractedMemory(tmp_path))
    result = await runtime.ask("support", "module=Billing")
    assert result.ok and result.reply
    extraction = runtime.last_turn_calls("support")[1]
    assert extraction.finished and extraction.reply == cut.text and not extraction.error

    config = ModelConfig(model="loopback-model", base_url=loopback.base_url, timeout=0.5, max_retries=0)
    models = build_models(config, function_calls=True)
    slow = assemble(models, writer=WriterKind.HOST, timeout=0.5, memories=[ExtractedMemory(tmp_path / "slow")]).runtime
    loopback.state.responder = lambda body: Canned(text='{"memories": []}', delay=1.5) if is_extraction(body) else None
    assert (await slow.ask("support", "module=Billing")).ok  # the framework skips an extraction that failed
    extraction = slow.last_turn_calls("support")[1]
    assert extraction.purpose == EXTRACTION_CALL and "timed out" in extraction.error
    assert slow.usage("support") is None


async def test_f2_shows_the_extraction_call_of_the_turn_on_the_built_in_model(tmp_path):
    from textual.widgets import Static

    from tests.ui.helpers import say
    from workbench.ui.screens import CallsScreen

    args = build_parser().parse_args(["--agent-memory", "extracted", "--agent-memory-dir", str(tmp_path)])
    app = build_app(args, model_config(args))
    async with app.run_test(size=(140, 40)) as pilot:
        await pilot.pause()
        await say(pilot, "support", "module=Billing")
        await pilot.press("f2")
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, CallsScreen)
        shown = "\n".join(str(s.render()) for s in screen.query(Static))
        assert re.search(r"^support call #\d+ · turn 1 ", shown, re.M)
        assert re.search(r"^extraction call #\d+ · turn 1 · model: scripted", shown, re.M)
        extraction = shown[shown.index("extraction call #") :]
        assert "message 1 · system\nYou extract durable memory candidates" in extraction
        assert "message 2 · user\nUSER: <working-memory>" in extraction  # the turn, as the framework sent it
        assert "reported usage: unknown" in shown  # the built-in model reports none


async def test_the_labs_extracted_policy_counts_its_extraction_calls_and_their_chars():
    report = await run_drift(build_models(ModelConfig()), policies=["extracted"])
    cost = report.accounting["extracted"]
    assert cost.calls["memory"] == cost.calls["agent"] == 10  # one extraction after every answer
    assert cost.reported is None  # the built-in model reports no usage: unknown, not zero


# -- Mem0 ------------------------------------------------------------------------------------------


@pytest.fixture
def servers():
    with mem0_servers() as running:
        yield running


def mem0_runtime(servers: Mem0Servers, directory: Path) -> AgentRuntime:
    models = build_models(ModelConfig(model="loopback-model", base_url=servers.chat.base_url, max_retries=0))
    memory = mem0_memory(servers, directory)
    return assemble(models, mode=Mode.PROVIDER, writer=WriterKind.HOST, memories=[memory]).runtime


@needs_mem0
async def test_mem0s_calls_are_recorded_with_the_turn_that_made_them_and_their_reported_usage(servers, tmp_path):
    runtime = mem0_runtime(servers, tmp_path / "mem0")
    assert (await runtime.ask("logs", "customer=Contoso")).ok

    calls = runtime.last_turn_calls("logs")
    purposes = [c.purpose for c in calls]
    assert purposes[0] == MEM0_EMBEDDINGS_CALL  # the search before the answer
    assert "logs" in purposes and MEM0_CALL in purposes
    assert all(c.turn == 1 and c.origin == "logs" and c.finished and not c.error for c in calls)

    (extraction,) = [c for c in calls if c.purpose == MEM0_CALL]
    (body,) = servers.extraction_requests()
    assert extraction.messages == tuple((m["role"], m["content"]) for m in body["messages"])
    assert extraction.model == "loopback-model" and "The user's customer is Contoso" in extraction.reply
    assert extraction.usage == reported(body, extraction.reply)

    embeddings = [c for c in calls if c.purpose == MEM0_EMBEDDINGS_CALL]
    assert len(embeddings) == len(servers.embeddings.requests) - 1  # all but the size probe at start
    for call, request in zip(embeddings, servers.embeddings.requests[1:], strict=True):
        texts = request["input"] if isinstance(request["input"], list) else [request["input"]]
        assert [m.text for m in call.messages] == texts
        assert call.usage == Usage(sum(len(t.split()) for t in texts), 0)
    assert runtime.usage("logs") == total_usage(c.usage for c in calls)
    await mem0_of(runtime).close()


@needs_mem0
async def test_mem0_records_nothing_outside_a_turn(servers, tmp_path):
    runtime = mem0_runtime(servers, tmp_path / "mem0")
    assert (await runtime.ask("support", "customer=Contoso")).ok
    before = len(runtime.calls.records())
    memory = mem0_of(runtime)
    assert await memory.held()  # the view reads through Mem0's API
    await memory.open().search("Contoso", filters={"user_id": "local-user"})  # an embeddings request
    assert len(runtime.calls.records()) == before
    await memory.close()


@needs_mem0
async def test_the_labs_mem0_policy_counts_mem0s_calls_and_their_reported_usage(tmp_path):
    from tests.agentmem.test_mem0 import config

    with mem0_servers() as servers:
        began: dict[str, int] = {}

        def progress(title: str, turn: int, total: int) -> None:
            if title == "Mem0" and not began:  # every request from Mem0's first turn on is its own
                began.update(chat=len(servers.chat.requests), embeddings=len(servers.embeddings.requests))

        models = build_models(ModelConfig(model="loopback-model", base_url=servers.chat.base_url, max_retries=0))
        report = await run_drift(
            models, mem0=config(servers, tmp_path / "unused"), progress=progress, policies=["mem0"]
        )
        chat = servers.chat.requests[began["chat"] :]
        embedded = servers.embeddings.requests[began["embeddings"] :]
    cost = report.accounting["mem0"]
    extractions = [r for r in chat if r in servers.extraction_requests()]
    assert cost.calls["memory"] == len(extractions) > 0
    assert cost.calls["agent"] == len(chat) - len(extractions)
    assert cost.calls["embeddings"] == len(embedded) > 0
    # Every call reported usage, so the total is known, and it counts Mem0's requests as the servers did.
    prompt = sum(max(1, sum(len(str(m.get("content") or "")) for m in r["messages"]) // 4) for r in chat)
    words = sum(
        len(t.split()) for r in embedded for t in (r["input"] if isinstance(r["input"], list) else [r["input"]])
    )
    assert cost.reported is not None and cost.reported.input_tokens == prompt + words
