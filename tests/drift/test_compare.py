"""The one comparison rule, for the request matrix and the answer matrix alike."""

import pytest

from workbench.drift import load_chronology
from workbench.drift.compare import holds, normalized
from workbench.drift.lab import score

RESTART = load_chronology().expectations[0]


@pytest.mark.parametrize(
    ("text", "value", "held"),
    [
        ("No downtime during business hours.", "no downtime during business hours", True),  # case
        ("we run postgresql", "PostgreSQL", True),
        ("no  downtime\nduring\tbusiness hours", "no downtime during business hours", True),  # whitespace runs
        ("\uff33\uff31\uff2c Server 2022", "SQL Server 2022", True),  # full-width letters (NFKC)
        ("SQL\u00a0Server 2022", "SQL Server 2022", True),  # a no-break space
        ("Stra\u00dfe", "STRASSE", True),  # full case folding
        ("Zoe\u0308 GmbH", "Zoë GmbH", True),  # composed and decomposed alike
        ("version 112.45", "12.4", False),  # whole values only
        ("not during business hours", "no", False),
        ("Billings", "Billing", False),
        ("see /var/log/billing.log", "Billing", True),  # a path's part is a whole word
        ("SQL Server", "SQL Server 2022", False),  # all of the value
        ("anything", "   ", False),  # nothing is never held
    ],
)
def test_the_rule(text, value, held):
    assert holds(text, value) is held


def test_the_normal_form_is_shown_plainly():
    assert normalized("  No\u00a0DOWNTIME\n during ") == "no downtime during"


def test_the_same_sentence_counts_the_same_in_the_request_and_in_the_answer():
    """The request matrix compared case-sensitively and the answer matrix did not: the same sentence
    was "prohibition held: no" in the request and revived PostgreSQL in the answer."""
    sentence = "No downtime during business hours. We moved off postgresql."
    cell = score(sentence, RESTART, sentence)
    assert cell.prohibition is True
    assert cell.superseded["PostgreSQL"] is True
    assert cell.answer_score.forbidden["PostgreSQL"] is True
    assert cell.current["constraint"] is True


@pytest.mark.parametrize(
    ("answer", "held"),
    [
        ("No downtime during business hours.", True),  # what SmolLM2's "last 3 turns" said, scored 0/1 in red
        ("No, not during business hours.", True),  # a paraphrase the chronology lists
        ("Yes.", False),  # what "extracted memory" said, scored as good
        ("Yes, restart SQL Server 2022 now.", False),
    ],
)
def test_the_restart_probe_expects_the_prohibition(answer, held):
    assert RESTART.about_prohibition and RESTART.expect == () and RESTART.forbid == ("PostgreSQL",)
    assert RESTART.expect_any[0] == "no downtime during business hours"
    assert score("", RESTART, answer).answer_score.any_found is held
