"""The `[start]` table of a `workbench.toml`: the start options a team fixes for its project, under the
options' names with `_` for `-`.

    [start]
    model = "qwen2.5:7b"
    base_url = "http://localhost:11434/v1"
    recall = true

Each one applies where the command line does not give the option and no environment variable stands
for it (OPENAI_BASE_URL for base_url, WORKBENCH_RECALL_POSTGRES for recall_store, and for model
AZURE_OPENAI_DEPLOYMENT_NAME when --azure-endpoint or --api-version names Azure): the command line,
then the environment, then the file, then the defaults. No secret is read from the file: a key or a
password belongs in the environment. What is wrong is one line naming the file and the key
(ContractFileError, like the contract's). Checked by hand, without pydantic: the window opens without it."""

from __future__ import annotations

import argparse
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from workbench.agentmem.config import AGENT_MEMORIES
from workbench.contract_file import ContractFileError, WorkbenchFile
from workbench.memory.shown import quoted
from workbench.runtime.config import Mode, WriterFormat, WriterKind


def _text(value: Any) -> bool:
    return isinstance(value, str) and bool(value.strip())


def _positive(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and 0 < value < float("inf")


def _whole(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value > 0


@dataclass(frozen=True)
class _Key:
    """A key of `[start]`: what its value must be (said in the error), and its check."""

    expected: str
    check: Callable[[Any], bool]
    path: bool = False  # a folder or file: relative to the file's folder
    choice: bool = False  # a name: a wrong one is quoted


def _choice(*names: str) -> _Key:
    return _Key(f"one of {', '.join(names)}", lambda value: value in names, choice=True)


_TEXT = _Key("a string", _text)
# The keys, in the order --help shows their options; each is the attribute argparse gives its option.
KEYS: dict[str, _Key] = {
    "model": _TEXT,
    "base_url": _TEXT,
    "writer_model": _TEXT,
    "writer_format": _choice(*(f.value for f in WriterFormat)),
    "timeout": _Key("a number of seconds, more than 0", _positive),
    "max_tokens": _Key("a whole number of tokens, more than 0", _whole),
    "mode": _choice(*(m.value for m in Mode)),
    "writer": _choice(*(w.value for w in WriterKind)),
    "recall": _Key("true or false", lambda value: isinstance(value, bool)),
    "recall_store": _Key("a string: a file, 'memory', or postgresql://... without a password", _text, path=True),
    "agent_memory": _choice(*AGENT_MEMORIES),
    "agent_memory_dir": _Key("a string: a folder", _text, path=True),
}
# The environment variable that stands for a key, when there is one (above the file, below the option).
_ENVIRONMENT = {"base_url": "OPENAI_BASE_URL", "recall_store": "WORKBENCH_RECALL_POSTGRES"}
_SECRETS = ("key", "password", "secret", "token")


def start_options(file: WorkbenchFile) -> dict[str, Any]:
    """The file's `[start]` settings, each checked (one line naming the file and the key when one is
    not a known key, is of the wrong type, or is a secret); relative paths made the file's folder's."""
    table = file.tables.get("start") or {}
    given: dict[str, Any] = {}
    for name, value in table.items():
        if _secret(name, value):
            raise ContractFileError(
                f"{file.path}: [start] {name}: a secret is not read from a file; set it in the environment "
                "(OPENAI_API_KEY, AZURE_OPENAI_API_KEY, WORKBENCH_RECALL_POSTGRES) and remove it from the file"
            )
        key = KEYS.get(name)
        if key is None:
            raise ContractFileError(f"{file.path}: [start] {name} is not a start option; the keys: {', '.join(KEYS)}")
        if not key.check(value):
            if isinstance(value, int | float) and not isinstance(value, bool):
                given_as = str(value)  # a number of the wrong range or kind is said as it is: "not -5", "not 1.5"
            else:
                given_as = quoted(value, 40) if key.choice and isinstance(value, str) else _kind(value)
            raise ContractFileError(f"{file.path}: [start] {name}: expected {key.expected}, not {given_as}")
        given[name] = _resolved(value, file.path) if key.path else value
    return given


def applied(args: argparse.Namespace, file: WorkbenchFile, environ: Mapping[str, str]) -> tuple[dict[str, Any], str]:
    """The `[start]` settings that apply to this start: those whose option the command line left out
    (None) and no environment variable stands for; with where they came from (`FILE [start]`)."""
    chosen: dict[str, Any] = {}
    for name, value in start_options(file).items():
        if getattr(args, name, None) is not None:
            continue  # the command line's
        variable = _ENVIRONMENT.get(name)
        if name == "model" and (getattr(args, "azure_endpoint", None) or getattr(args, "api_version", None)):
            variable = "AZURE_OPENAI_DEPLOYMENT_NAME"  # the deployment, on Azure
        if variable is not None and environ.get(variable, "").strip():
            continue  # the environment's
        chosen[name] = value
    return chosen, f"{file.path} [start]"


def _secret(name: str, value: Any) -> bool:
    """A key named as a secret (api_key, password...; not max_tokens), or a store URL with a password."""
    words = name.lower().replace("-", "_").split("_")
    if any(word in _SECRETS for word in words):
        return True
    if name == "recall_store" and isinstance(value, str) and "://" in value:
        try:
            return urlsplit(value).password is not None
        except ValueError:
            return False
    return False


def _resolved(value: str, path: Path | None) -> str:
    """A relative path as the file's folder's (a team's file names its project's folders); `memory` and
    URLs as given."""
    if value == "memory" or "://" in value or path is None:
        return value
    given = Path(value).expanduser()
    return str(given if given.is_absolute() else path.parent / given)


def _kind(value: Any) -> str:
    if value == "":
        return "an empty string"
    names = {bool: "true/false", int: "a whole number", float: "a number", str: "a string", list: "an array"}
    return names.get(type(value), "a table" if isinstance(value, dict) else type(value).__name__)
