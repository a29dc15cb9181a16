"""One-line explanations of failed model calls, naming what to check, with secrets removed."""

from __future__ import annotations

import os
import re
from typing import Any
from urllib.parse import parse_qs, unquote, urlsplit

from workbench.memory.shown import quoted
from workbench.runtime.azure import SignIn
from workbench.runtime.deadline import CallTimedOut, refuses_format

# OpenAI keys, bearer headers, and JSON web tokens (what an Entra ID access token is).
_KEY_PATTERN = re.compile(r"(sk-[A-Za-z0-9_\-*]{4,}|Bearer\s+\S+|eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-.]+)")
_AZURE_DEPLOYMENT_PATH = re.compile(r"/openai/deployments/([^/?]+)/")
_ENTRA_ERRORS = ("ClientAuthenticationError", "CredentialUnavailableError")
CUT_OFF = (
    "the reply was cut off at the token limit (finish_reason=length): raise --max-tokens (the bound on "
    "each reply), or the server's context size (llama.cpp --ctx-size, Ollama num_ctx, vLLM --max-model-len)"
)


CONTENT_FILTERED = (
    "the provider's content filter withheld the reply (finish_reason=content_filter): nothing was kept; "
    "rephrase the message, or check the deployment's content filter"
)


class MemoryUnavailable(Exception):
    """A memory the agent runs could not be used (its store's server went away mid-run): the message is
    the whole line to show, naming the store and its driver's own reason."""


class UnusableReply(Exception):
    """The server answered the call, but what it sent is not an answer to keep."""

    def explain(self, server: str) -> str:
        return str(self)


class ReplyFiltered(UnusableReply):
    """A model reply was stopped by the provider's content filter: it is not an answer and is not kept."""

    def __init__(self) -> None:
        super().__init__(CONTENT_FILTERED)


LOOPED = (
    "the reply was cut off at the token limit (finish_reason=length) while repeating itself: the model loops, "
    "and a higher --max-tokens only lets it loop longer; it needs a larger model (--model), or a repetition "
    "penalty on the server (llama.cpp --repeat-penalty, Ollama repeat_penalty, vLLM repetition_penalty)"
)
# A reply loops when its words are mostly the same few phrases: fewer distinct word 4-grams than this share.
LOOPING_SHARE = 0.5
LOOPING_WORDS = 40  # shorter replies are never called looping


def loops(reply: str) -> bool:
    """Whether `reply` repeats itself (SmolLM2 answered "customer=Fabrikam 2040" over and over until the limit)."""
    words = reply.split()
    grams = list(zip(words, words[1:], words[2:], words[3:], strict=False))
    return len(words) >= LOOPING_WORDS and len(set(grams)) < LOOPING_SHARE * len(grams)


class ReplyCutOff(UnusableReply):
    """A model reply ended at the token limit: it is incomplete and is not kept. The advice depends on
    what it said: a reply that loops needs a model or a server setting, not more tokens."""

    def __init__(self, reply: str = "") -> None:
        super().__init__(LOOPED if loops(reply) else CUT_OFF)


class ReplyIncomplete(UnusableReply):
    """A streamed reply ended without a finish_reason: the server stopped sending mid-answer."""

    def explain(self, server: str) -> str:
        return (
            f"{server} closed the reply before it finished (the stream ended without a finish_reason), so the "
            "partial answer was not kept: check the server's log (it may have crashed or restarted)"
        )


class NoAnswer(UnusableReply):
    """HTTP 200 without an answer: an empty body, only [DONE], no choices, or an empty message."""

    def explain(self, server: str) -> str:
        return (
            f"{server} answered (HTTP 200) but sent no reply it could read ({self}): check that --base-url "
            "is the server's OpenAI-compatible /v1 URL, and the server's log"
        )


def rejects_request_format(exc: BaseException) -> bool:
    """Whether a server refused the request's response_format itself (not the model's output)."""
    return any(refuses_format(getattr(cause, "status_code", None), str(cause)) for cause in causes(exc))


def scrub_secrets(text: str, secrets: tuple[str, ...] = ()) -> str:
    """Remove API keys: the configured ones, the environment's, and anything shaped like one."""
    for secret in (*secrets, os.environ.get("OPENAI_API_KEY", ""), os.environ.get("AZURE_OPENAI_API_KEY", "")):
        if secret and len(secret) >= 4:
            text = text.replace(secret, "[key hidden]")
    return _KEY_PATTERN.sub("[key hidden]", text)


def causes(exc: BaseException) -> list[BaseException]:
    """`exc` and what it was raised from (its cause, its context, an SDK's inner exception), outermost first."""
    seen: list[BaseException] = []
    current: BaseException | None = exc
    while current is not None and current not in seen:
        seen.append(current)
        current = current.__cause__ or getattr(current, "inner_exception", None) or current.__context__
    return seen


def explain_failure(
    exc: BaseException,
    *,
    base_url: str | None = None,
    secrets: tuple[str, ...] = (),
    sign_in: SignIn | None = None,
) -> str:
    """What went wrong, in one line. Looks at the whole cause chain without importing the SDK.
    `sign_in`: the kind of credential the clients were built to send to Azure OpenAI (`ModelSet.sign_in`),
    which tells a refused key from a refused Entra ID token; None when the caller does not know it."""
    server = base_url or "the server"
    for cause in causes(exc):
        name = type(cause).__name__
        status = getattr(cause, "status_code", None)
        line = _reply_line(exc, cause, name, status, server)
        if line is None:
            line = _request_line(cause, name, status, server, sign_in)
        if line is not None:
            return scrub_secrets(line, secrets)
    return scrub_secrets(f"{type(exc).__name__}: {_first_line(exc)}", secrets)


def _reply_line(exc: BaseException, cause: BaseException, name: str, status: Any, server: str) -> str | None:
    """What `cause` says went wrong with the call or its reply (an unusable reply, a timeout, a cut or
    malformed answer), or None."""
    if isinstance(cause, UnusableReply):
        return cause.explain(server)
    if isinstance(cause, MemoryUnavailable):
        return str(cause)
    if getattr(cause, "rate_limited", False):  # the whole --timeout went by on 429s
        return f"{server} is rate limiting (HTTP 429) for longer than --timeout ({cause}): wait, or lower the load"
    if isinstance(cause, TimeoutError) or name == "APITimeoutError":
        took = f" ({cause}, the --timeout)" if isinstance(cause, CallTimedOut) else ""
        return f"the model call timed out{took}: raise --timeout, or check that the server is not overloaded"
    if cut := _cut_connection(cause) if name in ("APIConnectionError", *_CUT_CONNECTION) else None:
        return (
            f"{server} closed the connection in the middle of the reply ({_first_line(cut)}): "
            "check the server's log (it may have crashed or restarted)"
        )
    if name == "JSONDecodeError" and (where := _read_by_a_provider(cause)) is not None:
        return (
            f"a file the agent's memory reads is not JSON ({_first_line(cause)}, read by {where}): a line "
            "cut short when a process was killed while writing it; a forget of what it holds rewrites it"
        )
    if name == "JSONDecodeError":
        return (
            f"{server} answered with something that is not JSON ({_first_line(cause)}): check that "
            "--base-url is the server's OpenAI-compatible /v1 URL"
        )
    if name == "APIError" and status is None:
        return f"{server} sent an error in the middle of the reply ({_first_line(cause)}): check the server's log"
    if isinstance(cause, _SHAPE_ERRORS) and _from_the_client(exc):
        return (
            f"{server} answered, but not in the shape of an OpenAI chat completion ({name}: "
            f"{_first_line(cause)}): check that --base-url is the server's OpenAI-compatible /v1 URL"
        )
    return None


def _request_line(cause: BaseException, name: str, status: Any, server: str, sign_in: SignIn | None) -> str | None:
    """What `cause` says the server did with the request (refused the credential, unknown host or model,
    rate limited, failed), or None."""
    if name in _ENTRA_ERRORS:
        return (
            "Entra ID sign-in failed (DefaultAzureCredential got no token): run az login, or set AZURE_OPENAI_API_KEY"
        )
    if (azure := _azure_line(cause, name, status, sign_in)) is not None:
        return azure
    if name in _NO_CONNECTION and _unknown_host(cause):
        return f"cannot resolve the host of {server}: check the name in --base-url / OPENAI_BASE_URL"
    if name in _NO_CONNECTION:
        return f"cannot reach {server}: check --base-url / OPENAI_BASE_URL and that the server is running"
    if status in (401, 403):
        return f"{server} refused the API key (HTTP {status}): check OPENAI_API_KEY"
    if status == 404:
        return f"{server} does not know this model or path (HTTP 404): check --model and --base-url"
    if status == 429:
        return f"{server} is rate limiting (HTTP 429){_asked_to_wait(cause)}: wait, or lower the load"
    if isinstance(status, int) and status >= 500:
        return f"{server} failed (HTTP {status}): check the server's log"
    if isinstance(status, int):
        return f"{server} rejected the request (HTTP {status}): {_first_line(cause)}"
    return None


def _azure_line(cause: BaseException, name: str, status: Any, sign_in: SignIn | None) -> str | None:
    """The Azure OpenAI reading of a failed request to `/openai/deployments/{deployment}/...`, or None.
    A refusal is read by `sign_in`, the workbench's own configuration of the client, never by the
    request's headers: the SDK no longer leaves the credential on a failed request (openai 3.60)."""
    request = getattr(cause, "request", None)
    url = urlsplit(str(getattr(request, "url", "")))
    deployment = _AZURE_DEPLOYMENT_PATH.search(url.path)
    if request is None or deployment is None:
        return None
    server = f"{url.scheme}://{url.netloc}{url.path[: deployment.start()]}"  # the resource endpoint
    version = parse_qs(url.query).get("api-version", ["?"])[0][:40]
    body = getattr(cause, "body", None)
    code = body.get("code") if isinstance(body, dict) else None
    if name in _NO_CONNECTION and _unknown_host(cause):
        return (
            f"cannot resolve the host of {server}: check the resource name in --azure-endpoint / AZURE_OPENAI_ENDPOINT"
        )
    if name in _NO_CONNECTION:
        return f"cannot reach {server}: check --azure-endpoint / AZURE_OPENAI_ENDPOINT"
    if status in (401, 403):
        return _azure_refused(server, status, sign_in)
    if status == 404:
        return _azure_not_found(server, url.path, unquote(deployment[1]), code, version)
    if code == "content_filter":
        return (
            f"Azure OpenAI's content filter refused the prompt (HTTP {status}{_filtered(body)}): nothing was kept; "
            "rephrase the message, or check the deployment's content filter"
        )
    if status == 429:
        return (
            f"Azure OpenAI at {server} is rate limiting (HTTP 429) after the client's retries: wait, or raise "
            "the deployment's tokens-per-minute quota"
        )
    return None


def _azure_refused(server: str, status: int, sign_in: SignIn | None) -> str:
    """An HTTP 401 or 403 from Azure OpenAI, read by the credential the client was built to send."""
    if status == 401 and sign_in is SignIn.ENTRA_ID:
        return (
            f"Azure OpenAI at {server} refused the Entra ID token (HTTP 401): sign in to the resource's tenant "
            "(az login --tenant ...), or set AZURE_OPENAI_API_KEY"
        )
    if status == 403 and sign_in is SignIn.ENTRA_ID:
        return (
            f"Azure OpenAI at {server} denied your Entra ID identity (HTTP 403): it needs the "
            "'Cognitive Services OpenAI User' role on the resource, and the resource's network rules must let you in"
        )
    if status == 401 and sign_in is SignIn.KEY:
        return (
            f"Azure OpenAI at {server} refused the key (HTTP 401): check that AZURE_OPENAI_API_KEY is a key "
            "of this resource"
        )
    if status == 403 and sign_in is SignIn.KEY:
        return (
            f"Azure OpenAI at {server} denied access (HTTP 403): check the resource's network rules "
            "(firewall, private endpoint) and AZURE_OPENAI_API_KEY"
        )
    if status == 401:  # the caller does not know which credential was sent
        return (
            f"Azure OpenAI at {server} refused the credential (HTTP 401): check that AZURE_OPENAI_API_KEY is a "
            "key of this resource, or without a key, sign in to the resource's tenant (az login --tenant ...)"
        )
    return (
        f"Azure OpenAI at {server} denied access (HTTP 403): check the resource's network rules (firewall, "
        "private endpoint), and AZURE_OPENAI_API_KEY, or without a key, the 'Cognitive Services OpenAI User' "
        "role of your Entra ID identity"
    )


def _azure_not_found(server: str, path: str, deployment: str, code: object, version: str) -> str:
    """An HTTP 404 from Azure OpenAI: no such deployment (named in the options that set it), or no such path."""
    if code == "DeploymentNotFound":
        options = (
            "--embedding-model / AZURE_OPENAI_EMBEDDING_DEPLOYMENT_NAME"
            if path.endswith("/embeddings")
            else "--model / --writer-model / AZURE_OPENAI_DEPLOYMENT_NAME"
        )
        return (
            f"Azure OpenAI at {server} has no deployment {quoted(deployment, 80)} (HTTP 404): check "
            f"{options} (the deployment's name, not the model's)"
        )
    return (
        f"Azure OpenAI at {server} does not know this path (HTTP 404): check --azure-endpoint and "
        f"--api-version ({version})"
    )


def _filtered(body: object) -> str:
    """`, filtered: jailbreak, violence` from an Azure content-filter error body."""
    inner = body.get("innererror") if isinstance(body, dict) else None
    results = inner.get("content_filter_result") if isinstance(inner, dict) else None
    if not isinstance(results, dict):
        return ""
    names = [str(k)[:40] for k, v in results.items() if isinstance(v, dict) and v.get("filtered")][:6]
    return f", filtered: {', '.join(names)}" if names else ""


# The SDK's name for a call that never reached the server, and httpx's, which the framework sometimes
# wraps directly (the SDK's wrapper not in the chain): either is the same failure for the user.
_NO_CONNECTION = ("APIConnectionError", "ConnectError")
# httpx's names for a connection that ended before the body did.
_CUT_CONNECTION = ("RemoteProtocolError", "ReadError", "IncompleteRead")
# What the framework's parsing raises on a reply of the wrong shape.
_SHAPE_ERRORS = (TypeError, AttributeError, KeyError, ValueError)


def cannot_reach(exc: BaseException) -> bool:
    """Whether the call never reached the server (refused connection, unknown host), as opposed to
    a server that answered badly or broke off mid-reply."""
    return _cut_connection(exc) is None and any(type(c).__name__ in _NO_CONNECTION for c in causes(exc))


def _asked_to_wait(exc: BaseException) -> str:
    """How long a 429 asked to wait, when that is why the client stopped retrying."""
    headers = getattr(getattr(exc, "response", None), "headers", None)
    wait = headers.get("retry-after") if headers is not None else None
    if wait is None:
        return " after the client's retries"
    return f" and asked to wait {str(wait)[:20]} s, more than the client's retries and --timeout allow"


def _cut_connection(exc: BaseException) -> BaseException | None:
    return next((c for c in causes(exc) if type(c).__name__ in _CUT_CONNECTION), None)


def _from_the_client(exc: BaseException) -> bool:
    """Raised inside a chat client's call (not by our own code after it)."""
    return any(type(cause).__name__ == "ChatClientException" for cause in causes(exc))


def _read_by_a_provider(exc: BaseException) -> str | None:
    """The framework's memory module whose code read what failed to parse (a history or memory file on
    this machine, not a server's answer), if one did."""
    frames = []
    tb = exc.__traceback__
    while tb is not None:
        frames.append(tb.tb_frame.f_code.co_filename.replace("\\", "/"))
        tb = tb.tb_next
    for filename in reversed(frames):
        if "/agent_framework/_sessions" in filename or "/agent_framework/_harness/" in filename:
            return filename.rsplit("/agent_framework/", 1)[1]
    return None


def _unknown_host(exc: BaseException) -> bool:
    words = ("name or service not known", "nodename nor servname", "getaddrinfo", "no address associated")
    return any(word in str(cause).lower() for cause in causes(exc) for word in words)


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return text[0][:300] if text else "no details"
