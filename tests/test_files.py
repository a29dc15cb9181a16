"""A folder's mode is only ever tightened, never loosened; a lock says who holds it."""

from __future__ import annotations

import os
import stat
import subprocess
import sys

import pytest

from workbench.files import FolderLock, FolderRefused, InUse, PrivateFiles, private_dir, private_tree


def mode(path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_a_folder_it_creates_is_user_only_and_so_is_a_parent_it_creates(tmp_path):
    old = os.umask(0o022)
    try:
        made = private_dir(tmp_path / "data" / "sessions")
    finally:
        os.umask(old)
    assert (mode(made), mode(made.parent)) == (0o700, 0o700)


@pytest.mark.parametrize("read_only", [0o500, 0o300, 0o600, 0o000])
def test_a_folder_the_user_made_read_only_is_refused_naming_it_and_left_as_it_is(tmp_path, read_only):
    folder = tmp_path / "sessions"
    folder.mkdir()
    folder.chmod(read_only)
    with pytest.raises(FolderRefused, match=rf"^{folder} is read-only \(mode {read_only:04o}\)") as refused:
        private_dir(folder)
    assert "\n" not in str(refused.value) and mode(folder) == read_only


def test_what_group_and_others_may_do_is_taken_away_and_the_owners_bits_are_kept(tmp_path):
    folder = tmp_path / "shared"
    folder.mkdir()
    folder.chmod(0o775)
    private_dir(folder)
    assert mode(folder) == 0o700
    (folder / "inner").mkdir()
    (folder / "inner").chmod(0o555)  # the user's read-only folder inside: stays read-only
    (folder / "note.md").write_text("x")
    (folder / "note.md").chmod(0o444)
    private_tree(folder)
    assert (mode(folder / "inner"), mode(folder / "note.md")) == (0o500, 0o400)


def test_a_file_where_a_folder_should_be_is_refused(tmp_path):
    (tmp_path / "sessions").write_text("")
    with pytest.raises(FolderRefused, match="is not a folder"):
        private_dir(tmp_path / "sessions")


def test_a_lock_holds_its_holders_pid_user_only_and_refuses_a_second_holder_naming_it(tmp_path):
    path = tmp_path / "lock"
    first = FolderLock(path, "the folder")
    assert (path.read_text(), mode(path)) == (f"{os.getpid():>10}\n", 0o600)
    with pytest.raises(InUse, match=rf"^another workbench \(PID {os.getpid()}\) is using the folder; quit it first$"):
        FolderLock(path, "the folder")
    first.release()
    FolderLock(path, "the folder").release()  # taken again once let go


def test_a_lock_goes_with_the_process_that_held_it(tmp_path):
    path = tmp_path / "lock"
    holder = "import sys; from pathlib import Path; from workbench.files import FolderLock; "
    holder += "lock = FolderLock(Path(sys.argv[1]), 'it'); print('held', flush=True); sys.stdin.read()"
    with subprocess.Popen(
        [sys.executable, "-c", holder, str(path)], stdin=subprocess.PIPE, stdout=subprocess.PIPE
    ) as process:  # its pipes closed at the end
        assert process.stdout is not None and process.stdout.readline() == b"held\n"
        with pytest.raises(InUse, match=f"PID {process.pid}"):
            FolderLock(path, "it")
        process.kill()
        process.wait()
    FolderLock(path, "it").release()  # taken once its holder is gone, however it ended


def test_a_umask_loosened_while_private_files_are_held_is_tightened_again_by_the_next_holder(tmp_path):
    """Code of the user's in this process (an agent, its framework) may set the umask while a store
    holds PrivateFiles: the next store to open tightens it again, and the last to close restores it."""
    before = os.umask(0o022)
    try:
        with PrivateFiles.held():
            assert os.umask(0o027) == 0o077  # held; then loosened by code that is not the workbench's
            with PrivateFiles.held():
                assert os.umask(0o077) == 0o077  # tightened again: what it creates now is user-only
                descriptor = os.open(tmp_path / "made", os.O_WRONLY | os.O_CREAT, 0o666)
                os.close(descriptor)
            assert os.umask(0o077) == 0o077  # one holder left: still tight
        assert os.umask(0o022) == 0o027  # the last let go: the umask that code chose, never looser
        assert mode(tmp_path / "made") == 0o600
    finally:
        os.umask(before)
