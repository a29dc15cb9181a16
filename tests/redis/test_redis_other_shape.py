"""`workbench --persist redis://…` started with another mode than the histories were saved under keeps
their lists on the server, not resumed and said in the header, until a start in their mode resumes them
or a forget deletes them (it used to delete them at that start), on a real Redis server."""

from __future__ import annotations

import secrets
from pathlib import Path

import pytest

from tests.redis.server import RedisServer
from workbench.persist.redis_histories import RedisHistories
from workbench.persist.sessions import DIRECTORY, PersistedSessions
from workbench.runtime import Mode, ModelConfig, build_models
from workbench.runtime.agents import AgentRuntime
from workbench.session.assemble import assemble

KEPT = "kept, not resumed: 2 message(s) saved under manual mode, recall off"


def started(data: Path, server: RedisServer, mode: Mode = Mode.MANUAL) -> AgentRuntime:
    """What `workbench --persist redis://… --mode <mode>` assembles."""
    persisted = PersistedSessions(data / DIRECTORY)
    redis = RedisHistories(persisted, server.url)
    return assemble(build_models(ModelConfig()), persisted=persisted, redis=redis, mode=mode).runtime


async def quit_(runtime: AgentRuntime) -> None:
    assert isinstance(runtime.histories, RedisHistories)
    await runtime.histories.aclose()
    runtime.histories.persisted_sessions.close()


def data_holding(data: Path, value: str) -> list[str]:
    return [p.name for p in sorted(data.rglob("*")) if p.is_file() and value.encode() in p.read_bytes()]


async def test_a_start_in_another_mode_keeps_the_lists_and_the_original_mode_resumes_them(tmp_path, redis_server):
    value = f"Contoso-{secrets.token_hex(4)}"
    first = started(tmp_path, redis_server)
    assert (await first.ask("support", f"customer={value}")).ok
    await quit_(first)

    second = started(tmp_path, redis_server, Mode.PROVIDER)
    assert second.history("support") == []
    assert f"resumed: 0 message(s), 1 fact(s); {KEPT} (start with those options to resume them)" in (
        second.status.summary
    )
    remembered = await second.remembered()
    [system] = [s for s in remembered.systems if s.name.startswith("agent sessions on ")]
    kept = [i for i in system.items if i.kind == "history" and "kept, not resumed" in i.description]
    assert len(kept) == 1 and kept[0].description.startswith("the support agent's history saved under manual mode")
    assert (await second.ask("logs", "where are the logs?")).ok
    await quit_(second)

    third = started(tmp_path, redis_server)
    assert (third.history("support")[0].text or "").endswith(f"customer={value}")
    assert "resumed: 2 message(s), 1 fact(s); kept, not resumed: 2 message(s) saved under provider mode" in (
        third.status.summary
    )
    await quit_(third)


@pytest.mark.parametrize("key", ["customer", None], ids=["one-key", "everything"])
async def test_a_forget_in_another_mode_deletes_the_kept_lists_that_hold_its_value(tmp_path, redis_server, key):
    value = f"Zoë-{secrets.token_hex(4)}"
    first = started(tmp_path, redis_server)
    assert (await first.ask("logs", "module=Billing")).ok  # before it: no customer in the logs list
    assert (await first.ask("support", f"customer={value}")).ok
    await quit_(first)

    second = started(tmp_path, redis_server, Mode.PROVIDER)
    assert "kept, not resumed: 4 message(s)" in second.status.summary
    report = await second.forget(key)
    assert report.failures == {}, report.failures
    redis_server.server.save()
    assert redis_server.holding([value]) == {}
    assert data_holding(tmp_path, value) == []
    left = [k.decode() for k in redis_server.server.keys("*")]
    assert len(left) == (1 if key else 0)  # the logs agent's list held no customer
    assert (KEPT in second.status.summary) == (key is not None)
    await quit_(second)
