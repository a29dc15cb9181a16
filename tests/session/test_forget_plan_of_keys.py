"""A forget of several keys is one plan: previewed, confirmed and applied as the same object, in one pass
over the holders, recorded whole in the journal; a plan memory outgrew before the answer is refused."""

from __future__ import annotations

import json

import pytest

from tests.runtime.test_persist import holding, quit_, tagged
from workbench.memory.forget import ForgetPlan, PlanChanged, TextHolder
from workbench.persist.journal import FILE_NAME, ForgetJournal, read_pending
from workbench.persist.sessions import DIRECTORY, PersistedSessions
from workbench.runtime import ModelConfig, build_models
from workbench.runtime.config import WriterKind
from workbench.session.assemble import assemble
from workbench.session.controller import SessionController


def host_session(**kwargs: object) -> SessionController:
    return assemble(build_models(ModelConfig()), writer=WriterKind.HOST, **kwargs)  # type: ignore[arg-type]


class Crash(BaseException):
    """The process ends while the holders apply the plan."""


async def test_the_confirmed_preview_of_several_keys_is_the_plan_every_holder_applies_once():
    session = host_session()
    assert (await session.ask("support", "customer=Contoso; module=Billing; log=/var/log/billing/x.log")).result.ok
    assert (await session.ask("logs", "database=Oracle")).result.ok
    applied: list[ForgetPlan] = []

    def witness(plan: ForgetPlan) -> int:
        applied.append(plan)
        return 1

    session.runtime.forgetting.register(TextHolder("a witness", "plan(s)", lambda: (), witness))
    preview = await session.forget_preview(["customer", "module"])
    assert (preview.keys, preview.removed, preview.also, preview.kept) == (
        ("customer", "module"),
        ("customer", "log", "module"),
        ("log",),
        1,
    )
    assert preview.plan is not None and preview.plan.asked == ("customer", "module")
    report = await session.forget(preview)
    assert applied == [preview.plan] and applied[0] is preview.plan  # the same object, once: one pass
    assert report.removed["a witness"] == 1
    assert [f.key for f in session.state().memory.facts] == ["database"]
    forgotten = [e.describe() for e in session.state().memory.ledger if e.kind.value == "forgotten"]
    assert forgotten == [
        "Forgot customer, module. Removed log too: it held a forgotten value. "
        "Updates issued before this point can no longer apply."
    ]
    assert ("support", None, "customer") in [(e.agent, e.say, e.forget) for e in session.transcript.entries]
    assert [e.forget for e in session.transcript.entries if e.forget] == ["customer", "module"]


async def test_a_plan_memory_outgrew_before_the_answer_forgets_nothing_and_the_new_plan_can_be_asked():
    session = host_session()
    assert (await session.ask("support", "customer=Contoso; module=Billing")).result.ok
    preview = await session.forget_preview(["customer", "module"])
    assert (await session.ask("logs", "customer=Fabrikam")).result.ok  # a turn replaced a fact meanwhile
    with pytest.raises(PlanChanged) as changed:
        await session.forget(preview)
    assert str(changed.value) == "memory changed since the forget of customer, module was asked: nothing was forgotten"
    assert "Fabrikam" not in str(changed.value)
    assert {f.key: f.value for f in session.state().memory.facts} == {"customer": "Fabrikam", "module": "Billing"}
    again = await session.forget_preview(["customer", "module"])
    assert again.plan == changed.value.plan
    await session.forget(again)
    assert session.state().memory.facts == ()


async def test_a_plan_still_current_is_applied_though_an_unrelated_turn_ran():
    session = host_session()
    assert (await session.ask("support", "customer=Contoso")).result.ok
    preview = await session.forget_preview("customer")
    assert (await session.ask("logs", "Where are the logs?")).result.ok  # declares nothing: the plan holds
    await session.forget(preview)
    assert session.state().memory.facts == ()


async def test_one_key_everything_and_several_go_the_same_way_and_say_what_they_forgot():
    session = host_session()
    assert (await session.ask("support", "customer=Contoso; module=Billing; database=Oracle")).result.ok
    await session.forget("customer")  # the scripts' entry: planned when its turn comes
    await session.forget(["module", "version"])
    details = [e.detail for e in session.state().memory.ledger if e.kind.value == "forgotten"]
    assert details == ["Forgot customer.", "Forgot module, version (version was not stored)."]
    await session.forget(None)
    assert session.state().memory.facts == ()


def test_the_journal_records_several_keys_and_one_key_as_before(tmp_path):
    journal = ForgetJournal(tmp_path / FILE_NAME, ("--persist",))
    journal.begin(("customer",))
    assert json.loads(journal.path.read_text())["version"] == 1  # an older workbench completes it
    assert read_pending(journal.path).keys == ("customer",)  # type: ignore[union-attr]
    journal.begin(("customer", "module"))
    record = json.loads(journal.path.read_text())
    assert (record["version"], record["key"], record["keys"]) == (2, None, ["customer", "module"])
    pending = read_pending(journal.path)
    assert pending is not None and pending.keys == ("customer", "module") and pending.what == "'customer', 'module'"
    journal.begin(None)
    assert read_pending(journal.path).what == "everything"  # type: ignore[union-attr]


async def test_a_forget_of_several_keys_cut_short_is_completed_whole_by_the_next_start(tmp_path):
    directory, journal = tmp_path / DIRECTORY, ForgetJournal(tmp_path / FILE_NAME, ("--persist",))
    v = tagged("contoso")
    runtime = assemble(build_models(ModelConfig()), persisted=PersistedSessions(directory), journal=journal).runtime
    assert (await runtime.ask("support", f"customer={v['contoso']}; module=Billing; database=Oracle")).ok

    async def crash(plan: ForgetPlan) -> int:
        raise Crash

    runtime.histories.erase = crash  # type: ignore[attr-defined]  # memory on disk is not written
    with pytest.raises(Crash):
        await runtime.forget(["customer", "module"])
    assert json.loads((tmp_path / FILE_NAME).read_text())["keys"] == ["customer", "module"]
    quit_(runtime)

    again = assemble(build_models(ModelConfig()), persisted=PersistedSessions(directory), journal=journal).runtime
    report = await again.complete_pending()
    assert report is not None and report.failures == {}
    assert [f.key for f in again.memory.facts()] == ["database"]
    assert holding(directory, [v["contoso"], "Billing"]) == {}
    assert "forget: completed the forget of 'customer', 'module'" in again.status.summary
    quit_(again)


async def test_the_script_refuses_in_one_line_when_memory_changed_after_its_question(capsys):
    from workbench.scripts import NOTHING_DONE, forget

    session = host_session()
    assert (await session.ask("support", "customer=Contoso")).result.ok
    said: list[str] = []

    def answer_yes_after_another_value_is_declared(question: str) -> bool:
        session.transcript.said("support", "customer=Fabrikam")  # a holder now declares another value
        return True

    status = await forget(
        lambda: session, "customer", ask=answer_yes_after_another_value_is_declared, as_json=False, say=said.append
    )
    assert status == NOTHING_DONE
    assert said == ["memory changed since the forget of customer was asked: nothing was forgotten; forget again"]
    assert [f.key for f in session.state().memory.facts] == ["customer"] and capsys.readouterr().out == ""
