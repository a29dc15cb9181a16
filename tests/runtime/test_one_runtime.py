"""One runtime, whole: built the documented way (`docs/your-agents.md`, "From Python, without the
window": `workbench.session.assemble.assemble`), every holder is registered, and a forget leaves the
value in none of them, found by scanning each holder's strings (and every string the session reaches),
not by reasoning about what each one should hold. The bare class is not exported, and built alone its
forget refuses instead of forgetting the facts only."""

import pytest

import workbench.runtime
from tests.support.residue import residue
from workbench.memory import WorkingMemory
from workbench.runtime import AGENT_NAMES, Mode, ModelConfig, build_models
from workbench.runtime.agents import AgentRuntime
from workbench.session.assemble import assemble
from workbench.session.controller import SessionController

CUSTOMER = "Contoso Ltd 7731"


def holding(session: SessionController) -> set[str]:
    """Each holder of text whose strings hold the value, each scanned on its own."""
    runtime = session.runtime
    holders: dict[str, object] = {
        **{f"{name} history": runtime.history(name) for name in AGENT_NAMES},
        "call log": runtime.calls,
        "transcript": session.transcript,
        "working memory": runtime.memory,
        "ledger": runtime.memory.ledger,
    }
    return {name for name, holder in holders.items() if residue([CUSTOMER], holder)}


@pytest.mark.parametrize("mode", list(Mode))
async def test_built_the_documented_way_a_forget_leaves_the_value_in_no_holder(mode):
    session = assemble(build_models(ModelConfig()), mode=mode)
    assert (await session.ask("support", f"customer={CUSTOMER}")).result.ok
    assert (await session.ask("logs", f"Is {CUSTOMER} on the new plan? Where are its logs?")).result.ok
    assert holding(session) == {
        "support history",
        "logs history",
        "call log",
        "transcript",
        "working memory",
        "ledger",
    }  # the scan sees the value in every holder before the forget

    report = await session.forget("customer")

    assert not report.failures
    assert holding(session) == set()
    assert residue([CUSTOMER], session) == {}  # and in no string the session reaches
    assert (await session.ask("support", "customer=Fabrikam")).result.ok  # the runtime goes on


def test_the_bare_runtime_is_not_exported():
    assert "AgentRuntime" not in workbench.runtime.__all__
    with pytest.raises(AttributeError):
        workbench.runtime.AgentRuntime  # noqa: B018


async def test_built_alone_its_forget_refuses_and_forgets_nothing():
    runtime = AgentRuntime(WorkingMemory(), build_models(ModelConfig()))
    assert (await runtime.ask("support", f"customer={CUSTOMER}")).ok
    with pytest.raises(RuntimeError, match=r"not assembled.*agent sessions, call log.*workbench\.session\.assemble"):
        await runtime.forget("customer")
    assert [f.value for f in runtime.memory.facts()] == [CUSTOMER]  # refused whole: not the facts only
