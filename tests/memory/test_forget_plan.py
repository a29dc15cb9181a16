"""The one forget's plan: what it removes, and how every holder scrubs text with it."""

import json
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.memory.helpers import say
from workbench.memory import WorkingMemory
from workbench.memory.forget import FORGOTTEN, ForgetPlan, Forgetting, TextHolder, declared_in, written
from workbench.memory.prompt import quote_value


def plan(key: str | None, *values: str) -> ForgetPlan:
    keys = frozenset({key}) if key else frozenset({"module", "version"})
    return ForgetPlan(None if key is None else (key,), keys, frozenset(values))


def test_a_value_is_scrubbed_whole_never_inside_another_word_or_number():
    text = "module=Billing; database=SQL Server 2022; version=2"
    assert plan("version", "2").scrub(text) == f"module=Billing; database=SQL Server 2022; version={FORGOTTEN}"
    assert plan("version", "2").scrub("step 2 of 2.5, v2, 22, 2") == f"step {FORGOTTEN} of 2.5, v2, 22, {FORGOTTEN}"
    assert plan("module", "Bill").scrub("Billing and Bill") == f"Billing and {FORGOTTEN}"


def test_declarations_of_the_key_are_blanked_whatever_their_value_and_spacing():
    text = "version = 7 ;module=Billing\nversion=9"
    assert plan("version").scrub(text) == f"version = {FORGOTTEN} ;module=Billing\nversion={FORGOTTEN}"


def test_values_match_whatever_their_case_and_text_without_them_is_untouched():
    p = plan("database", "PostgreSQL")
    assert p.scrub("we moved off postgresql last year") == f"we moved off {FORGOTTEN} last year"
    assert p.scrub("nothing here") == "nothing here"
    assert p.holds("POSTGRESQL!") and not p.holds("PostgreSQL2")


def test_values_that_begin_or_end_with_punctuation_are_matched_as_written():
    p = plan("log", "/var/log/billing.log")
    assert p.scrub("see /var/log/billing.log.") == f"see {FORGOTTEN}."


def test_a_value_is_found_and_scrubbed_as_json_writes_it_too():
    """A reply that repeats the facts block line, or a JSON file, holds the value escaped: as much as raw."""
    value = 'Acme<Zq9> "O\'Brien" \u00e9\u202e'
    p = plan("customer", value)
    for quoted in (quote_value(value), json.dumps(value), json.dumps(value, ensure_ascii=False)):
        line = f"- customer = {quoted} (turn 1)"
        assert quoted[1:-1] != value and p.holds(line)
        assert p.scrub(line) == f'- customer = "{FORGOTTEN}" (turn 1)'


def test_declared_values_come_from_every_declaration_not_only_the_last():
    texts = ["priority=P9; module=A", "priority = P1", "no declaration", "module=B"]
    assert declared_in(texts, frozenset({"priority"})) == {"P9", "P1"}


def test_memory_plans_current_replaced_and_evicted_values_and_what_holders_declared():
    memory = WorkingMemory()
    say(memory, "module=Reporting; database=PostgreSQL")
    say(memory, "module=Billing")
    assert memory.plan("module", ["Invoicing"]).values == {"Reporting", "Billing", "Invoicing"}
    assert memory.plan(None).values == {"Reporting", "Billing", "PostgreSQL"}


class Kept:
    """A holder of text as the product's holders are: it applies the plan it is given."""

    def __init__(self, name: str, texts: list[str]) -> None:
        self.texts = texts
        self.holder = TextHolder(name, "text(s)", lambda: self.texts, self.apply)
        self.plans: list[ForgetPlan] = []

    def apply(self, plan: ForgetPlan) -> int:
        self.plans.append(plan)
        scrubbed = [plan.scrub(t) for t in self.texts]
        changed = sum(a != b for a, b in zip(self.texts, scrubbed, strict=True))
        self.texts = scrubbed
        return changed


async def test_every_holder_applies_the_same_plan_and_the_report_counts_without_values():
    memory = WorkingMemory()
    say(memory, "priority=P2")
    forgetting = Forgetting(memory)
    first, second = Kept("first", ["priority=P9; module=A and P9"]), Kept("second", ["P2 was said", "other"])
    empty = Kept("empty", ["nothing declared here"])
    for kept in (first, second, empty):
        forgetting.register(kept.holder)
    report = await forgetting.forget("priority")
    assert first.plans == second.plans and first.plans[0].values == {"P2", "P9"}
    assert first.texts == [f"priority={FORGOTTEN}; module=A and {FORGOTTEN}"]
    assert second.texts == [f"{FORGOTTEN} was said", "other"]
    assert report.counts == {"first": "1 text(s)", "second": "1 text(s)", "empty": "0 text(s)"}
    note = memory.ledger.latest(1)[0].describe()
    assert "first: 1 text(s), second: 1 text(s); held nothing to remove: empty" in note
    assert "P9" not in note and "P2" not in note


async def test_a_failing_holder_does_not_keep_the_forget_from_the_others_and_its_error_is_scrubbed():
    memory = WorkingMemory()
    forgetting = Forgetting(memory)

    async def broken(plan: ForgetPlan) -> int:
        raise OSError("disk full while deleting customer Contoso")

    forgetting.register(TextHolder("broken", "row(s)", lambda: ["customer=Contoso"], broken))
    after = Kept("after", ["customer=Contoso"])
    forgetting.register(after.holder)
    report = await forgetting.forget("customer")
    assert after.texts == [f"customer={FORGOTTEN}"]
    assert "Contoso" not in report.failures["broken"] and "disk full" in report.failures["broken"]
    assert "Contoso" not in memory.ledger.latest(1)[0].describe()


async def test_a_holder_that_cannot_be_read_is_named_in_the_plan_and_the_others_widen_it():
    """Its `declared` raises (a store another process holds): the plan is made of the rest, names it
    with why (scrubbed of the values it does know), and the forget tries it and reports it failed."""
    memory = WorkingMemory()
    say(memory, "customer=Contoso")
    forgetting = Forgetting(memory)

    class Unreadable:
        name, unit = "locked", "row(s)"

        async def declared(self, keys: frozenset[str]) -> set[str]:
            raise OSError("locked while reading customer Contoso")

        async def erase(self, plan: ForgetPlan) -> int:
            raise OSError("still locked")

    forgetting.register(Unreadable())
    after = Kept("after", ["customer=Fabrikam"])
    forgetting.register(after.holder)
    planned = await forgetting.plan("customer")
    assert planned.values == {"Contoso", "Fabrikam"}
    assert planned.unread == {"locked": f"OSError: locked while reading customer {FORGOTTEN}"}
    report = await forgetting.forget("customer")
    assert report.failures == {"locked": "OSError: still locked"} and after.texts == [f"customer={FORGOTTEN}"]


def test_a_holder_is_registered_once():
    forgetting = Forgetting(WorkingMemory())
    unregister = forgetting.register(Kept("one", []).holder)
    with pytest.raises(ValueError, match="already registered"):
        forgetting.register(Kept("one", []).holder)
    unregister()
    assert forgetting.holders == ()


async def test_a_cancelled_caller_does_not_leave_a_forget_half_done():
    import asyncio

    memory = WorkingMemory()
    say(memory, "customer=Contoso")
    forgetting = Forgetting(memory)
    gate = asyncio.Event()
    reached: list[str] = []

    async def slow(plan: ForgetPlan) -> int:
        await gate.wait()
        reached.append("slow")
        return 1

    forgetting.register(TextHolder("slow", "text(s)", lambda: [], slow))
    after = Kept("after", ["customer=Contoso"])
    forgetting.register(after.holder)
    caller = asyncio.create_task(forgetting.forget("customer"))
    await asyncio.sleep(0.01)
    caller.cancel()
    with pytest.raises(asyncio.CancelledError):
        await caller
    gate.set()
    for _ in range(20):
        await asyncio.sleep(0)
    assert reached == ["slow"] and after.texts == [f"customer={FORGOTTEN}"] and memory.facts() == ()


def _looked_behind_first(values: frozenset[str]) -> re.Pattern[str]:
    """The whole-occurrence rule as first written: each value's edges checked where it begins."""

    def occurrence(value: str) -> str:
        before = r"(?<!\w)(?<!\d[.,])" if re.match(r"\w", value[0]) else ""
        after = r"(?!\w)(?![.,]\d)" if re.match(r"\w", value[-1]) else ""
        return f"{before}{re.escape(value)}{after}"

    return re.compile("|".join(occurrence(v) for v in sorted(values, key=len, reverse=True)), re.IGNORECASE)


# Digits, separators, both cases, and letters whose case rules are not ASCII's (long s, Kelvin sign,
# dotless and dotted i, final sigma, sharp s), so edges and case are tried where they are hardest.
_CHARS = "aAbB19.,-_ =;/\nsSkKi\u017f\u212a\u0131\u0130\u03c3\u03c2\u03a3\u00df\u00e9"


@settings(max_examples=400, deadline=None)
@given(st.lists(st.text(_CHARS, min_size=1, max_size=4), min_size=1, max_size=4), st.data())
def test_the_value_first_pattern_finds_and_scrubs_exactly_what_the_look_behind_first_rule_does(
    values: list[str], data: st.DataObject
) -> None:
    # Text made of the values (as written, upper- or lower-cased) between random runs of the same characters.
    piece = st.one_of(
        st.sampled_from(values).flatmap(lambda v: st.sampled_from([v, v.upper(), v.lower()])),
        st.text(_CHARS, max_size=3),
    )
    text = "".join(data.draw(st.lists(piece, max_size=8)))
    forget = ForgetPlan(("module",), frozenset({"module"}), frozenset(values))
    reference = _looked_behind_first(frozenset(form for value in forget.values for form in written(value)))
    assert forget._pattern is not None
    assert (forget._pattern.search(text) is None) == (reference.search(text) is None)
    assert forget._pattern.sub(FORGOTTEN, text) == reference.sub(FORGOTTEN, text)
