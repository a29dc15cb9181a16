"""A loopback server that speaks Azure OpenAI's shape, for tests.

Routes `/openai/deployments/{deployment}/chat/completions?api-version=...` (and `/embeddings`), accepts only its own
`api-key` or `Authorization: Bearer` token, answers as Azure does when something is wrong
(401, 404 `DeploymentNotFound`, 404 for an unknown path or API version), opens each stream with
Azure's `prompt_filter_results` chunk, and otherwise answers like LoopbackOpenAI (scripted replies,
usage, queued Canned replies and errors). Every request's route and credentials are recorded.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qs, unquote, urlsplit

from tests.support.openai_server import Canned, LoopbackOpenAI, _Handler

API_KEY = "azure-test-key-0f1e2d3c4b5a69788796a5b4c3d2e1f0"
TOKEN = "eyJ0eXAiOiJKV1QiLCJhbGciOiJub25lIn0.eyJhdWQiOiJodHRwczovL2NvZ25pdGl2ZXNlcnZpY2VzLmF6dXJlLmNvbSJ9.c2ln"
IDENTITY_PATH = "/msi/token"
IDENTITY_SECRET = "identity-header-secret"
OPERATIONS = ("chat/completions", "embeddings")
EMBEDDING_DIMENSIONS = 64
API_VERSIONS = ("2024-06-01", "2024-10-21", "2024-12-01-preview", "2025-04-01-preview")

ACCESS_DENIED = {
    "code": "401",
    "message": "Access denied due to invalid subscription key or wrong API endpoint. Make sure to provide a valid "
    "key for an active subscription and use a correct regional API endpoint for your resource.",
}
TOKEN_REFUSED = {
    "code": "401",
    "message": "Unauthorized. Access token is missing, invalid, audience is incorrect "
    "(https://cognitiveservices.azure.com), or have expired.",
}
NO_ROLE = {
    "code": "PermissionDenied",
    "message": "The principal `00000000-0000-0000-0000-000000000000` lacks the required data action "
    "`Microsoft.CognitiveServices/accounts/OpenAI/deployments/chat/completions/action` to perform "
    "`POST /openai/deployments/{deployment-id}/chat/completions` operation.",
}
DEPLOYMENT_NOT_FOUND = {
    "code": "DeploymentNotFound",
    "message": "The API deployment for this resource does not exist. If you created the deployment within the "
    "last 5 minutes, please wait a moment and try again.",
}
RESOURCE_NOT_FOUND = {"code": "404", "message": "Resource not found"}


def content_filtered(category: str = "jailbreak") -> Canned:
    """Azure's 400 when the prompt trips the content filter."""
    results = {name: {"filtered": False, "severity": "safe"} for name in ("hate", "self_harm", "sexual", "violence")}
    results[category] = (
        {"filtered": True, "detected": True}
        if category == "jailbreak"
        else {
            "filtered": True,
            "severity": "high",
        }
    )
    body = {
        "error": {
            "message": "The response was filtered due to the prompt triggering Azure OpenAI's content management "
            "policy. Please modify your prompt and retry.",
            "type": None,
            "param": "prompt",
            "code": "content_filter",
            "status": 400,
            "innererror": {"code": "ResponsibleAIPolicyViolation", "content_filter_result": results},
        }
    }
    return Canned(status=400, body=body)


@dataclass(frozen=True)
class AzureRequest:
    """What reached the server besides the body: the route and the credential headers, verbatim."""

    path: str
    deployment: str
    api_version: str | None
    api_key: str | None
    authorization: str | None
    headers: dict[str, str]


class _AzureHandler(_Handler):
    def do_GET(self) -> None:
        """App Service's managed identity endpoint, where DefaultAzureCredential gets its token when
        IDENTITY_ENDPOINT points here: the only sign-in source tests use, so nothing leaves loopback."""
        azure: LoopbackAzure = self.server.azure  # type: ignore[attr-defined]
        url = urlsplit(self.path)
        resource = parse_qs(url.query).get("resource", [""])[0]
        with self.server.state.lock:
            azure.identity_requests.append(resource)
        if url.path != IDENTITY_PATH or self.headers.get("X-IDENTITY-HEADER") != IDENTITY_SECRET:
            self._send_json(404, {"error": RESOURCE_NOT_FOUND})
        elif azure.identity_failure is not None:
            self._send_json(400, {"error": "invalid_request", "error_description": azure.identity_failure})
        else:
            expires = int(time.time()) + 3600
            token = {"access_token": azure.token, "expires_on": str(expires), "resource": resource}
            self._send_json(200, {**token, "token_type": "Bearer"})

    def do_POST(self) -> None:
        azure: LoopbackAzure = self.server.azure  # type: ignore[attr-defined]
        url = urlsplit(self.path)
        parts = url.path.strip("/").split("/")
        version = parse_qs(url.query).get("api-version", [None])[0]
        operation = "/".join(parts[3:])
        is_route = len(parts) >= 4 and parts[:2] == ["openai", "deployments"] and operation in OPERATIONS
        deployment = unquote(parts[2]) if is_route else ""
        with self.server.state.lock:
            azure.seen.append(
                AzureRequest(
                    url.path,
                    deployment,
                    version,
                    self.headers.get("api-key"),
                    self.headers.get("Authorization"),
                    dict(self.headers.items()),
                )
            )
        if not is_route or version not in API_VERSIONS:
            self._send_json(404, {"error": RESOURCE_NOT_FOUND})
        elif self.headers.get("Authorization") is not None:
            if self.headers["Authorization"] != f"Bearer {azure.token}":
                self._send_json(401, {"error": TOKEN_REFUSED})
            elif not azure.role_assigned:
                self._send_json(403, {"error": NO_ROLE})
            else:
                self._answer(deployment, operation)
        elif self.headers.get("api-key") != azure.api_key:
            self._send_json(401, {"error": ACCESS_DENIED})
        else:
            self._answer(deployment, operation)

    def _answer(self, deployment: str, operation: str) -> None:
        if deployment not in self.server.azure.deployments:  # type: ignore[attr-defined]
            self._send_json(404, {"error": DEPLOYMENT_NOT_FOUND})
        elif operation == "embeddings":
            self._embed()
        else:
            self.path = "/chat/completions"
            super().do_POST()

    def _embed(self) -> None:
        """The built-in lexical embedder's vectors, one per input, with usage, as Azure returns them."""
        from workbench.recall.embedders import LexicalEmbeddingClient

        body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", "0"))) or b"{}")
        texts = body["input"] if isinstance(body["input"], list) else [body["input"]]
        embedder = LexicalEmbeddingClient(EMBEDDING_DIMENSIONS)
        data = [{"object": "embedding", "index": i, "embedding": embedder.embed(t)} for i, t in enumerate(texts)]
        tokens = sum(len(t.split()) for t in texts)
        usage = {"prompt_tokens": tokens, "total_tokens": tokens}
        self._send_json(200, {"object": "list", "data": data, "model": body.get("model"), "usage": usage})

    def stream_opening(self) -> list[dict[str, Any]]:
        """Azure opens a stream with the prompt's filter results and no choices."""
        filters = {"hate": {"filtered": False, "severity": "safe"}}
        results = [{"prompt_index": 0, "content_filter_results": filters}]
        return [{"id": "", "object": "", "created": 0, "model": "", "choices": [], "prompt_filter_results": results}]


class LoopbackAzure(LoopbackOpenAI):
    """`with LoopbackAzure(deployments=("chat",)) as azure:`; `azure.endpoint` is the resource endpoint.
    It accepts `api_key` as `api-key`, and `token` as an Entra ID bearer token (403 unless
    `role_assigned`), which it also hands out as a managed identity (unless `identity_failure`)."""

    handler = _AzureHandler

    def __init__(self, deployments: tuple[str, ...] = ("gpt-4o-mini",), *, api_key: str = API_KEY, token: str = TOKEN):
        super().__init__()
        self.deployments = deployments
        self.api_key = api_key
        self.token = token
        self.role_assigned = True
        self.identity_failure: str | None = None
        self.seen: list[AzureRequest] = []
        self.identity_requests: list[str] = []
        self._server.azure = self  # type: ignore[attr-defined]

    @property
    def endpoint(self) -> str:
        return f"http://127.0.0.1:{self._server.server_port}"

    def managed_identity_environment(self) -> dict[str, str]:
        """The variables that make DefaultAzureCredential sign in here as an App Service managed identity."""
        return {"IDENTITY_ENDPOINT": f"{self.endpoint}{IDENTITY_PATH}", "IDENTITY_HEADER": IDENTITY_SECRET}
