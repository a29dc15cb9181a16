"""Files the product writes: readable by the user only, whatever the directory's mode or umask.

The one owner of that rule for whole files written at once (exports, saved state); stores that keep
their own files (the recall database, persisted histories) create them through `private_file` and
their directories through `private_dir`. A mode is only ever tightened, never loosened: a folder
the user made read-only is refused (`FolderRefused`), not made writable again. Stores that create
files on threads of their own (DuckDB's log and spill files) hold `PrivateFiles`, the process umask
tightened while they are open, as do the user's own agents' memories (`OthersFolderLock`). Also the one
owner of "one process per folder" (`FolderLock`)."""

from __future__ import annotations

import os
import stat
import sys
import threading
import weakref
from collections.abc import Iterator
from contextlib import contextmanager, suppress
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


class FolderRefused(PermissionError):
    """A folder the product would write into, refused as it is: its mode is the user's to change."""


def private_dir(path: Path) -> Path:
    """Create `path` (and its parents) user-only if missing; returns it. A parent it creates (the data
    directory, say) is user-only too; an existing parent is left as it is. An existing `path` keeps its
    owner's bits: FolderRefused when the owner cannot read, write or enter it (the user made it
    read-only); what group and others may do is taken away (every folder the product keeps is
    user-only), never given."""
    path.parent.mkdir(mode=PRIVATE_DIR, parents=True, exist_ok=True)
    try:
        path.mkdir(mode=PRIVATE_DIR)
    except FileExistsError:
        mode = path.stat().st_mode
        if not stat.S_ISDIR(mode):
            raise FolderRefused(f"{path} is not a folder; workbench keeps files there: choose another path") from None
        if os.name == "posix" and stat.S_IMODE(mode) & 0o700 != 0o700:
            raise FolderRefused(
                f"{path} is read-only (mode {stat.S_IMODE(mode):04o}) and workbench writes there; it was left as "
                "it is: make it writable (chmod u+rwx) or choose another folder"
            ) from None
        _tighten(str(path))
    else:
        path.chmod(PRIVATE_DIR)  # created here: the umask may have taken an owner bit
    return path


def private_file(path: Path) -> None:
    """Create `path` empty if it does not exist, user-only; make an existing one user-only."""
    descriptor = os.open(path, os.O_WRONLY | os.O_CREAT, PRIVATE)
    try:
        os.fchmod(descriptor, PRIVATE)
    finally:
        os.close(descriptor)


def write_private(path: Path, text: str | bytes, *, new: bool = False) -> None:
    """Write `text` (UTF-8, or bytes as they are) to `path`, created or truncated, readable by the
    user only. The mode is set on the open descriptor before a byte is written, so no other user can
    open it meanwhile. `new`: only create it; FileExistsError when `path` exists, which is left as it is."""
    descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | (os.O_EXCL if new else os.O_TRUNC), PRIVATE)
    binary = isinstance(text, bytes)
    with os.fdopen(descriptor, "wb" if binary else "w", encoding=None if binary else "utf-8") as file:
        os.fchmod(descriptor, PRIVATE)
        file.write(text)


def replace_private(path: Path, text: str | bytes) -> None:
    """Write `text` to `path` as one step: a private work file beside it, flushed to disk, renamed over
    it, and the folder flushed, so a crash leaves the old contents or the new, never half of either."""
    work = path.with_name(path.name + WORK_SUFFIX)
    write_private(work, text)
    put_in_place(work, path)


def put_in_place(work: Path, path: Path) -> None:
    """Make the finished work file `work` the file `path` as one step: flushed to disk, renamed over
    `path`, and the folder flushed, so a crash leaves `path` as it was or whole."""
    descriptor = os.open(work, os.O_RDONLY)
    try:
        os.fsync(descriptor)
    finally:
        os.close(descriptor)
    os.replace(work, path)
    sync_folder(path.parent)


def rewrite_private(path: Path, text: str | bytes) -> None:
    """`replace_private` over an existing file, only when the file itself may be written: a rename
    replaces a file whatever its mode, so one the user made read-only is refused (PermissionError) and
    left as it is, as a write in place would be."""
    os.close(os.open(path, os.O_WRONLY))
    replace_private(path, text)


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
    """Take every permission of group and others from `root`, each directory under it and each file
    in it: for stores that write their own files with the process umask (Agent Framework's memory
    files, Mem0's). Only tightens: an owner's bit is never added (a folder the user made read-only
    stays so)."""
    if not root.is_dir():
        return
    for directory, _, files in os.walk(root):
        _tighten(directory)
        for name in files:
            file = os.path.join(directory, name)
            if not os.path.islink(file):
                _tighten(file)


def _tighten(path: str) -> None:
    mode = stat.S_IMODE(os.stat(path).st_mode)
    if mode & 0o077:
        os.chmod(path, mode & 0o700)


class InUse(RuntimeError):
    """Another process holds the lock on what this one was asked to open."""


class FolderLock:
    """An exclusive lock held through a lock file for as long as this object lives (or until
    `release`); the process exiting, however it ends, lets it go. The lock file (user-only) holds the
    holder's PID, so a second process is told which one holds it. No lock where the platform has no
    `fcntl` (Windows)."""

    def __init__(self, path: Path, what: str, *, removed: bool = False) -> None:
        """Lock `path` (created if missing) for `what` ("the persisted sessions in DIR"); InUse, naming
        the holder's PID, when another process holds it, or another lock of this process does.
        `removed`: the file is deleted when the lock is let go (in a folder of the user's), by `release`
        or at the interpreter's exit; a file a killed holder left is locked by no one, so the next start
        takes it over."""
        self.path = path
        self._descriptor: int | None = None
        try:
            import fcntl
        except ImportError:
            return
        while True:
            descriptor = os.open(path, os.O_RDWR | os.O_CREAT, PRIVATE)
            try:
                os.fchmod(descriptor, PRIVATE)
                fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                holder = _holder(descriptor)
                os.close(descriptor)
                raise InUse(f"another workbench ({holder}) is using {what}; quit it first") from None
            except BaseException:
                os.close(descriptor)
                raise
            if not removed or _same_file(descriptor, path):
                break
            os.close(descriptor)  # its holder deleted it as it let go: this lock is on no file, lock the new one
        os.ftruncate(descriptor, 0)
        os.write(descriptor, f"{os.getpid():>10}\n".encode())  # one size whatever the PID: F3 lists it
        self._descriptor = descriptor
        self._closer = weakref.finalize(self, _unlock, descriptor, path if removed else None)

    def release(self) -> None:
        """Let another process take it (the file stays, with the PID of its last holder, unless `removed`)."""
        if self._descriptor is not None:
            self._descriptor = None
            self._closer()


def _same_file(descriptor: int, path: Path) -> bool:
    """Whether `path` still names the file open as `descriptor` (not deleted or replaced since)."""
    try:
        named = os.stat(path)
    except FileNotFoundError:
        return False
    held = os.fstat(descriptor)
    return (named.st_dev, named.st_ino) == (held.st_dev, held.st_ino)


def _unlock(descriptor: int, removed: Path | None) -> None:
    """Let a lock go: its file deleted first, while still held (`removed`), so no other process locks it
    in between and then sees it vanish; then closed."""
    try:
        if removed is not None:
            with suppress(OSError):  # the folder is gone, or was made read-only: the file stays, unlocked
                removed.unlink()
    finally:
        os.close(descriptor)


def _holder(descriptor: int) -> str:
    """Who holds the lock, from the PID its holder wrote ("PID unknown" in the instant before it does)."""
    text = os.pread(descriptor, 32, 0).decode("ascii", errors="replace").strip()
    return f"PID {text}" if text.isdigit() else "PID unknown"


class PrivateFiles:
    """Keeps the process umask at least as strict as 0o077 while any holder needs it: for stores that
    create files on threads of their own with no setting for their mode.

    DuckDB creates its write-ahead log on the first write after each checkpoint and deletes it at
    the checkpoint (a log made ahead with mode 0600 is deleted and created anew with the default
    mode), on whichever thread commits, and has no setting for its mode or place; its spill files
    are the same. The umask is the one control of the mode such a file is created with. POSIX keeps
    it per process, so while a DuckDB store is open every file this process creates is user-only:
    the product's rule for every file it writes anyway. The umask is only ever tightened, never
    loosened, and restored when the last holder lets go; nothing else in workbench changes it. Code
    of the user's running in this process (their agents, their frameworks) may: each acquire checks it
    again, and one loosened meanwhile is tightened again, and is what the last release restores (the
    umask that code chose, not the one before it)."""

    _lock = threading.Lock()
    _holders = 0
    _saved = 0

    @classmethod
    def acquire(cls) -> None:
        with cls._lock:
            current = os.umask(0o077)  # reading it sets it: never looser than 0o077 in between
            if cls._holders == 0 or current & 0o077 != 0o077:
                cls._saved = current  # the first holder's, or one set since by code that is not the workbench's
            os.umask(current | 0o077)
            cls._holders += 1

    @classmethod
    def release(cls) -> None:
        with cls._lock:
            cls._holders -= 1
            if cls._holders == 0:
                os.umask(cls._saved)

    @classmethod
    @contextmanager
    def held(cls) -> Iterator[None]:
        cls.acquire()
        try:
            yield
        finally:
            cls.release()


class OthersFolderLock(FolderLock):
    """A `FolderLock` on a folder that code other than the workbench's writes into while it runs, with
    the process umask's mode and no setting for it (the user's own agents' memories: Agent Framework's
    history and memory files). The folder is created user-only if missing, or refused when the user made
    it read-only (`FolderRefused`), then locked against a second process (`InUse`); what it holds is
    made user-only (only tightened), and `PrivateFiles` is held until `release`, so the files that code
    creates meanwhile are user-only too. The lock file sits in the folder, as `name`, and is deleted
    when the lock is let go: the folder is the user's, and a clean quit leaves nothing of the workbench's in it."""

    def __init__(self, folder: Path, name: str, what: str) -> None:
        private_dir(folder)
        super().__init__(folder / name, what, removed=True)
        try:
            private_tree(folder)
        except BaseException:
            super().release()
            raise
        PrivateFiles.acquire()
        self._umask = weakref.finalize(self, PrivateFiles.release)

    def release(self) -> None:
        super().release()
        self._umask()


def lock_holder(path: Path) -> str | None:
    """Who holds the `FolderLock` at `path` ("PID 4242"), or None when no one does; without taking it or
    writing anything (the drift lab only reads the user's folders): a shared lock tried and let go at
    once, on the file opened read-only."""
    try:
        import fcntl
    except ImportError:
        return None
    try:
        descriptor = os.open(path, os.O_RDONLY)
    except FileNotFoundError:
        return None
    try:
        fcntl.flock(descriptor, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except BlockingIOError:
        return _holder(descriptor)
    else:
        fcntl.flock(descriptor, fcntl.LOCK_UN)
        return None
    finally:
        os.close(descriptor)
