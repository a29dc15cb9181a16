"""One-line explanations of failed model calls, naming what to check, with secrets removed."""

from __future__ import annotations

import os
import re

_KEY_PATTERN = re.compile(r"(sk-[A-Za-z0-9_\-*]{4,}|Bearer\s+\S+)")
_FORMAT_WORDS = ("response_format", "json_schema", "json_object", "structured output", "grammar")
CUT_OFF = (
    "the reply was cut off by the model's token limit (finish_reason=length): raise max_tokens, or the "
    "server's context size (llama.cpp --ctx-size, Ollama num_ctx, vLLM --max-model-len)"
)


class ReplyCutOff(Exception):
    """A model reply ended at the token limit: it is incomplete and is not kept."""

    def __init__(self) -> None:
        super().__init__(CUT_OFF)


def rejects_request_format(exc: BaseException) -> bool:
    """Whether a server refused the request's response_format itself (not the model's output)."""
    return any(
        getattr(cause, "status_code", None) in (400, 415, 422, 500, 501)
        and any(word in str(cause).lower() for word in _FORMAT_WORDS)
        for cause in _chain(exc)
    )


def scrub_secrets(text: str, secrets: tuple[str, ...] = ()) -> str:
    """Remove API keys: the configured ones, the environment's, and anything shaped like one."""
    for secret in (*secrets, os.environ.get("OPENAI_API_KEY", "")):
        if secret and len(secret) >= 4:
            text = text.replace(secret, "[key hidden]")
    return _KEY_PATTERN.sub("[key hidden]", text)


def _chain(exc: BaseException) -> list[BaseException]:
    seen: list[BaseException] = []
    current: BaseException | None = exc
    while current is not None and current not in seen:
        seen.append(current)
        current = current.__cause__ or getattr(current, "inner_exception", None) or current.__context__
    return seen


def explain_failure(exc: BaseException, *, base_url: str | None = None, secrets: tuple[str, ...] = ()) -> str:
    """What went wrong, in one line. Looks at the whole cause chain without importing the SDK."""
    server = base_url or "the server"
    for cause in _chain(exc):
        name = type(cause).__name__
        status = getattr(cause, "status_code", None)
        if isinstance(cause, ReplyCutOff):
            line = CUT_OFF
        elif isinstance(cause, TimeoutError) or name == "APITimeoutError":
            line = "the model call timed out: raise --timeout, or check that the server is not overloaded"
        elif name == "APIConnectionError" and _unknown_host(cause):
            line = f"cannot resolve the host of {server}: check the name in --base-url / OPENAI_BASE_URL"
        elif name == "APIConnectionError":
            line = f"cannot reach {server}: check --base-url / OPENAI_BASE_URL and that the server is running"
        elif status in (401, 403):
            line = f"{server} refused the API key (HTTP {status}): check OPENAI_API_KEY"
        elif status == 404:
            line = f"{server} does not know this model or path (HTTP 404): check --model and --base-url"
        elif status == 429:
            line = f"{server} is rate limiting (HTTP 429) after the client's retries: wait, or lower the load"
        elif isinstance(status, int) and status >= 500:
            line = f"{server} failed (HTTP {status}): check the server's log"
        elif isinstance(status, int):
            line = f"{server} rejected the request (HTTP {status}): {_first_line(cause)}"
        else:
            continue
        return scrub_secrets(line, secrets)
    return scrub_secrets(f"{type(exc).__name__}: {_first_line(exc)}", secrets)


def _unknown_host(exc: BaseException) -> bool:
    words = ("name or service not known", "nodename nor servname", "getaddrinfo", "no address associated")
    return any(word in str(cause).lower() for cause in _chain(exc) for word in words)


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return text[0][:300] if text else "no details"
