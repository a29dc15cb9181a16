"""Cancellation and forget interleaved in the app: Esc on a streaming turn then at once a forget, and a
quit while the writer works on persisted sessions. Nothing raises, nothing forgotten stays anywhere the
app holds, and the stores agree with each other (and, persisted, with what a restart reads)."""

import asyncio
import secrets
from pathlib import Path

import pytest

from tests.support.residue import residue
from tests.ui.helpers import answer, make_app, make_persisted_app, release, say, start_turn
from workbench.memory import EventKind, FactCandidate, declared_candidates
from workbench.persist.sessions import PersistedSessions
from workbench.runtime import AGENT_NAMES
from workbench.runtime.scripted import ScriptedChatClient
from workbench.ui.app import WorkbenchApp
from workbench.ui.confirm import ConfirmForget


def failures(app: WorkbenchApp) -> list[str]:
    # Private name: where Textual keeps the notifications shown (as other tests read them).
    return [n.message for n in app._notifications if "failed unexpectedly" in (n.title or "")]


@pytest.mark.parametrize("how", ["f8", "fact row"])
async def test_escape_on_a_streaming_turn_then_a_forget_at_once_leaves_nothing(how):
    tag = secrets.token_hex(5)
    billing, contoso, reporting = f"Billing-{tag}", f"Contoso-{tag}", f"Reporting-{tag}"
    app = make_app()
    async with app.run_test(size=(160, 50), notifications=True) as pilot:
        await say(pilot, "support", f"customer={contoso}")
        await say(pilot, "support", f"module={billing}")
        client = app.session.runtime.models.agent_client
        assert isinstance(client, ScriptedChatClient)
        client.delay = 30.0  # each streamed word now waits 30 s: the next turn is streaming when Esc comes
        pane = await start_turn(pilot, "logs", f"module={reporting}; where are the logs?")
        await pilot.press("escape")
        if how == "f8":
            await pilot.press("f8")
        else:
            app.query_one("#fact-table").focus()
            await pilot.press("enter")  # the first row: the oldest fact, the customer
        await pilot.pause()
        assert isinstance(app.screen, ConfirmForget)
        await answer(pilot, "y")
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert not pane.busy and failures(app) == []
        runtime = app.session.runtime
        assert runtime.memory.open_tickets() == ()
        assert [runtime.history(name) for name in AGENT_NAMES] == [[], []]
        kinds = [e.kind for e in runtime.memory.ledger.latest()]
        assert kinds[-3:] == [EventKind.ABANDONED, EventKind.FORGOTTEN, EventKind.NOTE]
        if how == "f8":
            assert runtime.memory.facts() == ()
            assert residue([billing, contoso, reporting], app) == {}
        else:
            assert [(f.key, f.value) for f in runtime.memory.facts()] == [("module", billing)]
            assert residue([contoso], app) == {}
        client.delay = 0.0
        await say(pilot, "support", "module=After")
        assert ("module", "After") in [(f.key, f.value) for f in runtime.memory.facts()]


class HeldWriter:
    """The host's parse, answering only once `go` is set: a writer call in flight for as long as a test needs."""

    label = "held host parse"
    format_summary = "host parse"

    def __init__(self) -> None:
        self.asked = asyncio.Event()
        self.go = asyncio.Event()

    async def propose(self, user_text: str) -> list[FactCandidate]:
        self.asked.set()
        await self.go.wait()
        return declared_candidates(user_text)


async def test_quitting_while_the_writer_works_leaves_the_persisted_stores_consistent(tmp_path: Path):
    tag = secrets.token_hex(5)
    billing, reporting = f"Billing-{tag}", f"Reporting-{tag}"
    app = make_persisted_app(tmp_path)
    async with app.run_test(size=(160, 50), notifications=True) as pilot:
        await say(pilot, "support", f"module={billing}")
        writer = app.session.runtime.updater.writer = HeldWriter()
        await start_turn(pilot, "logs", f"module={reporting}")
        await asyncio.wait_for(writer.asked.wait(), 5)
        await pilot.press("ctrl+q")
        await pilot.pause()
    assert failures(app) == []
    release(app)
    persisted = PersistedSessions(tmp_path)  # as the next `workbench --persist` reads it
    try:
        memory = persisted.memory
        assert [(f.key, f.value) for f in memory.facts()] == [("module", billing)]
        assert memory.open_tickets() == ()
        assert [e.kind for e in memory.ledger.latest()][-1] is EventKind.ABANDONED
        held = "\n".join(item.content for item in await persisted.held({}))
        assert billing in held and reporting not in held  # the cancelled turn reached no file
    finally:
        persisted.close()
