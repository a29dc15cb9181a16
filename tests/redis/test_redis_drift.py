"""`workbench drift PATH` over a user's folder as a new user has it: Agent Framework's published file
history and Redis history samples (`02-agents/conversations/file_history_provider.py` and
`redis_history_provider.py`), each with its agent at module level and only its chat client edited to an
OpenAI-compatible server on loopback (the Redis one with the `application_id` agent-framework-redis asks
for). The lab runs them on stores of its own: afterwards every byte and mode of the user's history folder
and every key of the user's Redis server are as they were, no key of the lab's is left, and the server's
files no longer hold the story. The report names each agent's own client and model, says a model
answered, and counts what the lab's copies held."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path

import redis.asyncio as aioredis
from agent_framework import FileHistoryProvider, Message
from agent_framework_redis import RedisHistoryProvider

from tests.redis.server import RedisServer
from tests.test_startup import HANG

FILE_HISTORY = '''
import os
from pathlib import Path
from typing import Annotated

from agent_framework import Agent, FileHistoryProvider, tool
from agent_framework.openai import OpenAIChatCompletionClient
from pydantic import Field


@tool(approval_mode="never_require")
def lookup_weather(
    location: Annotated[str, Field(description="The city to look up weather for.")],
) -> str:
    """Return a deterministic weather report for a city."""
    weather_reports = {
        "Seattle": "Seattle is rainy with a high of 13C.",
        "Amsterdam": "Amsterdam is cloudy with a high of 16C.",
    }
    return weather_reports.get(location, f"{location} is sunny with a high of 20C.")


storage_directory = Path(os.environ["SESSIONS"])
agent = Agent(
    client=OpenAIChatCompletionClient(model="sample-model", base_url=os.environ["LOOPBACK"], api_key="loopback"),
    name="FileHistoryAgent",
    instructions=(
        "You are a helpful assistant, use the lookup_weather tool for weather questions and "
        "answer with the tool result in one sentence."
    ),
    tools=[lookup_weather],
    context_providers=[FileHistoryProvider(storage_directory)],
    default_options={"store": False},
)
'''
REDIS_HISTORY = """
import os

from agent_framework import Agent
from agent_framework.openai import OpenAIChatCompletionClient
from agent_framework.redis import RedisHistoryProvider

REDIS_URL = os.getenv("REDIS_URL", "redis://localhost:6379")

redis_provider = RedisHistoryProvider(
    source_id="redis_basic_chat",
    redis_url=REDIS_URL,
    application_id="sample-app",
)

agent = Agent(
    client=OpenAIChatCompletionClient(model="sample-model", base_url=os.environ["LOOPBACK"], api_key="loopback"),
    name="RedisBot",
    instructions="You are a helpful assistant that remembers our conversation using Redis.",
    context_providers=[redis_provider],
)
"""
EARLIER = "An earlier conversation of the user's: customer=Fabrikam 4410"
ROWS = "yours:FileHistoryAgent,yours:FileHistoryAgent+facts,yours:RedisBot,yours:RedisBot+facts"


def _user_folder(tmp_path: Path, server: RedisServer) -> tuple[Path, Path]:
    """The user's agents folder and the history folder, each store already holding a conversation."""
    agents, sessions = tmp_path / "agents", tmp_path / "sessions"
    agents.mkdir()
    (agents / "file_history_provider.py").write_text(FILE_HISTORY)
    (agents / "redis_history_provider.py").write_text(REDIS_HISTORY)
    earlier = [Message(role="user", contents=[EARLIER])]

    async def converse() -> None:
        await FileHistoryProvider(sessions).save_messages("earlier-session", earlier)
        client = aioredis.from_url(server.url, decode_responses=True)
        try:
            redis = RedisHistoryProvider(source_id="redis_basic_chat", redis_client=client, application_id="sample-app")
            await redis.save_messages("earlier-session", earlier)
        finally:
            await client.aclose()

    asyncio.run(converse())
    return agents, sessions


def _files(folder: Path) -> dict[str, tuple[int, bytes]]:
    """Every file and folder under `folder`, with its mode and (a file's) bytes."""
    return {
        str(p.relative_to(folder)): (p.stat().st_mode, p.read_bytes() if p.is_file() else b"")
        for p in sorted(folder.rglob("*"))
    }


def _keys(server: RedisServer) -> dict[bytes, list[bytes]]:
    return {key: server.server.lrange(key, 0, -1) for key in sorted(server.server.keys("*"))}


def _drift(
    tmp_path: Path, agents: Path, server: RedisServer, loopback_url: str, *words: str
) -> subprocess.CompletedProcess[str]:
    env = {
        **os.environ,
        "REDIS_URL": server.url,
        "LOOPBACK": loopback_url,
        "SESSIONS": str(tmp_path / "sessions"),
        "WORKBENCH_DATA_DIR": str(tmp_path / "data"),
    }
    return subprocess.run(
        [sys.executable, "-m", "workbench", "drift", str(agents), *words],
        env=env,
        cwd=tmp_path,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=HANG,
    )


def test_the_lab_leaves_the_users_history_folder_and_redis_keys_exactly_as_they_were(tmp_path, redis_server, loopback):
    agents, sessions = _user_folder(tmp_path, redis_server)
    folder_before, keys_before = _files(sessions), _keys(redis_server)
    assert len(folder_before) == 1 and len(keys_before) == 1

    ran = _drift(tmp_path, agents, redis_server, loopback.base_url, "--json", "--policies", ROWS)

    assert ran.returncode == 0, ran.stderr
    assert _files(sessions) == folder_before  # no story file, no lock file, no mode changed
    assert _keys(redis_server) == keys_before  # no story key: the lab's are deleted, verified
    assert redis_server.holding(["Contoso"]) == {}  # and the server's files were rewritten without them
    assert (
        "stores of the lab's own (copies of their folders and a key prefix of the lab's on their Redis server), "
        "removed afterwards; your own stores are not written"
    ) in ran.stderr
    report = json.loads(ran.stdout)
    for policy in report["policies"]:
        assert all(removal["verified"] for removal in policy["removed"]), policy["removed"]
    redis_row = next(p for p in report["policies"] if p["name"] == "yours:RedisBot")
    [removed] = redis_row["removed"]
    assert "none left (read again)" in removed["what"] and "append-only file" in removed["what"]


def test_the_report_names_each_agents_own_client_and_says_a_model_answered(tmp_path, redis_server, loopback):
    agents, _ = _user_folder(tmp_path, redis_server)
    ran = _drift(tmp_path, agents, redis_server, loopback.base_url, "--json", "--policies", ROWS)
    assert ran.returncode == 0, ran.stderr
    report = json.loads(ran.stdout)
    turns = report["turns"]
    assert report["live"] is True  # the loopback server answered, not the built-in model
    for policy in report["policies"]:
        [agent] = policy["agents"]
        assert agent["client"] == "OpenAIChatCompletionClient sample-model"
        assert policy["live"] is True
        assert policy["answered_by"] == [
            {"agent": agent["name"], "model": "OpenAIChatCompletionClient sample-model", "calls": turns, "live": True}
        ]
        assert report["accounting"][policy["name"]]["retained_history"]["messages"] > 0
    assert {r["model"] for r in loopback.requests} == {"sample-model"}
    memories = {p["name"]: p["agents"][0]["memories"] for p in report["policies"]}
    assert memories["yours:FileHistoryAgent"][0].startswith(
        f"FileHistoryProvider: on a copy of {tmp_path / 'sessions'}"
    )
    assert "under the lab's key prefix 'workbench-drift-" in memories["yours:RedisBot"][0]
    # The file history's bytes are its copy's, the Redis history keeps none on disk.
    assert report["accounting"]["yours:FileHistoryAgent"]["retained_history"]["bytes_on_disk"] > len(EARLIER)
    assert report["accounting"]["yours:RedisBot"]["retained_history"]["bytes_on_disk"] is None


def test_the_text_report_names_the_clients_and_where_the_memories_were_kept(tmp_path, redis_server, loopback):
    agents, _ = _user_folder(tmp_path, redis_server)
    ran = _drift(tmp_path, agents, redis_server, loopback.base_url, "--policies", "full,yours:RedisBot")
    assert ran.returncode == 0, ran.stderr
    text = ran.stdout
    assert "your agents: their clients, what answered and where their memories were kept" in text
    assert "OpenAIChatCompletionClient sample-model" in text and "a model answered (live)" in text
    assert "RedisHistoryProvider: on unix://" in text
    # The answers are named by the model of each row, not the lab's alone.
    assert "what scripted (built-in; qualifies no model) answered" not in text
    assert "your agents': their own" in text
