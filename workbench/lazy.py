"""Package exports that load on first use."""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from typing import Any


def lazy_exports(package: str, exports: Mapping[str, str], namespace: dict[str, Any]) -> Callable[[str], object]:
    """A module `__getattr__` that imports `exports[name]` when `name` is first used, so importing one
    light part of a package (the contract, the ledger, usage) does not load the heavy ones (pydantic,
    Agent Framework) on the way to the TUI's first frame."""

    def __getattr__(name: str) -> object:
        module = exports.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module), name)
        namespace[name] = value
        return value

    return __getattr__
