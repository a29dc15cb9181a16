from collections.abc import Iterator

import pytest

from tests.redis.server import RedisServer, start, stop


@pytest.fixture(scope="module")
def module_server(tmp_path_factory) -> Iterator[RedisServer]:
    server = start(tmp_path_factory.mktemp("redis"))
    yield server
    stop(server)


@pytest.fixture
def redis_server(module_server: RedisServer) -> RedisServer:
    """The module's server, emptied (its files still hold what earlier tests wrote, under other values)."""
    module_server.server.flushall()
    return module_server
