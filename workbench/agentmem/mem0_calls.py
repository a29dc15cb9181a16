"""Mem0's own model calls in the call log. Mem0 calls the OpenAI SDK itself (chat completions to
extract memories and decide how to store them, embeddings to find them), outside Agent Framework's
middleware, from worker threads. Its two clients are wrapped here: while an agent's Mem0 provider runs
(`recording_for`), each request is recorded in that agent's call log, with the turn that caused it
and the usage the server reported ("unknown" when it reported none), as "Mem0" and "Mem0 embeddings"
calls. Outside a turn (a forget, the view) Mem0 makes no model call, and nothing is recorded."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from types import SimpleNamespace
from typing import Any

from workbench.runtime.calls import CallLog, recorder_of
from workbench.runtime.usage import Usage, usage_from_details

# The log of the agent whose turn Mem0 is serving; copied into the threads Mem0 calls from
# (asyncio.to_thread runs a call in a copy of the caller's context).
_recording: ContextVar[CallLog | None] = ContextVar("mem0_recording", default=None)


@contextmanager
def recording_for(agent: object) -> Iterator[None]:
    """Mem0's calls made inside are recorded in `agent`'s call log (nothing when it records none)."""
    recorder = recorder_of(agent)
    token = _recording.set(recorder.log if recorder is not None else None)
    try:
        yield
    finally:
        _recording.reset(token)


class RecordedOpenAI:
    """The two methods of an OpenAI client Mem0 calls (`chat.completions.create`, `embeddings.create`),
    each request recorded while a turn is being served."""

    def __init__(self, client: Any, model: str, *, purpose: str) -> None:
        self._client = client
        self._model = model
        self._purpose = purpose
        self.chat = SimpleNamespace(completions=SimpleNamespace(create=self._chat))
        self.embeddings = SimpleNamespace(create=self._embed)

    def _chat(self, **params: Any) -> Any:
        sent = [(str(m.get("role", "")), _text(m.get("content"))) for m in params.get("messages", [])]
        return self._recorded(self._client.chat.completions.create, params, sent, _chat_reply, _chat_usage)

    def _embed(self, **params: Any) -> Any:
        texts = params.get("input", [])
        sent = [("input", _text(t)) for t in (texts if isinstance(texts, list) else [texts])]
        return self._recorded(self._client.embeddings.create, params, sent, lambda _: "", _embeddings_usage)

    def _recorded(
        self, create: Any, params: dict[str, Any], sent: list[tuple[str, str]], reply: Any, usage: Any
    ) -> Any:
        log = _recording.get()
        if log is None:
            return create(**params)
        record = log.start(self._purpose, self._model, "", sent)
        try:
            response = create(**params)
        except BaseException as exc:
            log.fail(record, exc)
            raise
        record.reply = reply(response)
        log.settle(record, usage(getattr(response, "usage", None)))
        return response


def _text(content: Any) -> str:
    """A message's content as text: a string, or the text parts of a list of parts."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return " ".join(str(p.get("text", "")) for p in content if isinstance(p, dict) and p.get("type") == "text")
    return "" if content is None else str(content)


def _chat_reply(response: Any) -> str:
    choices = getattr(response, "choices", None) or []
    return (getattr(choices[0].message, "content", None) or "") if choices else ""


def _chat_usage(usage: Any) -> Usage | None:
    if usage is None:
        return None
    return usage_from_details(
        {
            "input_token_count": getattr(usage, "prompt_tokens", None),
            "output_token_count": getattr(usage, "completion_tokens", None),
        }
    )


def _embeddings_usage(usage: Any) -> Usage | None:
    """An embeddings request's reported input tokens (it has no output), as recall counts them."""
    tokens = getattr(usage, "prompt_tokens", None) if usage is not None else None
    return usage_from_details({"input_token_count": tokens, "output_token_count": 0}) if tokens is not None else None
