"""The sixth policy, retrieved history, cell by cell on the fixed chronology and the built-in model
(lexical embedder), in both variants: never purged, and purged by the product's forget."""

import asyncio

import pytest

from workbench.drift import run_drift
from workbench.runtime import ModelConfig, build_models


@pytest.fixture(scope="module")
def report():
    return asyncio.run(run_drift(build_models(ModelConfig()), policies=["recall", "recall_purged"]))


@pytest.mark.parametrize("policy", ["recall", "recall_purged"])
def test_the_database_question_recalls_the_superseded_values(report, policy):
    for probe in ("restart", "scope"):
        cell = report.scores[policy][probe]
        assert cell.superseded == {"Reporting": True, "PostgreSQL": True}
        assert cell.current["database"] is True and cell.current["module"] is True


@pytest.mark.parametrize(
    ("policy", "scope_missing"),
    [
        # Never purged, the store still holds the forgotten customer's messages, and since the
        # built-in model's replies changed (9149217) the scope question also misses environment.
        ("recall", ["constraint", "environment"]),
        ("recall_purged", ["constraint"]),
    ],
)
def test_retrieval_loses_what_is_not_similar_to_the_question(report, policy, scope_missing):
    restart = report.scores[policy]["restart"]
    assert restart.prohibition is False
    assert restart.current_missing == ["constraint", "version", "environment"]
    assert report.scores[policy]["scope"].current_missing == scope_missing


def test_a_store_never_purged_brings_the_forgotten_customer_back(report):
    assert report.scores["recall"]["restart"].forgotten == {"Contoso": False}  # not similar to a restart
    assert report.scores["recall"]["scope"].forgotten == {"Contoso": True}  # "for which customer?"


def test_a_store_purged_by_forget_cannot_bring_it_back(report):
    for probe in ("restart", "scope"):
        assert report.scores["recall_purged"][probe].forgotten == {"Contoso": False}


def test_retrieval_counts_its_embeddings_calls_and_keeps_every_message_unless_purged(report):
    for policy in ("recall", "recall_purged"):
        cost = report.accounting[policy]
        assert cost.calls == {"agent": 10, "writer": 0, "summarizer": 0, "memory": 0, "embeddings": 20}
        assert cost.reported is None  # the built-in model and the lexical embedder report no tokens
    assert report.retained["recall"].messages == 20  # every request and reply
    assert report.retained["recall_purged"].messages < 20
