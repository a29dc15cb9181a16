import pytest

from workbench.memory import ALLOWED_KEYS, MAX_FACTS, declared_candidates, parse_declarations, parse_message


def test_allowed_keys_are_the_ten_of_the_contract():
    assert ALLOWED_KEYS == {
        "product", "module", "priority", "database", "constraint",
        "customer", "version", "environment", "symptom", "log",
    }  # fmt: skip
    assert MAX_FACTS == 5


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("module=Reporting; database=PostgreSQL", {"module": "Reporting", "database": "PostgreSQL"}),
        ("module=Billing\ndatabase=SQL Server 2022", {"module": "Billing", "database": "SQL Server 2022"}),
        ("module=Billing\r\ndatabase=SQL Server 2022", {"module": "Billing", "database": "SQL Server 2022"}),
        ("  module  =  Billing  ", {"module": "Billing"}),
        ("log=level=debug; a=b=c", {"log": "level=debug", "a": "b=c"}),
        ("Where can I find logs?", {}),
        ("What does a b=c mean?", {}),
        ("x+y=3; =orphan", {}),
        ("module=Reporting; module=Billing", {"module": "Billing"}),
        ("Module=Billing; module=Reporting", {"Module": "Billing", "module": "Reporting"}),
        ("module=; priority=  ", {"module": "", "priority": ""}),
        ("password=hunter2", {"password": "hunter2"}),
        ("Hi there; version=2.1; thanks", {"version": "2.1"}),
        ("customer=Zoë Ångström", {"customer": "Zoë Ångström"}),
    ],
)
def test_parse_declarations(text, expected):
    assert parse_declarations(text) == expected


@pytest.mark.parametrize("key", ["m\u043edule", "module\u200b", "\u200bmodule", "mod\u00fcle"])
def test_lookalike_keys_declare_nothing_but_are_reported(key):
    parsed = parse_message(f"{key}=Billing; database=SQL Server 2022")
    assert parsed.declarations == {"database": "SQL Server 2022"}
    assert parsed.lookalike_keys == (key,)
    assert parsed.declares_anything


def test_free_text_declares_nothing():
    assert not parse_message("Where can I find logs? a b = c").declares_anything


def test_declared_candidates_quote_their_own_segment_and_follow_last_wins():
    candidates = declared_candidates("Hello; module = Reporting ;module=Billing; database=SQL Server 2022")
    assert [(c.key, c.value, c.evidence) for c in candidates] == [
        ("module", "Billing", "module=Billing"),
        ("database", "SQL Server 2022", "database=SQL Server 2022"),
    ]
