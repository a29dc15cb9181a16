"""A refused state file says whole what is wrong with it, and the way out."""

from __future__ import annotations

import sqlite3
from contextlib import closing

import pytest

from workbench.persist.state import StateFile


def test_a_damaged_page_is_said_whole_in_one_line_with_its_way_out(tmp_path):
    """It said "is damaged (*** in database main ***", cut off at SQLite's report's first line."""
    path = tmp_path / "state.sqlite"
    StateFile(path).close()
    db = sqlite3.connect(path)
    db.execute("CREATE TABLE filler (a)")  # pages past the schema's, one of which is then damaged
    db.executemany("INSERT INTO filler VALUES (?)", [("x" * 500,) for _ in range(200)])
    db.commit()
    db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    db.close()
    assert _damaged_page(path), "a page whose damage SQLite's check reports (not one it cannot read past)"
    with pytest.raises(ValueError) as refused:
        StateFile(path)
    said = str(refused.value)
    assert "\n" not in said and "***" not in said
    # SQLite's check lists the damage ("On tree page 11 cell 7: ...") or, where it cannot read past it, stops
    # at "database disk image is malformed"; the same bytes have given either: both are said as damage.
    assert said.startswith(f"{path} is damaged (") and said.endswith("; move it away to start afresh")
    assert "On tree page " in said or "malformed" in said


def _damaged_page(path):
    """Damage one page of rows after another, from the whole file, until SQLite's check reports it
    (where its layout puts a page it cannot read past, the check fails instead: "malformed")."""
    whole = path.read_bytes()
    for page in range(1, len(whole) // 4096):
        damaged = bytearray(whole)
        damaged[page * 4096 + 10 : page * 4096 + 60] = b"\xff" * 50
        path.write_bytes(bytes(damaged))
        try:
            with closing(sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro&immutable=1", uri=True)) as db:
                if db.execute("PRAGMA quick_check").fetchone()[0].startswith("*** in database main ***\n"):
                    return True
        except sqlite3.DatabaseError:
            continue
    return False


def test_a_state_file_of_another_format_is_refused_with_its_way_out(tmp_path):
    path = tmp_path / "state.sqlite"
    StateFile(path).close()
    with closing(sqlite3.connect(path)) as db, db:
        db.execute("UPDATE meta SET value = '99' WHERE name = 'format'")
    db.close()
    with pytest.raises(ValueError) as refused:
        StateFile(path)
    said = str(refused.value)
    assert "(format 99, this version reads " in said and said.endswith("or move it away to start afresh")
