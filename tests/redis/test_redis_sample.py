"""Agent Framework's published Redis sample (`02-agents/conversations/redis_history_provider.py`) as a
user loads it, its model replaced by the built-in scripted one: as published, agent-framework-redis
refuses it while it loads, and the workbench says in one line what the provider needs; with the
`application_id` it asks for, the agent's history is recognised, listed with what it holds, and the one
forget takes the value off the server (checked by reading the server, and its files byte by byte)."""

from __future__ import annotations

import importlib.metadata
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from agent_framework_redis import RedisHistoryProvider

from tests.redis.server import RedisServer
from tests.test_startup import HANG
from workbench.loading import LoadFailed, from_objects

# The sample's own lines (its REDIS_URL, provider and agent), with the scripted client for OpenAIChatClient().
SAMPLE = """
import os

from agent_framework import Agent
from agent_framework.redis import RedisHistoryProvider

from workbench import ScriptedChatClient

REDIS_URL = os.getenv("REDIS_URL", "redis://localhost:6379")

redis_provider = RedisHistoryProvider(
    source_id="redis_basic_chat",
    redis_url=REDIS_URL,{added}
)

agent = Agent(
    client=ScriptedChatClient(),
    name="RedisBot",
    instructions="You are a helpful assistant that remembers our conversation using Redis.",
    context_providers=[redis_provider],
)
"""
REFUSAL = "ValueError: application_id must be a non-empty string when key_format='scoped'"
VALUE = "Contoso Ltd 7731"
# One turn of a user's session, as the TUI asks it (the facts go with the process; the history stays on the server).
TURN = f"""
import asyncio, sys
from workbench.cli.configs import model_config
from workbench.cli.parser import parse
from workbench.cli.start import load_agents, session_start
args = parse(sys.argv[1:])
runtime = session_start(args, model_config(args), load_agents(args))().runtime
assert asyncio.run(runtime.ask("RedisBot", "customer={VALUE}")).ok
"""


def sample(folder: Path, added: str = "") -> None:
    (folder / "sample.py").write_text(SAMPLE.format(added=added))


def workbench(folder: Path, server: RedisServer, *words: str, script: str = "") -> subprocess.CompletedProcess[str]:
    """`workbench WORDS` (or `script` with them) run in `folder`, with the sample's REDIS_URL set to `server`."""
    env = {**os.environ, "REDIS_URL": server.url, "WORKBENCH_DATA_DIR": str(folder / "data")}
    command = [sys.executable, *(["-c", script] if script else ["-m", "workbench"]), *words]
    return subprocess.run(
        command, env=env, cwd=folder, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=HANG
    )


def lists_holding(server: RedisServer, value: str) -> list[str]:
    """Every key on the server whose list holds `value`, read from the server itself."""
    keys = sorted(k.decode() for k in server.server.keys("*"))
    return [k for k in keys if any(value.encode() in item for item in server.server.lrange(k, 0, -1))]


def test_the_sample_as_published_is_refused_in_one_line_saying_what_the_provider_needs(tmp_path, redis_server):
    sample(tmp_path)
    version = importlib.metadata.version("agent-framework-redis")
    as_folder = ((str(tmp_path),), str(tmp_path / "sample.py"))  # the folder DevUI would serve
    for words, where in ((("--agents", "sample:agent"), "sample:agent"), as_folder):
        result = workbench(tmp_path, redis_server, "remembered", *words)
        assert (result.returncode, result.stdout) == (2, ""), result.stderr
        said = (
            f"{where}: RedisHistoryProvider (agent-framework-redis {version}) needs application_id=... "
            "for its scoped keys, or key_format='legacy' (deprecated); the framework's sample predates this "
            f"({REFUSAL})"
        )
        # A folder loads what loads: its entry said as not loaded, then that nothing loaded (exit 2).
        nothing = f"workbench: {tmp_path}: nothing loaded: 1 entry could not be loaded (each said above)\n"
        assert result.stderr == (
            f"workbench: {said}\n" if words[0] == "--agents" else f"workbench: not loaded: {said}\n{nothing}"
        )


def test_the_hint_is_added_to_that_refusal_of_the_provider_only():
    def provider(application_id: str | None = None, tenant_id: str | None = None) -> object:
        return RedisHistoryProvider(
            source_id="redis_basic_chat",
            redis_url="redis://localhost:6379",
            application_id=application_id,
            tenant_id=tenant_id,
        )

    def same_words_elsewhere() -> object:
        raise ValueError("application_id must be a non-empty string when key_format='scoped'")

    def problem(factory: object) -> str:
        with pytest.raises(LoadFailed) as failed:
            from_objects([factory])
        return failed.value.problem

    assert problem(provider).startswith("RedisHistoryProvider (agent-framework-redis ")
    assert problem(provider).endswith(f"the framework's sample predates this ({REFUSAL})")
    assert problem(same_words_elsewhere) == REFUSAL  # the user's own code: its words as they are
    tenant = problem(lambda: provider(application_id="contoso-support", tenant_id=""))
    assert tenant == "ValueError: tenant_id must be non-empty when supplied"  # another refusal: nothing added


@pytest.mark.parametrize(
    ("added", "keys", "scope"),
    [
        (
            'application_id="contoso-support"',
            "chat_messages|v2|~none|contoso-support|~none|redis_basic_chat|",
            "application contoso-support",
        ),
        ('key_format="legacy"', "chat_messages:", "legacy keys"),  # deprecated: one list per session id, any agent's
    ],
    ids=["application_id", "legacy"],
)
def test_the_sample_made_to_load_is_recognised_listed_and_forgotten_on_the_server(
    tmp_path, redis_server, added, keys, scope
):
    sample(tmp_path, f"\n    {added},")
    turn = workbench(tmp_path, redis_server, "--agents", "sample:agent", script=TURN)
    assert turn.returncode == 0, turn.stderr
    [held] = lists_holding(redis_server, VALUE)
    assert held.startswith(keys)

    listed = workbench(tmp_path, redis_server, "remembered", "--json", "--agents", "sample:agent")
    assert listed.returncode == 0, listed.stderr
    [system] = [s for s in json.loads(listed.stdout)["systems"] if s["name"] == "RedisBot's Redis history"]
    assert system["description"] == f"RedisHistoryProvider ({scope}), one list per session"
    [item] = [i for i in system["items"] if i["kind"] == "history"]
    assert item["name"] == held and f"customer={VALUE}" in item["content"] and "customer" in item["keys"]

    forgot = workbench(tmp_path, redis_server, "forget", "customer", "--agents", "sample:agent", "--yes")
    assert forgot.returncode == 0, forgot
    # One list deleted; the server's two files counted apart (they were counted as lists: "3 session list(s)").
    said = "  RedisBot's Redis history: 1 session list(s) deleted; the server's append-only file and snapshot rewritten"
    assert said in forgot.stdout.splitlines(), forgot.stdout
    assert lists_holding(redis_server, VALUE) == [] and redis_server.server.keys("*") == []
    assert redis_server.holding([VALUE]) == {}  # nor the append-only file or a snapshot
