"""The record that makes a forget one durable step across every store on disk: written and flushed
before the first holder is touched, removed once every holder applied the plan. It names the keys
(one or several, never a value) and the stores the forget was to reach, as the options that open them.

Memory, the source of the values, is written last (`PersistedSessions.forget`), so after a crash at any
instant the values are still known: the next start finds the record and completes the forget before
anything else runs, with the same plan (memory's values and what the holders still declare). A start
that does not open every store the record names is refused, naming the options that do."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

from workbench.files import private_dir, replace_private, sync_folder
from workbench.memory.forget_record import PendingForget

FILE_NAME = "forget-pending.json"  # in the user's data directory


class SavedFileError(ValueError):
    """The record cannot be read (the message names the file and what to do)."""


class ForgetJournal:
    """The record at `path` for a runtime whose stores on disk are `stores` (the options that open them)."""

    def __init__(self, path: Path, stores: tuple[str, ...]) -> None:
        self.path = path
        self.stores = stores

    def pending(self) -> PendingForget | None:
        return read_pending(self.path)

    def begin(self, keys: tuple[str, ...] | None) -> None:
        """Record the forget of `keys` (None: everything), on disk before this returns (the file and its
        folder flushed). One key is written as version 1 writes it, so an older workbench completes it."""
        which: dict[str, object] = {"version": 1, "key": None if keys is None else keys[0]}
        if keys is not None and len(keys) > 1:  # an older workbench refuses it rather than forget everything
            which = {"version": 2, "key": None, "keys": list(keys)}
        record = which | {"asked_at": datetime.now(UTC).isoformat(), "stores": list(self.stores)}
        private_dir(self.path.parent)  # a start that keeps nothing there itself (your agents: their stores) has none
        replace_private(self.path, json.dumps(record) + "\n")

    def end(self) -> None:
        """The forget reached every holder: the record goes."""
        self.path.unlink(missing_ok=True)
        sync_folder(self.path.parent)


def read_pending(path: Path) -> PendingForget | None:
    """The forget a crash cut short, if `path` records one."""
    if not path.exists():
        return None
    try:
        record = json.loads(path.read_text(encoding="utf-8"))
        key, keys = record["key"], record.get("keys")
        if record.get("version") == 2 and isinstance(keys, list) and keys and all(isinstance(k, str) for k in keys):
            asked: tuple[str, ...] | None = tuple(keys)
        elif record.get("version") == 1 and (key is None or isinstance(key, str)):
            asked = None if key is None else (key,)
        else:
            raise ValueError("not a record this version writes")
        stores = tuple(str(s) for s in record["stores"])
        return PendingForget(asked, datetime.fromisoformat(record["asked_at"]), stores)
    except (ValueError, KeyError, TypeError) as exc:
        raise SavedFileError(
            f"{path} records a forget that was cut short, but cannot be read ({exc}); start with the options "
            "the forget ran with and forget again, then remove the file"
        ) from None
