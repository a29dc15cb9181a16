"""The drift lab's Mem0 policy run for real over loopback servers: a live model (the loopback one),
Mem0 extracting by it, and the product's forget reaching Mem0 before the probes."""

from __future__ import annotations

from tests.agentmem.mem0_servers import mem0_servers
from tests.agentmem.test_mem0 import config, live_options, needs_mem0
from workbench.drift import run_drift
from workbench.drift.mem0_policy import NEEDS_EMBEDDINGS
from workbench.runtime import ModelConfig, build_models


@needs_mem0
async def test_with_a_live_model_the_mem0_policy_runs_and_the_forget_reaches_it(tmp_path):
    with mem0_servers() as servers:
        models = build_models(ModelConfig(model="loopback-model", base_url=servers.chat.base_url, max_retries=0))
        report = await run_drift(models, mem0=config(servers, tmp_path / "unused"), policies=["mem0"])
        assert report.stop is None and "mem0" not in report.unavailable
        restart = report.scores["mem0"]["restart"]
        assert restart.forgotten == {"Contoso": False}  # forgotten before the probe: no request held it
        assert any(restart.current.values())  # what Mem0 extracted from the declarations came back
        assert report.retained["mem0"].messages > 0
        assert servers.extraction_requests()  # Mem0 asked the app's model to extract
    assert not (tmp_path / "unused").exists()  # the lab used a folder of its own, and removed it


async def test_with_a_live_model_but_no_embedding_model_the_policy_says_what_it_needs(loopback):
    models = build_models(ModelConfig(model="loopback-model", base_url=loopback.base_url, max_retries=0))
    report = await run_drift(models, policies=["full", "mem0"])
    assert report.unavailable["mem0"] == NEEDS_EMBEDDINGS
    assert "mem0" not in report.scores


@needs_mem0
def test_workbench_drift_runs_mem0_with_a_model_and_an_embedding_model(capsys):
    import json

    from workbench.cli import main

    with mem0_servers() as servers:
        # Only these two can need what a run lacks (`workbench.drift.lab.needs`): with both given, neither does.
        code = main(["drift", "--json", *live_options(servers), "--policies", "memory_files,mem0"])
    data = json.loads(capsys.readouterr().out)
    assert code == 0 and data["unavailable"] == {}
    assert data["matrix"]["mem0"]["restart"]["forgotten"] == {"Contoso": False}
