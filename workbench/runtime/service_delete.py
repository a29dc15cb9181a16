"""Deleting one id the model service keeps, with the agent's own client (the openai SDK client its chat
client holds), then asking for it again: only a 404 then is verified gone (`ServiceStore`'s forget)."""

from __future__ import annotations

import contextlib
from typing import Any

from workbench.runtime.failures import explain_failure, scrub_secrets
from workbench.text import clip

_REASON_CHARS = 200
# What a DELETE answered that says the service offers no deletion there (when it still returns the id).
_NOT_OFFERED = (404, 405, 501)


class ServiceDeleter:
    """Deletes ids on the service `sdk` reaches; `client_kind`, the chat client's class, names it in a line."""

    def __init__(self, sdk: object, client_kind: str) -> None:
        self._sdk = sdk
        self.client_kind = client_kind

    async def delete(self, identifier: str, kind: str) -> tuple[bool, str, bool]:
        """Delete one id (a `kind`: conversation or response) and ask for it again: (gone, what happened,
        refused)."""
        sdk = self._sdk
        resource = getattr(sdk, "conversations" if kind == "conversation" else "responses", None)
        if resource is None or not hasattr(resource, "delete"):
            return False, f"not offered: the workbench knows no way to delete what {self.client_kind} keeps", False
        try:
            await resource.delete(identifier)
        except Exception as exc:
            status = getattr(exc, "status_code", None)
            if not isinstance(status, int):
                return False, f"could not be asked: {self._explained(exc)}", True
            if status in _NOT_OFFERED:
                after = await self._status(resource, identifier)
                if after == 404:
                    return True, f"already gone: DELETE answered HTTP {status}, and asked again, 404", False
                return False, f"not offered: DELETE answered HTTP {status} ({self._reason(exc)}); {after}", False
            return False, f"refused: HTTP {status} ({self._reason(exc)})", True
        after = await self._status(resource, identifier)
        if after == 404:
            return True, "deleted, verified gone (asked again: 404)", False
        return False, f"deleted, but {after}", True

    async def _status(self, resource: Any, identifier: str) -> int | str:
        """404 when the service no longer returns `identifier`; otherwise what it answered, in words."""
        try:
            await resource.retrieve(identifier)
        except Exception as exc:
            status = getattr(exc, "status_code", None)
            if status == 404:
                return 404
            if isinstance(status, int):
                return f"asked again, it answered HTTP {status} ({self._reason(exc)}): not known to be gone"
            return f"asked again, it could not be asked ({self._explained(exc)}): not known to be gone"
        return "asked again, the service still returns it"

    def _secrets(self) -> tuple[str, ...]:
        key = getattr(self._sdk, "api_key", None)
        return (key,) if isinstance(key, str) and key else ()

    def _reason(self, exc: BaseException) -> str:
        """The service's own reason, bounded, without the key."""
        body = getattr(exc, "body", None)
        message = body.get("message") if isinstance(body, dict) else None
        with contextlib.suppress(Exception):
            message = message or str(exc)
        return clip(scrub_secrets(str(message or type(exc).__name__), self._secrets()), _REASON_CHARS)

    def _explained(self, exc: BaseException) -> str:
        base = getattr(self._sdk, "base_url", None)
        line = explain_failure(exc, base_url=str(base) if base else None, secrets=self._secrets())
        return clip(line, _REASON_CHARS)
