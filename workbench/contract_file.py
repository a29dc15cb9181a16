"""The contract a run declares: the `[contract]` table of a `workbench.toml` (beside the user's agents,
else in the current folder; or the file `--config` names), and `--keys`.

    [contract]
    keys = ["service", "region", "owner"]
    max_facts = 5
    max_value_chars = 256

Each setting left out is the seed's; `--keys` replaces the file's keys. The file is read once with
`tomllib` (`workbench_file`): its `[contract]` here, its `[start]` (the start options a team fixes,
`workbench.build.start_file`) by the start configuration. The tables are read into a pydantic model that
forbids any other key, then checked as every contract is
(`workbench.memory.contract.Contract`). What is wrong is said in one line naming the file (or the
option) and the problem, so a start stops before the TUI opens. Loads pydantic only when there is a
file to read."""

from __future__ import annotations

import tomllib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from workbench.memory.contract import SEED, Contract, ContractError
from workbench.memory.shown import quoted

if TYPE_CHECKING:
    from pydantic import ValidationError

FILE_NAME = "workbench.toml"
_MAX_FILE_BYTES = 64 * 1024  # a contract is a few lines: a larger file is not one


class ContractFileError(ValueError):
    """A workbench.toml or --keys that cannot be used: no usable contract, or a `[start]` table that is
    wrong (one line: where, and what)."""


@dataclass(frozen=True)
class WorkbenchFile:
    """The run's workbench.toml as parsed, once: its path (None when there is none) and its tables, each
    checked to be a table (`contract`, `start`; any other name refused)."""

    path: Path | None = None
    tables: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)


def workbench_file(config: str | None, folders: Sequence[Path] = ()) -> WorkbenchFile:
    """`config` (a file the user named), else the first `workbench.toml` in `folders` (default: the
    current folder), read and parsed; an empty WorkbenchFile when there is none."""
    found = [folder / FILE_NAME for folder in (folders or [Path.cwd()]) if (folder / FILE_NAME).is_file()]
    path = Path(config) if config is not None else next(iter(found), None)
    return WorkbenchFile() if path is None else WorkbenchFile(path, _parsed(path))


def declared_contract(
    config: str | None, keys: str | None, folders: Sequence[Path] = (), *, file: WorkbenchFile | None = None
) -> Contract:
    """The run's contract: the `[contract]` of `file` (default: `workbench_file(config, folders)`), with
    `keys` (`--keys a,b,c`) replacing its keys; the seed's when neither says anything."""
    file = workbench_file(config, folders) if file is None else file
    path = file.path
    table = _contract(file) if path is not None else None
    option = _keys_option(keys) if keys is not None else None
    if table is None and option is None:
        return SEED
    given = table or _Table()
    if given.keys is not None and option is None:
        _each_once(given.keys, str(path))
    try:  # each setting left out is the seed's
        return Contract(
            option or (SEED.keys if given.keys is None else tuple(given.keys)),
            max_facts=SEED.max_facts if given.max_facts is None else given.max_facts,
            max_value_chars=SEED.max_value_chars if given.max_value_chars is None else given.max_value_chars,
        )
    except ContractError as exc:
        raise ContractFileError(f"{path or '--keys'}: {exc}") from None


@dataclass(frozen=True)
class _Table:
    """The `[contract]` table's settings as given; None where it leaves the seed's."""

    keys: list[str] | None = None
    max_facts: int | None = None
    max_value_chars: int | None = None


def _keys_option(text: str) -> tuple[str, ...]:
    """`--keys a,b,c` as keys, checked on their own so that a problem names the option."""
    keys = [key.strip() for key in text.split(",")]
    if not any(keys):
        raise ContractFileError("--keys: takes the contract's keys separated by commas, e.g. --keys service,region")
    if "" in keys:
        raise ContractFileError(f"--keys: an empty key in {quoted(text, 80)}; separate the keys by single commas")
    _each_once(keys, "--keys")
    try:
        return Contract(tuple(keys)).keys
    except ContractError as exc:
        raise ContractFileError(f"--keys: {exc}") from None


def _each_once(keys: Sequence[str], where: str) -> None:
    """A key given twice is refused: `--keys module,module` was read as one key, in silence."""
    if twice := sorted({key for key in keys if keys.count(key) > 1}):
        named = ", ".join(quoted(key, 40) for key in twice[:4])
        raise ContractFileError(f"{where}: {named} given more than once; give each key once")


def _parsed(path: Path) -> dict[str, dict[str, Any]]:
    """The file's tables as TOML gives them; one line naming the file when it cannot be read, is not
    TOML, or holds anything but a `[contract]` and a `[start]` table."""
    try:
        with path.open("rb") as file:
            raw = file.read(_MAX_FILE_BYTES + 1)
    except OSError as exc:
        raise ContractFileError(f"{path}: cannot be read ({exc.strerror or type(exc).__name__})") from None
    if len(raw) > _MAX_FILE_BYTES:
        raise ContractFileError(f"{path}: more than {_MAX_FILE_BYTES // 1024} KiB; a workbench.toml is a few lines")
    try:
        data = tomllib.loads(raw.decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise ContractFileError(f"{path}: not UTF-8 text (byte {exc.start + 1:,})") from None
    except tomllib.TOMLDecodeError as exc:
        raise ContractFileError(f"{path}: not TOML: {exc}") from None
    for name, value in data.items():
        if name not in TABLES:
            raise ContractFileError(f"{path}: {name}: Extra inputs are not permitted{_HINT}")
        if not isinstance(value, dict):
            raise ContractFileError(f"{path}: {name}: a table, [{name}], is expected{_HINT}")
    return data


# The tables a workbench.toml may hold.
TABLES = ("contract", "start")
_HINT = (
    " (the file holds a [contract] table: keys, max_facts, max_value_chars; and a [start] table of start options, "
    "docs/contract.md)"
)


def _contract(file: WorkbenchFile) -> _Table:
    """The file's `[contract]` table (all None when it has none)."""
    given = file.tables.get("contract")
    if given is None:
        return _Table()
    from pydantic import BaseModel, ConfigDict, ValidationError

    class ContractTable(BaseModel):
        model_config = ConfigDict(extra="forbid", strict=True)

        keys: list[str] | None = None
        max_facts: int | None = None
        max_value_chars: int | None = None

    try:
        table = ContractTable.model_validate(given)
    except ValidationError as exc:
        raise ContractFileError(f"{file.path}: {_first(exc)}") from None
    return _Table(table.keys, table.max_facts, table.max_value_chars)


def _first(exc: ValidationError) -> str:
    error = exc.errors()[0]
    where = ".".join(("contract", *(str(part) for part in error["loc"])))
    more = f" (and {exc.error_count() - 1} more)" if exc.error_count() > 1 else ""
    return f"{where}: {error['msg']}{more}"
