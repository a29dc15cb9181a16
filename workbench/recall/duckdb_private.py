"""The recall DuckDB store on the product's own connection (`workbench.recall.duckdb_file.connect`),
holding `PrivateFiles` for as long as it is open: every file DuckDB writes meanwhile is the user's only."""

from __future__ import annotations

import duckdb

from workbench.files import PrivateFiles
from workbench.recall.duckdb_search import RecallDuckDBStore


class PrivateDuckDBStore(RecallDuckDBStore):
    """The recall DuckDB store on a connection made for it, holding `PrivateFiles` from its creation
    until it is closed."""

    def __init__(self, connection: duckdb.DuckDBPyConnection) -> None:
        PrivateFiles.acquire()
        self._private = True
        self._own_connection = connection
        try:
            super().__init__(client=connection)
        except BaseException:
            self._release()
            raise
        # Framework private: the connection is the store's alone, so the framework wraps each upsert
        # in a transaction and closes the connection with the store, as it does with one it opened.
        self._client.owned = True

    def _release(self) -> None:
        if self._private:
            self._private = False
            PrivateFiles.release()

    def close_now(self) -> None:
        """Closed without an event loop, when no operation runs on it (a session closed by its sync
        `close`, a start that failed after opening it): the connection closed and `PrivateFiles` let go.
        Closing the connection again (`aclose`) does nothing."""
        try:
            self._own_connection.close()
        finally:
            self._release()

    async def aclose(self) -> None:
        try:
            await super().aclose()
        finally:
            self._release()
