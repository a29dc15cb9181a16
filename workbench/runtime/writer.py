"""Writers propose fact candidates from the current user message only; the host verifies them.

The model writer can carry its JSON in four ways, because servers differ in what they accept:
structured output (`json_schema`), JSON mode with the schema (`json_object_schema`, the llama.cpp
family's way to constrain decoding), JSON mode (`json_object`, schema in the instructions only), or
plain text (`prompt`, one code fence tolerated). `auto` starts with `json_schema` and steps down, in
that order, when the server rejects the request format itself. Only the transport changes: the host's verification of a
batch is the same whichever format carried it, and a batch that fails it is rejected, never repaired.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol

from agent_framework import Agent, SupportsChatGetResponse
from pydantic import Field, ValidationError, create_model

from workbench.memory import Contract, Extraction, FactCandidate, declared_candidates
from workbench.runtime.bounds import ReplyBound, writer_max_tokens
from workbench.runtime.calls import CallLog, RecordingMiddleware
from workbench.runtime.config import WriterFormat
from workbench.runtime.failures import CONTENT_FILTERED, ReplyCutOff, ReplyFiltered, rejects_request_format
from workbench.text import clip

if TYPE_CHECKING:
    from workbench.runtime.models import ModelSet


def writer_instructions(contract: Contract) -> str:
    """What the writer model is told: the contract's keys and how many facts a message may carry."""
    return f"""You are the writer agent of a controlled working memory.
Read only the user message you are given. Return every explicit key=value declaration in it, and nothing else.
- Declarations are separated by semicolons or newlines. A declaration is `key=value` where key is one of:
  {", ".join(contract.keys)}.
- Copy key and value exactly as written (value trimmed; it may contain '='). If a key is declared twice, keep
  only the last declaration.
- evidence is an exact quotation of the message that contains the value, for example `database=SQL Server 2022`.
- Never infer, translate, normalise or guess a fact from free text, questions or context. At most {contract.max_facts} \
facts.
Answer with JSON: {{"facts": [{{"key": ..., "value": ..., "evidence": ...}}]}}."""


def extraction_model(contract: Contract) -> type[Extraction]:
    """The writer's output shape with the contract's keys named in its schema (in the key's description,
    not as an enum: a key outside the contract is the host's named rejection, not a parse failure)."""
    keys = ", ".join(contract.keys)
    described = Field(description=f"One of the allowed keys ({keys}), exactly as the user wrote it.")
    candidate = create_model(
        "FactCandidate", __base__=FactCandidate, __doc__=FactCandidate.__doc__, key=(str, described)
    )
    facts = (list[candidate], ...)  # type: ignore[valid-type]
    return create_model("Extraction", __base__=Extraction, __doc__=Extraction.__doc__, facts=facts)


def _schema_note(schema: dict[str, Any]) -> str:
    return "\nThe JSON must match this JSON Schema exactly, with no other text:\n" + json.dumps(
        schema, separators=(",", ":")
    )


_FENCE = re.compile(r"\A\s*```(?:json)?[ \t]*\n(?P<body>.*?)\n?```\s*\Z", re.DOTALL)


_NEXT_FORMAT = {
    WriterFormat.JSON_SCHEMA: WriterFormat.JSON_OBJECT_SCHEMA,
    WriterFormat.JSON_OBJECT_SCHEMA: WriterFormat.JSON_OBJECT,
    WriterFormat.JSON_OBJECT: WriterFormat.PROMPT,
}


class MalformedOutput(Exception):
    """The writer's reply is not a valid Extraction. The host never repairs it."""


class Writer(Protocol):
    @property
    def label(self) -> str: ...

    @property
    def format_summary(self) -> str: ...

    async def propose(self, user_text: str) -> list[FactCandidate]: ...


class HostWriter:
    """Candidates read by the host from its own parse: zero model calls."""

    label = "host (deterministic parse, no model call)"
    format_summary = "host parse"

    async def propose(self, user_text: str) -> list[FactCandidate]:
        return declared_candidates(user_text)


def parse_extraction(text: str, *, fenced: bool = False) -> list[FactCandidate]:
    """Strict: the whole reply is the JSON (inside one code fence when `fenced` is allowed)."""
    if fenced and (match := _FENCE.match(text)):
        text = match["body"]
    try:
        return list(Extraction.model_validate_json(text).facts)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = clip(".".join(str(p) for p in first.get("loc", ())), 80) or "the reply"
        if first.get("type") == "json_invalid":
            raise MalformedOutput(f"the reply is not valid JSON ({first.get('msg', 'invalid')})") from exc
        raise MalformedOutput(
            f"{exc.error_count()} schema error(s), first at {where}: {first.get('msg', 'invalid')}"
        ) from exc


class ModelWriter:
    """A sessionless agent that sees the current user message and nothing else."""

    def __init__(
        self,
        client: SupportsChatGetResponse,
        calls: CallLog,
        model_label: str,
        *,
        timeout: float = 120.0,
        writer_format: WriterFormat = WriterFormat.JSON_SCHEMA,
        bound: ReplyBound | None = None,
        on_step_down: Callable[[str], object] | None = None,
        contract: Contract,
    ) -> None:
        """`contract`: the one memory holds, whose keys the writer is told and its schema names."""
        self._client = client
        self._instructions = writer_instructions(contract)
        self._extraction = extraction_model(contract)
        self._schema = self._extraction.model_json_schema()
        self._max_facts = contract.max_facts
        self._calls = calls
        self._model_label = model_label
        self._timeout = timeout
        self._negotiating = writer_format is WriterFormat.AUTO
        self.format = WriterFormat.JSON_SCHEMA if self._negotiating else writer_format
        self._bound = bound or ReplyBound()
        self._on_step_down = on_step_down
        self._agents: dict[WriterFormat, Agent] = {}

    @classmethod
    def on(
        cls,
        models: ModelSet,
        calls: CallLog,
        *,
        contract: Contract,
        timeout: float | None = None,
        writer_format: WriterFormat | None = None,
        on_step_down: Callable[[str], object] | None = None,
    ) -> ModelWriter:
        """The writer on `models`' writer model: its client, label and bound, and its timeout and format
        unless given."""
        return cls(
            models.writer_client,
            calls,
            models.writer_label,
            timeout=models.timeout if timeout is None else timeout,
            writer_format=models.writer_format if writer_format is None else writer_format,
            bound=models.bound,
            on_step_down=on_step_down,
            contract=contract,
        )

    @property
    def format_summary(self) -> str:
        return f"{self.format} (auto)" if self._negotiating else str(self.format)

    @property
    def label(self) -> str:
        return f"model ({self._model_label}; {self.format_summary})"

    def _agent(self, writer_format: WriterFormat) -> Agent:
        if writer_format not in self._agents:
            options: dict[str, Any] = {}
            instructions = self._instructions
            if writer_format is WriterFormat.JSON_SCHEMA:
                options["response_format"] = self._extraction
            else:
                instructions += _schema_note(self._schema)
                if writer_format is WriterFormat.JSON_OBJECT_SCHEMA:
                    # llama.cpp's server and llama-cpp-python constrain decoding to this schema.
                    options["response_format"] = {"type": "json_object", "schema": self._schema}
                elif writer_format is WriterFormat.JSON_OBJECT:
                    options["response_format"] = {"type": "json_object"}
            self._agents[writer_format] = Agent(
                self._client,
                instructions,
                name="writer",
                default_options=options,  # type: ignore[arg-type]
                middleware=[RecordingMiddleware(self._calls, "writer", self._model_label, timeout=self._timeout)],
            )
        return self._agents[writer_format]

    async def propose(self, user_text: str) -> list[FactCandidate]:
        while True:
            try:
                return await self._propose(user_text, self.format)
            except Exception as exc:
                following = _NEXT_FORMAT.get(self.format)
                if not (self._negotiating and following and rejects_request_format(exc)):
                    raise
                rejected, self.format = self.format, following
                if self._on_step_down is not None:
                    self._on_step_down(
                        f"the server rejected the writer's {rejected} request format; using {following} "
                        "from now on (the host's checks are unchanged)"
                    )

    async def _propose(self, user_text: str, writer_format: WriterFormat) -> list[FactCandidate]:
        limit = writer_max_tokens(user_text, self._max_facts)
        try:
            options: Any = self._bound.options(limit)  # ChatOptions is a TypedDict; these are its keys
            response = await self._agent(writer_format).run(user_text, options=options)
        except ReplyCutOff as exc:
            raise MalformedOutput(
                f"the writer's reply was cut off at {limit:,} tokens, more than an extraction of this message "
                "needs (finish_reason=length): the model rambled instead of answering with the JSON"
            ) from exc
        except ReplyFiltered as exc:
            raise MalformedOutput(CONTENT_FILTERED) from exc
        return parse_extraction(response.text or "", fenced=writer_format is WriterFormat.PROMPT)
