"""Files the product writes: readable by the user only, whatever the directory's mode or umask.

The one owner of that rule for whole files written at once (exports, saved state); stores that keep
their own files (the recall database, persisted histories) create them through `private_file` and
their directories through `private_dir`."""

from __future__ import annotations

import os
import stat
import sys
from pathlib import Path

PRIVATE = 0o600
PRIVATE_DIR = 0o700
_ERASE_CHUNK = 1 << 20
WORK_SUFFIX = ".partial"  # a `replace_private` interrupted before its rename leaves this beside the file


def data_dir() -> Path:
    """The user's data directory for workbench: $WORKBENCH_DATA_DIR, else the platform's."""
    if explicit := os.environ.get("WORKBENCH_DATA_DIR"):
        return Path(explicit)
    if sys.platform == "win32":
        return Path(os.environ.get("LOCALAPPDATA") or Path.home() / "AppData" / "Local") / "workbench"
    if sys.platform == "darwin":
        return Path.home() / "Library" / "Application Support" / "workbench"
    return Path(os.environ.get("XDG_DATA_HOME") or Path.home() / ".local" / "share") / "workbench"


def home_relative(path: str) -> str:
    """`path` with the user's home directory written as ~ (shorter where a line is narrow)."""
    home = str(Path.home())
    return "~" + path[len(home) :] if home != "/" and (path == home or path.startswith(home + os.sep)) else path


class ReadOnlyFolder(PermissionError):
    """A folder the product was asked to write in that its owner made read-only (the message says what
    to do)."""


def private_dir(path: Path) -> Path:
    """Create `path` (and its parents) if missing and make it user-only; returns it. A parent it
    creates (the data directory, say) is user-only too; an existing one is left as it is. An existing
    `path` is made user-only by taking bits away, never by adding one: a folder its owner made
    read-only (`chmod 500`) is refused (`ReadOnlyFolder`) and left as it is."""
    path.parent.mkdir(mode=PRIVATE_DIR, parents=True, exist_ok=True)
    try:
        path.mkdir(mode=PRIVATE_DIR)
    except FileExistsError:
        mode = stat.S_IMODE(path.stat().st_mode)
        if mode & PRIVATE_DIR != PRIVATE_DIR:
            raise ReadOnlyFolder(
                f"{path} is read-only for you (mode {mode:04o}); make it writable (chmod 700) or use another folder"
            ) from None
        if mode != PRIVATE_DIR:
            path.chmod(PRIVATE_DIR)
    else:
        path.chmod(PRIVATE_DIR)  # whatever the umask took away
    return path


def private_file(path: Path) -> None:
    """Create `path` empty if it does not exist, user-only; make an existing one user-only."""
    descriptor = os.open(path, os.O_WRONLY | os.O_CREAT, PRIVATE)
    try:
        os.fchmod(descriptor, PRIVATE)
    finally:
        os.close(descriptor)


def write_private(path: Path, text: str, *, new: bool = False) -> None:
    """Write `text` (UTF-8) to `path`, created or truncated, readable by the user only. The mode is
    set on the open descriptor before a byte is written, so no other user can open it meanwhile.
    `new`: only create it; FileExistsError when `path` exists, which is left as it is."""
    descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | (os.O_EXCL if new else os.O_TRUNC), PRIVATE)
    with os.fdopen(descriptor, "w", encoding="utf-8") as file:
        os.fchmod(descriptor, PRIVATE)
        file.write(text)


def replace_private(path: Path, text: str) -> None:
    """Write `text` to `path` as one step: a private work file beside it, flushed to disk, renamed over
    it, and the folder flushed, so a crash leaves the old contents or the new, never half of either."""
    work = path.with_name(path.name + WORK_SUFFIX)
    write_private(work, text)
    descriptor = os.open(work, os.O_RDONLY)
    try:
        os.fsync(descriptor)
    finally:
        os.close(descriptor)
    os.replace(work, path)
    sync_folder(path.parent)


def sync_folder(folder: Path) -> None:
    """Flush the folder's entries to disk, so a rename or a removal in it survives a crash."""
    descriptor = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(descriptor)
    finally:
        os.close(descriptor)


def erase_file(path: Path) -> None:
    """Overwrite the file's bytes with zeros, flush them to disk, then remove it. Where the file
    system writes in place (ext4, XFS) the old bytes are gone from the disk too; copy-on-write file
    systems, SSD remapping, snapshots and backups may still hold them, out of this program's reach."""
    descriptor = os.open(path, os.O_WRONLY)
    try:
        left = os.fstat(descriptor).st_size
        while left > 0:
            left -= os.write(descriptor, bytes(min(left, _ERASE_CHUNK)))
        os.fsync(descriptor)
    finally:
        os.close(descriptor)
    path.unlink()


def private_tree(root: Path) -> None:
    """Make every directory under `root` user-only (0700) and every file in it user-only (0600):
    for stores that write their own files with the process umask (Agent Framework's memory files)."""
    if not root.is_dir():
        return
    for directory, _, files in os.walk(root):
        os.chmod(directory, PRIVATE_DIR)
        for name in files:
            file = os.path.join(directory, name)
            if not os.path.islink(file):
                os.chmod(file, PRIVATE)


class InUse(RuntimeError):
    """Another process holds the lock of a folder this one was asked to use."""


class FolderLock:
    """An exclusive lock on `path` (a lock file, created user-only), held from creation until
    `release` or the process's end. The holder writes its process id into the file, so a second
    process is refused naming it (`InUse`). No lock where the platform has no `fcntl` (Windows)."""

    def __init__(self, path: Path, what: str) -> None:
        self.path = path
        self._descriptor: int | None = None
        try:
            import fcntl
        except ImportError:
            return
        private_file(path)
        descriptor = os.open(path, os.O_RDWR)
        try:
            fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.pread(descriptor, 32, 0).decode("ascii", errors="replace").strip() or "unknown"
            os.close(descriptor)
            raise InUse(f"{path.parent} is in use by another {what} (process {holder}); quit it first") from None
        os.ftruncate(descriptor, 0)
        os.pwrite(descriptor, f"{os.getpid()}\n".encode(), 0)
        self._descriptor = descriptor

    def release(self) -> None:
        if self._descriptor is not None:
            os.close(self._descriptor)
            self._descriptor = None
