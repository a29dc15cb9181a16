"""Nothing forgets without an answered confirmation: a key or click that arrived before the question
was drawn never answers it, whatever the timing; a person answering it once drawn is heard."""

from textual import events
from textual.app import App

from tests.ui.helpers import ScreenHost, answer, make_app, read_question, say, scripted_session
from tests.ui.helpers import drawn as question_drawn
from workbench.ui.app import WorkbenchApp
from workbench.ui.chat_lines import UserMessage
from workbench.ui.confirm import ConfirmForget
from workbench.ui.facts import FactTable, ForgetRequested


def keys(app: WorkbenchApp) -> list[str]:
    return [f.key for f in app.session.state().memory.facts]


async def drawn(pilot) -> ConfirmForget:
    """The question, once it is on screen (the events queued before it have been handled by then)."""
    screen = await question_drawn(pilot)
    await pilot.pause()
    return screen


async def test_a_click_and_an_enter_queued_in_the_same_tick_do_not_answer_the_question():
    app = make_app()
    async with app.run_test(size=(140, 40)) as pilot:
        await say(pilot, "support", "customer=Contoso; module=Billing")
        app.query_one(FactTable).focus()
        await pilot.pause()
        # As on a loaded machine: the request and the Enter are both queued before the modal mounts.
        app.post_message(ForgetRequested(("module",)))
        app.post_message(events.Key("enter", "\r"))
        app.post_message(events.Key("y", "y"))
        await drawn(pilot)
        assert keys(app) == ["customer", "module"]
        assert len([s for s in app.screen_stack if isinstance(s, ConfirmForget)]) == 1  # one question, not two
        await answer(pilot, "n")
        assert keys(app) == ["customer", "module"] and not isinstance(app.screen, ConfirmForget)


async def test_a_click_on_forget_queued_before_the_question_was_drawn_is_ignored():
    app = make_app()
    async with app.run_test(size=(140, 40)) as pilot:
        await say(pilot, "support", "customer=Contoso")
        app.post_message(ForgetRequested(None))
        x, y = (await drawn(pilot)).query_one("#yes").region.center  # where Forget is drawn
        await answer(pilot, "n")
        app.post_message(ForgetRequested(None))  # again, with a click on Forget queued at once
        for press in (events.MouseDown, events.MouseUp):
            app.post_message(press(None, x, y, 0, 0, 1, False, False, False, screen_x=x, screen_y=y))
        await drawn(pilot)
        await read_question(pilot)
        assert keys(app) == ["customer"] and isinstance(app.screen, ConfirmForget)
        await pilot.click("#yes")  # drawn, read, and clicked: forgets
        await pilot.pause()
        assert keys(app) == []


async def test_a_sentence_and_enter_typed_in_one_burst_after_a_click_forget_nothing_and_lose_nothing():
    app = make_app()
    async with app.run_test(size=(140, 40)) as pilot:
        await say(pilot, "logs", "customer=Contoso; module=Billing")
        sentence = "Is my customer right?"
        app.query_one(FactTable).focus()
        await pilot.pause()
        # The Enter asks to forget module; the sentence, its Enter and a y are typed on before the question is drawn.
        for character in ["\r", *sentence, "\r", "y"]:
            app.post_message(events.Key("enter" if character == "\r" else character, character))
        await drawn(pilot)
        await pilot.pause(ConfirmForget.GUARD_SECONDS)
        assert keys(app) == ["customer", "module"] and isinstance(app.screen, ConfirmForget)
        await answer(pilot, "n")
        assert keys(app) == ["customer", "module"]
        prompt = app.pane("logs").prompt
        sent = [str(m.render()) for m in app.pane("logs").query(UserMessage)][1:]
        assert sent == [sentence] or prompt.text.startswith(sentence)  # sent, or kept in the draft


async def test_at_human_speed_y_forgets_and_n_keeps():
    app = make_app()
    async with app.run_test(size=(140, 40)) as pilot:
        await say(pilot, "support", "customer=Contoso; module=Billing")
        app.query_one(FactTable).focus()
        await pilot.press("enter")
        await pilot.pause()
        await answer(pilot, "n")
        assert keys(app) == ["customer", "module"]
        app.query_one(FactTable).focus()
        await pilot.press("enter")
        await pilot.pause()
        await answer(pilot, "y")
        assert keys(app) == ["module"]


async def test_the_question_and_the_notice_name_a_fact_that_goes_too():
    """`log=/var/log/billing/export.log` holds `Billing` whole: forgetting module takes the log fact too,
    and the user is told before answering, not only by the ledger afterwards."""
    app = make_app()
    async with app.run_test(size=(140, 40), notifications=True) as pilot:
        await say(pilot, "support", "module=Billing; log=/var/log/billing/export.log; customer=Contoso")
        table = app.query_one(FactTable)
        table.focus()
        table.move_cursor(row=[f.key for f in app.session.state().memory.facts].index("module"))
        await pilot.press("enter")
        question = await drawn(pilot)
        said = " ".join(str(w.render()) for w in question.query("Static"))
        assert "log goes too" in said and "The other 1 fact(s) stay." in said
        await answer(pilot, "y")
        assert keys(app) == ["customer"]
        assert any("Forgot module and log (its value held one)" in n.message for n in app._notifications)


def consequence(app: App[None]) -> str:
    return str(app.screen.query_one("#consequence").render())


async def test_the_question_names_every_memory_a_forget_empties(tmp_path):
    from workbench.agentmem.files import FileMemory
    from workbench.memory import WorkingMemory
    from workbench.recall.config import RecallConfig
    from workbench.runtime import CallLog, ModelConfig, build_models
    from workbench.session.assemble import assemble

    calls = CallLog()
    session = assemble(
        build_models(ModelConfig()),
        memory=WorkingMemory(),
        calls=calls,
        recall=RecallConfig(store="memory").build(calls),
        recall_on=True,
        memories=[FileMemory(tmp_path / "files")],
    )
    app = WorkbenchApp(session)
    async with app.run_test(size=(140, 40)) as pilot:
        await say(pilot, "support", "customer=Contoso; module=Billing")
        await pilot.press("f8")
        await drawn(pilot)
        assert consequence(app).startswith(
            "Working memory, the recall store and the memory files will be emptied and both agents' histories"
        )
        await answer(pilot, "n")
        await say(pilot, "support", "forget customer")  # typed: the same question as a click
        await drawn(pilot)
        # The memory files hold nothing of it (F3: "holds no key's value"): not "removed from" them.
        assert "It is also removed from the recall store. None of it is in the memory files now." in consequence(app)
        await answer(pilot, "n")
        assert keys(app) == ["customer", "module"]


async def test_without_other_memories_the_question_names_working_memory_and_the_histories():
    """Through the session, what a forget of everything reaches (its own plan's preview); on the question
    alone, given that preview as the app gives it, what it says and that its y, once read, answers Forget."""
    session = scripted_session()
    await session.ask("support", "customer=Contoso")
    preview = await session.forget_preview(None)
    assert preview.reaches == () and preview.unreached == ()
    host = ScreenHost(
        ConfirmForget(
            None,
            agents=preview.agents,
            kept=preview.kept,
            also=preview.also,
            reaches=preview.reaches,
            unreached=preview.unreached,
        )
    )
    async with host.run_test(size=(140, 40)) as pilot:
        await drawn(pilot)
        assert consequence(host) == (
            "Working memory will be emptied and both agents' histories replaced by new, empty sessions. "
            "This cannot be undone."
        )
        await answer(pilot, "y")
        assert host.answers == [True]
    await session.forget(None)  # what the app does on that answer
    assert session.state().memory.facts == ()


async def test_with_one_agent_the_question_counts_one_history():
    """One agent of the user's: its history is the one a forget replaces (it said 'Both agents' histories')."""
    from agent_framework import Agent

    from workbench import ScriptedChatClient
    from workbench.runtime.config import Mode, WriterKind

    alone = Agent(ScriptedChatClient(), "You help.", name="triage")
    session = scripted_session(Mode.PROVIDER, agents=[alone], writer=WriterKind.HOST)
    await session.ask("triage", "customer=Contoso")
    preview = await session.forget_preview(["customer"])
    assert preview.agents == ("triage",)
    host = ScreenHost(ConfirmForget(["customer"], {"customer": ["Contoso"]}, agents=preview.agents))
    async with host.run_test(size=(140, 40)) as pilot:
        await drawn(pilot)
        said = consequence(host)
    assert said.startswith("The history of triage will be replaced by a new, empty session, so it cannot bring")
    assert "Both" not in said and "agents'" not in said
    assert "  0 fact(s) stay; triage starts a new session" in question_lines(preview)


def question_lines(preview) -> list[str]:
    from workbench.scripts import question

    return question(preview, {"customer": "Contoso"}).splitlines()
