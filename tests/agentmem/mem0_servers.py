"""Loopback servers Mem0 talks to: the chat server answers Mem0's extraction prompt as an ideal
extractor (exactly the user's `key=value` declarations, nothing invented) and the agents' turns as
the built-in script; the embeddings server answers with the lexical embedder's vectors."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from tests.support.embeddings_server import EmbeddingsState, embeddings_server
from tests.support.openai_server import Canned, LoopbackOpenAI
from workbench.memory.contract import parse_message

EXTRACTOR_MARK = "Memory Extractor"
_NEW_MESSAGES = re.compile(r"## New Messages\n(.*?)\n\n## Observation Date", re.S)
_SPEAKER = re.compile(r"^(user|assistant|system): ", re.M)


def user_texts(new_messages: str) -> list[str]:
    """The user's turns in Mem0's "role: content" transcript (a turn may span lines)."""
    parts = _SPEAKER.split(new_messages)
    return [parts[i + 1] for i in range(1, len(parts) - 1, 2) if parts[i] == "user"]


def extraction(body: dict[str, Any]) -> Canned | None:
    """Mem0's extraction request answered with one memory per declaration; other requests fall through."""
    messages = body.get("messages", [])
    if not messages or EXTRACTOR_MARK not in str(messages[0].get("content", "")):
        return None
    found = _NEW_MESSAGES.search(str(messages[-1].get("content", "")))
    texts = user_texts(found.group(1)) if found else []
    declared = [(k, v) for text in texts for k, v in parse_message(text).declarations.items()]
    memory = [{"id": str(i), "text": f"The user's {key} is {value}"} for i, (key, value) in enumerate(declared)]
    return Canned(text=json.dumps({"memory": memory}))


@dataclass
class Mem0Servers:
    chat: LoopbackOpenAI
    embeddings_url: str
    embeddings: EmbeddingsState

    def extraction_requests(self) -> list[dict[str, Any]]:
        return [r for r in self.chat.requests if EXTRACTOR_MARK in str(r["messages"][0].get("content", ""))]


@contextmanager
def mem0_servers() -> Iterator[Mem0Servers]:
    with LoopbackOpenAI() as chat, embeddings_server() as (url, state):
        chat.state.responder = extraction
        yield Mem0Servers(chat, url, state)
