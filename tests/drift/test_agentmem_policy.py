"""The lab's Agent Framework memory policies, cell by cell: extracted memory on the built-in model (the
ideal extractor), memory files on a loopback model that calls file_memory_write, and "needs --model"."""

import asyncio
import io
import re

import pytest
from rich.console import Console

from tests.support.openai_server import memory_file_writer
from workbench.drift import run_drift
from workbench.drift.agentmem_policy import NEEDS_LOOP, NEEDS_MODEL
from workbench.drift.mem0_policy import MEM0_NEEDS_MODEL, NEEDS_EMBEDDINGS
from workbench.drift.report import render
from workbench.drift.report_json import to_json
from workbench.runtime import ModelConfig, build_models


@pytest.fixture(scope="module")
def scripted_report():
    # Only these two can need what a run lacks (`workbench.drift.lab.needs`), and extracted memory is read.
    return asyncio.run(run_drift(build_models(ModelConfig()), policies=["memory_files", "extracted", "mem0"]))


def test_with_the_built_in_model_memory_files_say_they_need_a_model(scripted_report):
    unavailable = {"memory_files": NEEDS_MODEL, "mem0": MEM0_NEEDS_MODEL}  # Mem0: see tests/agentmem
    assert scripted_report.unavailable == unavailable
    assert "memory_files" not in scripted_report.scores and "memory_files" not in scripted_report.accounting
    assert to_json(scripted_report)["unavailable"] == unavailable
    console = Console(record=True, width=240, file=io.StringIO())  # read through export_text
    console.print(render(scripted_report, timing=False, chart=False))
    rows = re.findall(r"model-written memory files\s*│ needs --model", console.export_text())
    assert len(rows) == 5  # both probes' request and answer tables, and the cost table


def test_extracted_memory_keeps_the_corrected_values_in_its_index_and_forgets_the_customer(scripted_report):
    restart, scope = (scripted_report.scores["extracted"][p] for p in ("restart", "scope"))
    for cell in (restart, scope):
        assert cell.superseded == {"Reporting": True, "PostgreSQL": True}  # MEMORY.md keeps first summaries
        assert cell.forgotten == {"Contoso": False}  # the product's forget rewrote its files
        assert cell.prohibition is True
    assert restart.current_missing == ["module"]  # "module=Billing" is only in a topic file not loaded
    assert scope.current_missing == []
    assert scripted_report.accounting["extracted"].calls["agent"] == 10
    # MEMORY.md, state.json, five topics (customer.md was forgotten), the support agent's transcript
    assert scripted_report.retained["extracted"].messages == 8


async def test_memory_files_on_a_model_that_calls_functions(loopback):
    loopback.state.responder = memory_file_writer()
    config = ModelConfig(model="loopback-model", base_url=loopback.base_url, max_retries=0)
    report = await run_drift(build_models(config, function_calls=True), policies=["memory_files", "mem0"])
    assert report.unavailable == {"mem0": NEEDS_EMBEDDINGS}
    restart, scope = (report.scores["memory_files"][p] for p in ("restart", "scope"))
    for cell in (restart, scope):
        # Each request holds the index (names, descriptions), never a file's content: no value at all.
        assert cell.current_missing == ["constraint", "module", "database", "version", "environment"]
        assert cell.superseded == {"Reporting": False, "PostgreSQL": False}
        assert cell.forgotten == {"Contoso": False}
    # six files (customer.md rewritten to "customer=(forgotten)": its name holds no value) and the index
    assert report.retained["memory_files"].messages == 7
    writes = [r for r in loopback.requests if r.get("tools") and r["messages"][-1]["role"] == "tool"]
    assert writes  # the framework ran the file_memory_write calls and sent their results back


async def test_a_live_model_without_the_function_loop_is_not_faked(loopback):
    config = ModelConfig(model="loopback-model", base_url=loopback.base_url, max_retries=0)
    report = await run_drift(build_models(config), policies=["memory_files", "extracted", "mem0"])
    assert report.unavailable == {"memory_files": NEEDS_LOOP, "mem0": NEEDS_EMBEDDINGS}
    assert "extracted" in report.scores
