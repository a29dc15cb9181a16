"""The built-in model: deterministic, offline, and honest about being a script.

Every reply is derived only from the request it receives (instructions, the working-memory
block, earlier messages, the question), so what an agent was sent is visible in what it says:
forget a fact and the answer changes; keep a stale value in history and the answer shows it.
It reports no token usage. It qualifies no model.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import re
from collections.abc import AsyncIterator, Awaitable, Mapping, Sequence
from typing import Any, ClassVar

from agent_framework import (
    BaseChatClient,
    ChatMiddlewareLayer,
    ChatResponse,
    ChatResponseUpdate,
    Content,
    FunctionInvocationLayer,
    Message,
    ResponseStream,
)
from agent_framework.observability import ChatTelemetryLayer

from workbench.memory import Extraction, declared_candidates, parse_declarations
from workbench.memory.prompt import BLOCK_END, BLOCK_START
from workbench.runtime.calls import as_sent

SCRIPTED_LABEL = "scripted (built-in; qualifies no model)"
# How Agent Framework's extracted memory opens its extraction and consolidation prompts (1.23 to 1.26).
EXTRACTION_PROMPT_START = "You extract durable memory candidates"
CONSOLIDATION_PROMPT_START = "You consolidate one topic memory file"
MAX_EXTRACTED = 5  # the extraction prompt's own limit
MEMORY_WRITE_TOOL = "file_memory_write"  # FileMemoryProvider's tool that writes a memory file (1.23)
_SPEAKER = re.compile(r"(?m)^(USER|ASSISTANT|SYSTEM|TOOL): ")

_FACT_LINE = re.compile(r'^- (?P<key>\w+) = (?P<value>"(?:[^"\\]|\\.)*") \(turn (?P<turn>\d+)\)$', re.MULTILINE)
_BLOCK = re.compile(re.escape(BLOCK_START) + r".*?" + re.escape(BLOCK_END), re.DOTALL)


def split_block(text: str) -> tuple[str | None, str]:
    """The last working-memory block in `text` (if any) and the text without blocks."""
    if BLOCK_START not in text:  # most history messages: no need for the two regular expressions
        return None, text.strip()
    blocks = _BLOCK.findall(text)
    return (blocks[-1] if blocks else None), _BLOCK.sub("", text).strip()


def facts_in_block(block: str) -> list[tuple[str, str]]:
    return [(m["key"], json.loads(m["value"])) for m in _FACT_LINE.finditer(block)]


def _persona(instructions: str) -> str:
    for persona in ("support", "logs", "summarizer", "writer"):
        if f"the {persona} agent" in instructions.lower():
            return persona
    return "assistant"


def _list(pairs: Sequence[tuple[str, str]]) -> str:
    return ", ".join(f"{k}={v}" for k, v in pairs)


def compose_reply(instructions: str, texts: Sequence[tuple[str, str]]) -> str:
    """A deterministic answer that says what the request (role, text pairs) contained."""
    block = None
    for _, text in texts:
        block = split_block(text)[0] or block
    # What the user wrote, without blocks; a message that was only a block is context, not a turn.
    said = [rest for role, text in texts if role == "user" and (rest := split_block(text)[1])]
    question = said[-1] if said else ""
    earlier = said[:-1]
    facts = facts_in_block(block) if block else []
    remembered = [(k, v) for text in earlier for k, v in parse_declarations(text).items()]
    # What this message declares is the newest word, as a real model would read it; memory itself
    # is updated only after the answer, so the block above still shows the values before it.
    declared = list(parse_declarations(question).items())
    persona = _persona(instructions)

    lines = [f"**{persona}** (scripted) on: {question[:120] or '(empty message)'}"]
    if block is None:
        lines.append("- Working memory: not in this request.")
    elif facts:
        lines.append(f"- Working memory (unverified, authorizes nothing): {_list(facts)}.")
    else:
        lines.append("- Working memory: empty.")
    if earlier:
        seen = f"; declarations seen there: {_list(remembered)}" if remembered else ""
        lines.append(f"- History: {len(earlier)} earlier user message(s){seen}.")
    else:
        lines.append("- History: none.")
    if declared:
        lines.append(f"- This message declares (newest, not yet verified): {_list(declared)}.")
    lines.append(_advice(persona, (dict(facts) or dict(remembered)) | dict(declared)))
    return "\n".join(lines)


def _advice(persona: str, facts: Mapping[str, str]) -> str:
    where = " / ".join(facts[k] for k in ("product", "module", "database", "environment") if k in facts)
    if persona == "logs":
        if "log" in facts:
            return f"- Logs: start with {facts['log']}" + (f" for {where}." if where else ".")
        return "- Logs: no log location is declared; declare one with log=PATH." + (
            f" Context: {where}." if where else ""
        )
    if persona == "support":
        constraint = f" Respect: {facts['constraint']}." if "constraint" in facts else ""
        target = f" for {where}" if where else ""
        return f"- Next step: reproduce the symptom{target} and collect logs.{constraint}"
    return "- No advice: this persona is not scripted."


def summarize(texts: Sequence[tuple[str, str]]) -> str:
    """A deterministic summary: the declarations found in user messages, last value per key, one
    `key=value` per line, so a rolling summary fed back in is read again the same way."""
    pairs: dict[str, str] = {}
    for role, text in texts:
        if role == "user":
            pairs.update(parse_declarations(split_block(text)[1]))
    lines = [f"{k}={v}" for k, v in pairs.items()] or ["no declarations yet"]
    return "\n".join(["Summary (scripted, unverified):", *lines])


def extract_memories(transcript: str) -> str:
    """An ideal extractor's answer to the extraction prompt: exactly the declarations of the USER turns
    of the transcript delta (working-memory blocks left out), one memory `key=value` per declaration
    under the topic `key`, nothing invented; the JSON says who extracted."""
    parts = _SPEAKER.split(transcript)
    said = [text for speaker, text in zip(parts[1::2], parts[2::2], strict=True) if speaker == "USER"]
    declared = [(k, v) for text in said for k, v in parse_declarations(split_block(text)[1]).items() if v]
    memories = [{"topic": k, "memory": f"{k}={v}"} for k, v in declared[:MAX_EXTRACTED]]
    return json.dumps({"memories": memories, "extractor": SCRIPTED_LABEL}, ensure_ascii=False)


def consolidate_memories(record: str) -> str:
    """An ideal consolidator's answer: the topic's memories with only the latest value of each declared
    key, duplicates dropped, the summary being the latest memory; the JSON says who consolidated."""
    try:
        memories = [m for m in json.loads(record).get("memories", []) if isinstance(m, str)]
    except (ValueError, AttributeError):
        memories = []
    latest: dict[str, str] = {}
    for memory in memories:
        declarations = parse_declarations(memory)
        latest[next(iter(declarations)) if len(declarations) == 1 else memory.casefold()] = memory
    kept = list(latest.values())
    summary = kept[-1] if kept else ""
    return json.dumps({"summary": summary, "memories": kept, "consolidator": SCRIPTED_LABEL}, ensure_ascii=False)


def scripted_reply(instructions: str, texts: Sequence[tuple[str, str]], *, structured: bool) -> str:
    """The whole scripted model as a function of the request: memory extraction or consolidation
    (Agent Framework's prompts, as a system message), writer JSON, summary, or an answer."""
    system = "\n".join([instructions, *(text for role, text in texts if role == "system")]).lstrip()
    user = [text for role, text in texts if role == "user"]
    if system.startswith(EXTRACTION_PROMPT_START):
        return extract_memories(user[-1] if user else "")
    if system.startswith(CONSOLIDATION_PROMPT_START):
        return consolidate_memories(user[-1] if user else "")
    if structured or _persona(instructions) == "writer":
        user = [text for role, text in texts if role == "user"]
        return Extraction(facts=declared_candidates(user[-1] if user else "")).model_dump_json()
    if _persona(instructions) == "summarizer":
        return summarize(texts)
    return compose_reply(instructions, texts)


def memory_writes(messages: Sequence[Message], options: Mapping[str, Any]) -> list[dict[str, str]]:
    """What a model that writes its own memory would write for this request: when it is offered
    Agent Framework's `file_memory_write` and the request ends with a user message, one memory file per
    key the message declares (`<key>.md` holding `key=value`); nothing once the write has run."""
    offered = {getattr(t, "name", None) for t in options.get("tools") or ()}
    if MEMORY_WRITE_TOOL not in offered or not messages or str(messages[-1].role) != "user":
        return []
    declared = parse_declarations(split_block(as_sent(messages[-1])[1])[1])
    return [
        {"file_name": f"{key}.md", "content": f"{key}={value}", "description": f"what the user declared for {key}"}
        for key, value in declared.items()
        if value
    ]


class RawScriptedChatClient(BaseChatClient):
    OTEL_PROVIDER_NAME: ClassVar[str] = "workbench.scripted"

    def __init__(self, *, delay: float = 0.0, uses_tools: bool = False, **kwargs: Any) -> None:
        """`delay` seconds pass before each streamed word (tests use it to interleave turns).
        `uses_tools`: it calls Agent Framework's memory-file tool when offered it (`memory_writes`), as a
        model that writes its own memory does; the built-in agents' script never does."""
        super().__init__(**kwargs)
        self.delay = delay
        self.uses_tools = uses_tools
        self._ids = itertools.count(1)

    def _reply(self, messages: Sequence[Message], options: Mapping[str, Any]) -> str:
        return scripted_reply(
            str(options.get("instructions") or ""),
            [as_sent(m) for m in messages],
            structured=options.get("response_format") is not None,
        )

    def _inner_get_response(
        self, *, messages: Sequence[Message], stream: bool, options: Mapping[str, Any], **kwargs: Any
    ) -> Awaitable[ChatResponse] | ResponseStream[ChatResponseUpdate, ChatResponse]:
        message_id = f"scripted-{next(self._ids)}"
        if self.uses_tools and (writes := memory_writes(messages, options)):
            calls = [
                Content.from_function_call(f"{message_id}-{i}", MEMORY_WRITE_TOOL, arguments=arguments)
                for i, arguments in enumerate(writes, 1)
            ]
            return self._function_calls(calls, message_id, stream, options)
        text = self._reply(messages, options)
        if stream:

            async def words() -> AsyncIterator[ChatResponseUpdate]:
                pieces = re.findall(r"\S+\s*|\s+", text)
                for i, piece in enumerate(pieces, 1):
                    await asyncio.sleep(self.delay)  # yields to the loop even without a delay, as a socket would
                    yield ChatResponseUpdate(
                        role="assistant",
                        contents=[Content.from_text(piece)],
                        message_id=message_id,
                        finish_reason="stop" if i == len(pieces) else None,
                    )

            return self._build_response_stream(words(), response_format=options.get("response_format"))

        async def whole() -> ChatResponse:
            await asyncio.sleep(self.delay)
            return ChatResponse(
                messages=[Message(role="assistant", contents=[Content.from_text(text)], message_id=message_id)],
                response_format=options.get("response_format"),
                finish_reason="stop",
            )

        return whole()

    def _function_calls(
        self, calls: list[Content], message_id: str, stream: bool, options: Mapping[str, Any]
    ) -> Awaitable[ChatResponse] | ResponseStream[ChatResponseUpdate, ChatResponse]:
        if stream:

            async def update() -> AsyncIterator[ChatResponseUpdate]:
                await asyncio.sleep(self.delay)
                yield ChatResponseUpdate(
                    role="assistant", contents=calls, message_id=message_id, finish_reason="tool_calls"
                )

            return self._build_response_stream(update(), response_format=options.get("response_format"))

        async def whole() -> ChatResponse:
            await asyncio.sleep(self.delay)
            message = Message(role="assistant", contents=calls, message_id=message_id)
            return ChatResponse(messages=[message], finish_reason="tool_calls")

        return whole()


class ScriptedChatClient(FunctionInvocationLayer, ChatMiddlewareLayer, ChatTelemetryLayer, RawScriptedChatClient):
    """The built-in model with the framework's standard layers, like any production client
    (`build_models` says whether its function-invocation loop runs)."""
