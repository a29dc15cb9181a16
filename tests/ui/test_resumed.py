"""`workbench --persist` started again: each pane shows its agent's resumed conversation between two
dividers, as typed and as answered, bounded like a live one; a forget clears it like live messages,
and nothing forgotten comes back at the next start (the files and the panes' text are scanned)."""

import contextlib
import secrets
from pathlib import Path

from tests.support.residue import residue
from tests.ui.helpers import FIXED, PaneHost, answer, make_persisted_app, release, say, start_ended
from workbench.cli.configs import model_config
from workbench.cli.parser import build_parser
from workbench.cli.start import build_app, session_start
from workbench.persist.sessions import DIRECTORY, PersistedSessions
from workbench.persist.state import STATE_FILE
from workbench.runtime import ModelConfig, build_models
from workbench.session.assemble import assemble
from workbench.session.controller import SessionController
from workbench.ui.app import WorkbenchApp
from workbench.ui.chat import ChatPane
from workbench.ui.chat_lines import HiddenNote, Notice, UserMessage
from workbench.ui.replies import AgentAnswer

SIZE = (160, 50)


def shown(app: WorkbenchApp, agent: str) -> list[tuple[str, str]]:
    """What the pane's conversation holds, top to bottom: (kind, text) of each message and divider."""
    return shown_in(app.pane(agent))


def shown_in(pane: ChatPane) -> list[tuple[str, str]]:
    kinds = {UserMessage: "user", AgentAnswer: "agent", Notice: "notice", HiddenNote: "hidden"}
    found = []
    for widget in pane.conversation.children:
        kind = next((name for cls, name in kinds.items() if isinstance(widget, cls)), None)
        if kind is not None:
            found.append((kind, widget.text if isinstance(widget, AgentAnswer) else str(widget.render())))
    return found


def pane_texts(app: WorkbenchApp) -> str:
    return "\n".join(text for agent in ("support", "logs") for _, text in shown(app, agent))


def files_holding(directory: Path, values: list[str]) -> dict[str, list[str]]:
    """The raw scan: every file under `directory`, as bytes, and the values found in it."""
    found = {
        str(p.relative_to(directory)): [v for v in values if v.encode() in p.read_bytes()]
        for p in sorted(directory.rglob("*"))
        if p.is_file()
    }
    return {name: hits for name, hits in found.items() if hits}


def cli_app(*options: str) -> WorkbenchApp:
    args = build_parser().parse_args(["--persist", *options])
    return build_app(args, model_config(args))


async def test_a_second_workbench_persist_shows_each_pane_its_resumed_conversation(tmp_path, monkeypatch):
    monkeypatch.setenv("WORKBENCH_DATA_DIR", str(tmp_path))
    literal = "module=Reporting; database=[bold]PostgreSQL[/bold]"  # markup stays text
    first = cli_app()
    async with first.run_test(size=SIZE) as pilot:
        await start_ended(pilot)
        await say(pilot, "support", literal)
        await say(pilot, "logs", "Where can I find logs?")
        await say(pilot, "support", "module=Billing\nwhich module?")
        answers = {a: [t for kind, t in shown(first, a) if kind == "agent"] for a in ("support", "logs")}
    release(first)

    second = cli_app()
    async with second.run_test(size=SIZE) as pilot:
        await start_ended(pilot)
        support, logs = shown(second, "support"), shown(second, "logs")
        where = str((tmp_path / DIRECTORY).resolve())
        assert support[0][0] == "notice" and support[0][1].startswith(f"Resumed from {where}, saved ")
        assert "the support agent's earlier conversation, 4 message(s). It still sees all of it." in support[0][1]
        assert support[1:] == [
            ("user", literal),
            ("agent", answers["support"][0]),
            ("user", "module=Billing\nwhich module?"),
            ("agent", answers["support"][1]),
            ("notice", "End of the resumed conversation."),
        ]
        assert logs[1:] == [
            ("user", "Where can I find logs?"),
            ("agent", answers["logs"][0]),
            ("notice", "End of the resumed conversation."),
        ]
        assert "resumed: 6 message(s), 2 fact(s)" in second.sub_title
        # The resumed conversation is what the agent is sent: a new turn comes after it.
        await say(pilot, "support", "and the database?")
        assert [k for k, _ in shown(second, "support")][-3:] == ["notice", "user", "agent"]
    release(second)


def cli_session(*options: str) -> SessionController:
    """The session `workbench --persist` starts (its one start path), without the app."""
    args = build_parser().parse_args(["--persist", *options])
    return session_start(args, model_config(args))()


def closed(session: SessionController) -> None:
    """The session's run ends: its lock on the persisted directory goes with the process."""
    assert isinstance(session.runtime.histories, PersistedSessions)
    session.runtime.histories.close()


async def test_a_provider_mode_history_resumes_under_provider_mode(tmp_path, monkeypatch):
    """Through the session the CLI starts: what each agent resumes (the app shows each pane its agent's)."""
    monkeypatch.setenv("WORKBENCH_DATA_DIR", str(tmp_path))
    first = cli_session("--mode", "provider")
    assert (await first.ask("logs", "customer=Contoso")).result.ok
    closed(first)
    second = cli_session("--mode", "provider")
    logs = second.pane("logs").resumed
    assert logs is not None and [(m.role, m.text) for m in logs.messages][:1] == [("user", "customer=Contoso")]
    assert [m.role for m in logs.messages] == ["user", "assistant"]
    assert second.pane("support").resumed is None  # it said nothing: nothing to show, no dividers either
    closed(second)
    third = cli_session()  # manual mode: the histories were shaped by the other mode, so none is resumed
    assert third.pane("logs").resumed is None and "resumed: 0 message(s), 1 fact(s)" in third.state().status.summary
    closed(third)


async def test_a_long_resumed_conversation_is_bounded_like_a_live_one(tmp_path, monkeypatch):
    """The first run through the session; the second on the support pane alone, shown what the session
    resumed (as the app shows each pane its agent's)."""
    monkeypatch.setattr(ChatPane, "MAX_SHOWN", 6)
    directory = tmp_path / DIRECTORY
    first = assemble(build_models(ModelConfig()), persisted=PersistedSessions(directory, clock=lambda: FIXED))
    for n in range(5):
        assert (await first.ask("support", f"question {n}?")).result.ok
    first.runtime.histories.close()  # type: ignore[attr-defined]
    second = assemble(build_models(ModelConfig()), persisted=PersistedSessions(directory, clock=lambda: FIXED))
    resumed = second.pane("support").resumed
    assert resumed is not None
    host = PaneHost(second)
    async with host.run_test(size=(80, 40)) as pilot:
        host.pane.show_resumed(resumed)
        await pilot.pause()
        support = shown_in(host.pane)
        # Ten messages: the latest four between the dividers, six counted in the hidden note.
        assert [k for k, _ in support] == ["notice", "hidden", "user", "agent", "user", "agent", "notice"]
        assert support[1][1].startswith("6 earlier message(s) are not shown here")
        assert [t for k, t in support if k == "user"] == ["question 3?", "question 4?"]
        assert "10 message(s)" in support[0][1]
        await host.say(pilot, "one more?")  # live messages push out the oldest, as ever
        assert host.pane.query_one(HiddenNote).count == 7  # the divider above stays
        assert shown_in(host.pane)[0] == support[0]
    second.runtime.histories.close()  # type: ignore[attr-defined]


async def test_after_a_forget_nothing_forgotten_shows_or_is_kept_and_a_restart_brings_none_back(tmp_path):
    tag = secrets.token_hex(5)
    reporting, billing, contoso = f"Reporting-{tag}", f"Billing-{tag}", f"Contoso-{tag}"
    forgotten = [reporting, billing]
    directory = tmp_path / DIRECTORY
    # The first run without a screen: an earlier app would stay reachable from the next one through the
    # test's event loop (Textual's print capture), which the residue scan would walk into.
    persisted = PersistedSessions(directory)
    runtime = assemble(build_models(ModelConfig()), persisted=persisted).runtime
    assert (await runtime.ask("support", f"module={reporting}; customer={contoso}")).ok
    assert (await runtime.ask("logs", f"module={billing}")).ok
    persisted.close()
    del runtime, persisted

    second = make_persisted_app(directory)
    async with second.run_test(size=SIZE) as pilot:
        await start_ended(pilot)
        assert reporting in pane_texts(second) and billing in pane_texts(second)
        await say(pilot, "logs", "forget module")
        await answer(pilot, "y")
        assert not any(v in pane_texts(second) for v in forgotten)
        assert all(k == "notice" for a in ("support", "logs") for k, _ in shown(second, a))  # "History replaced"
        assert residue(forgotten, second) == {}
        assert files_holding(directory, forgotten) == {}
        await say(pilot, "support", "Where are the logs?")  # the new session says something
    release(second)

    third = make_persisted_app(directory)
    async with third.run_test(size=SIZE) as pilot:
        await start_ended(pilot)
        assert [t for k, t in shown(third, "support") if k == "user"] == ["Where are the logs?"]
        assert shown(third, "logs") == []
        assert not any(v in pane_texts(third) for v in forgotten)
        assert files_holding(directory, forgotten) == {}
        assert STATE_FILE in files_holding(directory, [contoso])  # the other fact stays
    release(third)


async def test_a_forget_cut_short_is_completed_before_the_panes_take_a_turn(tmp_path):
    """The next start completes it first: the header says so, the ledger too, and nothing forgotten
    is on screen or on disk."""
    from tests.runtime.test_durable import Crash
    from workbench.persist.journal import FILE_NAME, ForgetJournal
    from workbench.runtime import ModelConfig, build_models
    from workbench.session.assemble import assemble

    directory, journal = tmp_path / DIRECTORY, ForgetJournal(tmp_path / FILE_NAME, ("--persist",))
    contoso = f"Contoso-{secrets.token_hex(4)}"
    first = assemble(build_models(ModelConfig()), persisted=PersistedSessions(directory), journal=journal)
    assert (await first.ask("support", f"customer={contoso}; module=Billing")).result.ok

    async def crash(plan):
        raise Crash

    first.runtime.histories.erase = crash  # type: ignore[attr-defined]  # the last holder: memory is not written
    with contextlib.suppress(Crash):
        await first.forget("customer")
    first.runtime.histories.close()  # type: ignore[attr-defined]

    app = WorkbenchApp(
        start=lambda: assemble(build_models(ModelConfig()), persisted=PersistedSessions(directory), journal=journal)
    )
    async with app.run_test(size=SIZE) as pilot:
        await start_ended(pilot)
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert app.ready and "completed the forget of 'customer'" in app.sub_title
        assert contoso not in pane_texts(app) and residue([contoso], app) == {}
        assert not (tmp_path / FILE_NAME).exists()
        assert not any(contoso.encode() in p.read_bytes() for p in directory.rglob("*") if p.is_file())
    release(app)
