"""How a PostgreSQL recall store is named: a postgresql:// URL, or the environment variable. Light to
import: asking whether one is configured must not load psycopg and the framework's PostgreSQL
integration (`postgres_store`), about 440 ms at every start, recall on or off."""

URL_PREFIXES = ("postgresql://", "postgres://")
ENVIRONMENT = "WORKBENCH_RECALL_POSTGRES"


def is_connection_url(store: str) -> bool:
    return store.startswith(URL_PREFIXES)
