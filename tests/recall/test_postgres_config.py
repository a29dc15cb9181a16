"""Choosing a PostgreSQL store, by --recall-store or the environment, never shows its password."""

from __future__ import annotations

import pytest

from workbench.recall.config import RecallConfig
from workbench.recall.postgres_names import ENVIRONMENT
from workbench.recall.postgres_store import PostgresBackend
from workbench.runtime.config import ConfigError

SECRET = "s3cr3t-Pa55"


def test_a_postgresql_url_chooses_the_server_and_its_password_is_shown_nowhere() -> None:
    config = RecallConfig(store=f"postgresql://ana:{SECRET}@db.example:5433/recall")
    setup = config.build()
    assert isinstance(setup.store.backend, PostgresBackend)
    shown = [
        repr(config),
        setup.store.describe(),
        str(setup.store.location),
        setup.describe(),
        repr(setup.store.backend),
        setup.unit,
    ]
    assert setup.store.describe() == "PostgreSQL: postgresql://ana:***@db.example:5433/recall"
    assert not any(SECRET in text for text in shown)
    assert setup.store.backend.erases is not None and "VACUUM FULL" in setup.store.backend.erases


def test_the_environment_names_the_server_when_no_store_is_given(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(ENVIRONMENT, f"host=/run/postgresql user=ana password={SECRET} dbname=recall")
    assert RecallConfig().build().store.describe() == "PostgreSQL: postgresql://ana:***@/recall?host=/run/postgresql"
    assert RecallConfig(store="memory").build().store.kind == "in memory"  # --recall-store wins


@pytest.mark.parametrize(
    "bad", [f"postgresql://ana:{SECRET}@db/recall?no_such_option=1", f"host=db password={SECRET} stray"]
)
def test_a_malformed_connection_string_is_refused_without_quoting_it(bad: str, monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(ConfigError) as refused:
        RecallConfig(store=bad if bad.startswith("postgresql://") else None)
        monkeypatch.setenv(ENVIRONMENT, bad)
        RecallConfig()
    assert SECRET not in str(refused.value) and refused.value.__cause__ is None
