"""A start with another mode or recall setting than the one the histories were saved under keeps them:
not resumed, kept in the state file and said in the header, until a start with those options resumes
them or a forget removes them. It used to delete them and say only "resumed: 0 message(s)". Through the
session `workbench --persist` starts (its one start path), without Textual, on real SQLite files."""

import sqlite3
from contextlib import closing
from pathlib import Path

import pytest

from workbench.cli.configs import model_config
from workbench.cli.parser import build_parser
from workbench.cli.start import session_start
from workbench.persist.format import SavedFileError
from workbench.persist.journal import FILE_NAME, ForgetJournal
from workbench.persist.sessions import DIRECTORY, PersistedSessions
from workbench.persist.state import STATE_FILE
from workbench.runtime import Mode, ModelConfig, build_models
from workbench.runtime.agents import AgentRuntime
from workbench.session.assemble import assemble
from workbench.session.controller import SessionController

CUSTOMER = "customer=Contoso Ltd 7731"
OFF = "manual mode, recall off"


def started(monkeypatch: pytest.MonkeyPatch, data: Path, *options: str) -> SessionController:
    """The session `WORKBENCH_DATA_DIR=data workbench --persist <options>` starts."""
    monkeypatch.setenv("WORKBENCH_DATA_DIR", str(data))
    args = build_parser().parse_args(["--persist", *options])
    return session_start(args, model_config(args))()


def rows(data: Path) -> list[str]:
    db = sqlite3.connect(data / DIRECTORY / STATE_FILE)
    try:
        return [text for (text,) in db.execute("SELECT message FROM messages ORDER BY rowid")]
    finally:
        db.close()


def holding(data: Path, value: str) -> list[str]:
    """The raw scan: every file under sessions/, read as bytes, that holds `value`."""
    found = [p for p in sorted((data / DIRECTORY).rglob("*")) if p.is_file() and value.encode() in p.read_bytes()]
    return [p.name for p in found]


def summary(session: SessionController) -> str:
    return session.state().status.summary


async def test_a_start_with_recall_keeps_the_histories_saved_without_and_says_so(tmp_path, monkeypatch):
    data = tmp_path / "d"
    first = started(monkeypatch, data)
    assert (await first.ask("support", CUSTOMER)).result.ok
    first.close()
    saved = rows(data)
    assert len(saved) == 2

    second = started(monkeypatch, data, "--recall")
    assert second.runtime.history("support") == []  # not resumed: shaped without recall
    assert rows(data) == saved  # the repro: 2 rows went to 0 at this start
    assert (
        f"resumed: 0 message(s), 1 fact(s); kept, not resumed: 2 message(s) saved under {OFF} "
        "(start with those options to resume them)" in summary(second)
    )
    remembered = await second.runtime.remembered()
    histories = next(s for s in remembered.systems if s.name == second.runtime.histories.name)
    kept = [i for i in histories.items if i.name == f"support ({OFF})"]
    assert len(kept) == 1 and "kept, not resumed" in kept[0].description and "Contoso Ltd 7731" in kept[0].content
    assert (await second.ask("logs", "where are the logs?")).result.ok  # a turn under recall keeps them too
    second.close()
    assert rows(data)[:2] == saved

    third = started(monkeypatch, data)  # the original options resume them
    assert (third.runtime.history("support")[0].text or "").endswith(CUSTOMER)
    assert "resumed: 2 message(s), 1 fact(s); kept, not resumed: 2 message(s) saved under manual mode, recall on" in (
        summary(third)
    )
    third.close()


@pytest.mark.parametrize("key", ["customer", None], ids=["one-key", "everything"])
async def test_a_forget_under_other_options_leaves_no_byte_of_the_value_in_the_kept_histories(
    tmp_path, monkeypatch, key
):
    data = tmp_path / "d"
    first = started(monkeypatch, data)
    assert (await first.ask("logs", "module=Billing")).result.ok  # before it: no customer in the logs history
    assert (await first.ask("support", CUSTOMER)).result.ok
    first.close()

    second = started(monkeypatch, data, "--recall")
    assert "kept, not resumed: 4 message(s)" in summary(second)
    report = await second.forget(key)
    assert report.failures == {}
    deleted = 2 if key else 4  # the support agent's that held it; all in a forget of everything
    said = f"1 file(s); {deleted} message(s) kept, not resumed, under other options deleted"
    assert report.counts["persisted sessions"] == said
    kept_after = "persist: on; kept, not resumed: 2 message(s) saved under manual mode, recall off"
    assert (kept_after in summary(second)) == (key is not None)
    assert holding(data, "Contoso Ltd 7731") == []
    assert holding(data, "Contoso") == []
    second.close()  # the quit: the log written into the file
    assert holding(data, "Contoso Ltd 7731") == []
    if key:  # the history that did not hold it stays kept
        assert [m for m in rows(data) if "Billing" in m] and not [m for m in rows(data) if "Contoso" in m]
        third = started(monkeypatch, data, "--mode", "provider")
        assert "kept, not resumed: 2 message(s)" in summary(third)
        third.close()
    else:
        assert rows(data) == []

    again = started(monkeypatch, data)  # nothing of it comes back under the original options
    assert again.runtime.history("support") == []
    assert (key is not None) == bool(again.runtime.history("logs"))
    again.close()
    assert holding(data, "Contoso Ltd 7731") == []


async def test_a_switch_in_the_app_still_starts_new_sessions_and_deletes_the_ones_it_leaves(tmp_path, monkeypatch):
    """The switch is the user's own act, and the app says each agent starts a new session: the run's
    own histories go; those an earlier run kept under other options stay."""
    data = tmp_path / "d"
    first = started(monkeypatch, data)
    assert (await first.ask("support", CUSTOMER)).result.ok
    first.close()
    second = started(monkeypatch, data, "--mode", "provider")
    assert (await second.ask("logs", "module=Billing")).result.ok
    await second.switch(mode=Mode.MANUAL)
    texts = rows(data)
    assert [t for t in texts if "Contoso" in t] and not [t for t in texts if "Billing" in t]
    second.close()
    third = started(monkeypatch, data)
    assert (third.runtime.history("support")[0].text or "").endswith(CUSTOMER)
    third.close()


class Crash(BaseException):
    """The process ends while the holders apply a forget's plan."""


def journaled(directory: Path, journal: ForgetJournal, mode: Mode) -> AgentRuntime:
    persisted = PersistedSessions(directory)
    return assemble(build_models(ModelConfig()), persisted=persisted, journal=journal, mode=mode).runtime


async def test_a_forget_cut_short_in_another_mode_is_completed_in_the_kept_histories_too(tmp_path):
    """The crash at the last holder (memory on disk not written yet, the kept rows not reached): the next
    start completes the forget in the rows kept under the other mode too."""
    directory, journal = tmp_path / DIRECTORY, ForgetJournal(tmp_path / FILE_NAME, ("--persist",))
    first = journaled(directory, journal, Mode.PROVIDER)
    assert (await first.ask("support", CUSTOMER)).ok
    assert isinstance(first.histories, PersistedSessions)
    first.histories.close()

    second = journaled(directory, journal, Mode.MANUAL)
    assert isinstance(second.histories, PersistedSessions)

    async def crash(plan: object) -> int:
        raise Crash

    second.histories.erase = crash  # type: ignore[method-assign]
    with pytest.raises(Crash):
        await second.forget("customer")
    kept = [t for t in second.histories.state.rows() if "Contoso Ltd 7731" in t and '"role"' in t]
    assert len(kept) == 2  # the provider mode's messages, kept, not reached by the forget cut short
    second.histories.close()

    third = journaled(directory, journal, Mode.MANUAL)
    report = await third.complete_pending()
    assert report is not None and report.failures == {}
    found = [p.name for p in sorted(directory.rglob("*")) if p.is_file() and b"Contoso Ltd 7731" in p.read_bytes()]
    assert found == []
    assert "kept, not resumed" not in third.status.summary
    assert isinstance(third.histories, PersistedSessions)
    third.histories.close()


def test_a_hand_edited_row_of_the_kept_sessions_stops_start_up_with_the_files_name(tmp_path, monkeypatch):
    data = tmp_path / "d"
    first = started(monkeypatch, data)
    first.close()
    path = data / DIRECTORY / STATE_FILE
    with closing(sqlite3.connect(path)) as db:
        db.execute("INSERT INTO meta VALUES ('kept:1', '{\"version\": 1, \"shape\": 3}')")
        db.commit()
    before = path.read_bytes()
    with pytest.raises(SavedFileError, match=r"state\.sqlite: the sessions kept under another shape \(kept:1\)"):
        PersistedSessions(data / DIRECTORY)
    assert path.read_bytes() == before  # left as it is


async def test_two_histories_under_the_same_options_the_latest_resumed_the_other_kept_and_said(tmp_path, monkeypatch):
    """A run that switched in the app into the options an earlier history was kept under, and said
    something there: the start with those options resumes the latest, and counts the other apart."""
    data = tmp_path / "d"
    first = started(monkeypatch, data)
    assert (await first.ask("support", CUSTOMER)).result.ok
    first.close()
    second = started(monkeypatch, data, "--mode", "provider")
    await second.switch(mode=Mode.MANUAL)
    assert (await second.ask("support", "module=Billing")).result.ok
    second.close()
    third = started(monkeypatch, data)
    assert (third.runtime.history("support")[0].text or "").endswith("module=Billing")
    said = summary(third)
    assert f"resumed: 2 message(s), 2 fact(s); kept, not resumed: 2 message(s) saved under {OFF} before the " in said
    assert said.split(" · ")[-1].endswith("before the sessions resumed")  # no hint: a start cannot resume it
    third.close()
