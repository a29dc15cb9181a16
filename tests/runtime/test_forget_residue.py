"""After a forget, no string the runtime holds contains a forgotten value: store, ledger (every
field), call log, sessions, writer. Proved by searching every reachable string, in both modes."""

import secrets

import pytest

from tests.live.helpers import is_writer
from tests.memory.helpers import T0, cand
from tests.runtime.helpers import live, scripted
from tests.support.openai_server import Canned
from tests.support.residue import residue
from workbench.memory import WorkingMemory, parse_declarations
from workbench.runtime import MemorySnapshot

BOTH_MODES = pytest.mark.parametrize("mode", ["manual", "provider"])


def values(tag: str, *names: str) -> dict[str, str]:
    return {name: f"{name.capitalize()}-{tag}" for name in names}


async def converse(runtime, v):
    assert (await runtime.ask("support", f"module={v['reporting']}; database={v['postgres']}")).ok
    assert (await runtime.ask("logs", f"customer={v['contoso']}; log=/var/{v['logdir']}")).ok
    assert (await runtime.ask("support", f"module={v['billing']}; where are the logs?")).ok
    assert (await runtime.ask("logs", "and now?")).ok


@BOTH_MODES
async def test_forget_all_leaves_no_residue_in_the_runtime(loopback, mode):
    v = values(secrets.token_hex(6), "reporting", "postgres", "contoso", "logdir", "billing", "crash", "high")
    runtime = live(loopback.base_url, mode)
    await converse(runtime, v)

    # A server error that echoes the user's message, and a writer batch the host rejects.
    def responder(body):
        text = str(body["messages"])
        if v["crash"] in text and not is_writer(body):
            return Canned(status=400, body={"error": {"message": f"invalid input 'symptom={v['crash']}'"}})
        if v["high"] in text and is_writer(body):
            return Canned(text='{"facts": [{"key": "priority", "value": "low", "evidence": "priority"}]}')
        return None

    loopback.state.responder = responder
    assert not (await runtime.ask("support", f"symptom={v['crash']}")).ok
    assert v["crash"] in runtime.memory.ledger.latest(1)[0].describe()  # the ledger quotes the server
    assert (await runtime.ask("support", f"priority={v['high']}")).ok
    loopback.state.responder = None

    everything = list(v.values())
    assert set(residue(everything, runtime)) == set(everything)  # the search sees them before the forget
    await runtime.forget()
    assert residue(everything, runtime) == {}
    assert (await runtime.ask("support", "module=Fresh")).ok  # and the runtime goes on


@BOTH_MODES
async def test_forget_one_key_removes_its_values_and_keeps_the_others(mode):
    v = values(secrets.token_hex(6), "reporting", "postgres", "contoso", "logdir", "billing")
    runtime = scripted(mode)
    await converse(runtime, v)
    await runtime.forget("module")
    found = residue(v.values(), runtime)
    assert v["reporting"] not in found and v["billing"] not in found
    assert v["postgres"] in found and v["contoso"] in found  # still facts: still held


def test_a_held_snapshot_after_a_forget_quotes_each_fact_as_memory_does():
    """A turn's batches held while a forget lands (`MemoryUpdate.redacted`) and memory itself apply one
    rule: a quotation that also covers a forgotten value keeps only the fact's own declaration."""
    memory = WorkingMemory()
    text = "module=Billing; database=SQL Server 2022; version=2"
    turn = memory.begin_turn(text)
    memory.admit(turn, [cand(k, v, text) for k, v in parse_declarations(text).items()], T0)
    held = MemorySnapshot(memory.facts(), tuple(memory.ledger.latest()))
    plan = memory.plan("version")
    memory.erase(plan)
    assert [f.evidence for f in memory.facts()] == ["database=SQL Server 2022", "module=Billing"]
    assert held.redacted(plan).facts == memory.facts()
