"""Writers propose fact candidates from the current user message only; the host verifies them."""

from __future__ import annotations

import asyncio
from typing import Protocol

from agent_framework import Agent, SupportsChatGetResponse
from pydantic import ValidationError

from workbench.memory import ALLOWED_KEYS, MAX_FACTS, Extraction, FactCandidate, declared_candidates
from workbench.runtime.calls import CallLog, RecordingMiddleware

WRITER_INSTRUCTIONS = f"""You are the writer agent of a controlled working memory.
Read only the user message you are given. Return every explicit key=value declaration in it, and nothing else.
- Declarations are separated by semicolons or newlines. A declaration is `key=value` where key is one of:
  {", ".join(sorted(ALLOWED_KEYS))}.
- Copy key and value exactly as written (value trimmed; it may contain '='). If a key is declared twice, keep
  only the last declaration.
- evidence is an exact quotation of the message that contains the value, for example `database=SQL Server 2022`.
- Never infer, translate, normalise or guess a fact from free text, questions or context. At most {MAX_FACTS} facts.
Answer with JSON: {{"facts": [{{"key": ..., "value": ..., "evidence": ...}}]}}."""


class MalformedOutput(Exception):
    """The writer's reply is not a valid Extraction. The host never repairs it."""


class Writer(Protocol):
    label: str

    async def propose(self, user_text: str) -> list[FactCandidate]: ...


class HostWriter:
    """Candidates read by the host from its own parse: zero model calls."""

    label = "host (deterministic parse, no model call)"

    async def propose(self, user_text: str) -> list[FactCandidate]:
        return declared_candidates(user_text)


class ModelWriter:
    """A sessionless agent with structured output. It sees the current user message and nothing else."""

    def __init__(
        self, client: SupportsChatGetResponse, calls: CallLog, model_label: str, *, timeout: float = 120.0
    ) -> None:
        self.label = f"model ({model_label})"
        self._timeout = timeout
        self._agent = Agent(
            client,
            WRITER_INSTRUCTIONS,
            name="writer",
            default_options={"response_format": Extraction},
            middleware=[RecordingMiddleware(calls, "writer", model_label)],
        )

    async def propose(self, user_text: str) -> list[FactCandidate]:
        async with asyncio.timeout(self._timeout):
            response = await self._agent.run(user_text)
        try:
            extraction = response.value
        except (ValidationError, ValueError) as exc:
            raise MalformedOutput(_summarize_error(exc)) from exc
        if not isinstance(extraction, Extraction):
            raise MalformedOutput("the reply carried no extraction")
        return list(extraction.facts)


def _summarize_error(exc: Exception) -> str:
    if isinstance(exc, ValidationError):
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first.get("loc", ())) or "the reply"
        return f"{exc.error_count()} schema error(s), first at {where}: {first.get('msg', 'invalid')}"
    return f"the reply is not valid JSON ({str(exc).splitlines()[0][:160]})"
