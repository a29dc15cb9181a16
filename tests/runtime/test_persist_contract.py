"""`--persist` across contracts: memory records the contract it was saved under; a start under a
contract that does not admit everything it did is refused with one line naming both, and leaves the
files as they are; a wider one opens it whole, says so in the ledger, and its forget of everything
reaches every key (a raw scan of the files)."""

import pytest

from tests.runtime.test_persist import files, holding, quit_
from workbench.cli.configs import model_config
from workbench.cli.dispatch import main
from workbench.cli.parser import build_parser
from workbench.cli.start import build_app
from workbench.memory import SEED, Contract, EventKind
from workbench.persist.format import SavedFileError
from workbench.persist.sessions import DIRECTORY, PersistedSessions
from workbench.runtime import ModelConfig, build_models
from workbench.runtime.agents import AgentRuntime
from workbench.runtime.config import WriterKind
from workbench.session.assemble import assemble

TEAM = Contract(("service", "region", "owner"))
WIDER = Contract(("service", "region", "owner", "team"), max_facts=6)


def started(directory, contract: Contract) -> AgentRuntime:
    persisted = PersistedSessions(directory, contract=contract)
    return assemble(build_models(ModelConfig()), persisted=persisted, writer=WriterKind.HOST).runtime


async def test_a_folder_saved_under_one_contract_is_refused_under_another_and_left_as_it_is(tmp_path):
    directory = tmp_path / DIRECTORY
    first = started(directory, TEAM)
    assert (await first.ask("support", "service=billing-api; region=eu-west")).ok
    quit_(first)
    before = {p: p.read_bytes() for p in files(directory)}
    for other in (SEED, Contract(("service", "region"))):
        with pytest.raises(SavedFileError) as refused:
            started(directory, other)
        line = str(refused.value)
        assert (
            "\n" not in line and "state.sqlite: it was saved under the contract (keys owner, region, service;" in line
        )
        assert f"this start's ({other.describe()}) does not admit everything that one did" in line
    assert {p: p.read_bytes() for p in files(directory)} == before  # nothing was written, nothing vanished
    again = started(directory, TEAM)
    assert {f.key: f.value for f in again.memory.facts()} == {"service": "billing-api", "region": "eu-west"}
    quit_(again)


async def test_a_wider_contract_opens_it_whole_notes_it_and_forgets_every_key(tmp_path):
    directory = tmp_path / DIRECTORY
    first = started(directory, TEAM)
    assert (await first.ask("support", "service=Billing-7f3; owner=Ops-7f3")).ok
    quit_(first)
    wider = started(directory, WIDER)
    assert wider.memory.contract == WIDER and len(wider.memory.facts()) == 2
    (note,) = [e for e in wider.memory.ledger.latest() if e.kind is EventKind.NOTE]
    assert "opened under a wider contract (keys owner, region, service, team;" in note.describe()
    assert (await wider.ask("support", "team=Platform-7f3")).ok
    await wider.forget(None)
    quit_(wider)
    assert holding(directory, ["Billing-7f3", "Ops-7f3", "Platform-7f3"]) == {}
    reopened = started(directory, WIDER)  # saved under the wider contract now
    assert reopened.memory.contract == WIDER and reopened.memory.facts() == ()
    quit_(reopened)
    with pytest.raises(SavedFileError, match="does not admit everything"):
        started(directory, TEAM)


async def test_the_start_says_it_in_one_line_and_stops_before_the_tui(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("WORKBENCH_DATA_DIR", str(tmp_path / "data"))
    first = started(tmp_path / "data" / DIRECTORY, TEAM)
    assert (await first.ask("support", "service=api")).ok
    quit_(first)
    assert main(["--persist"]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "it was saved under the contract (keys owner, region, service;" in err
    args = build_parser().parse_args(["--persist", "--keys", "service,region,owner"])
    start = build_app(args, model_config(args))._start
    assert start is not None
    runtime = start().runtime
    assert runtime.memory.contract == TEAM and [f.key for f in runtime.memory.facts()] == ["service"]
    quit_(runtime)
