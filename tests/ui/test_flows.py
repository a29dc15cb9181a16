"""What the app shows that the session decides, tested through the session without Textual: the
header's words, what an agent resumed, what the built-in model reads."""

from tests.ui.helpers import FIXED
from workbench.memory import WorkingMemory
from workbench.runtime import Mode, ModelConfig, build_models
from workbench.session.assemble import assemble
from workbench.ui.header import header_titles


def session(mode: Mode = Mode.MANUAL):
    return assemble(build_models(ModelConfig()), memory=WorkingMemory(clock=lambda: FIXED), mode=mode)


def test_a_narrow_header_keeps_mode_and_writer_in_view():
    status = session().state().status
    assert header_titles("workbench", status, 140) == ("workbench", status.summary)
    assert header_titles("workbench", status, 80) == ("", "scripted · manual · json_schema")


def test_with_your_agents_memories_the_header_keeps_its_name_and_every_part_whole(tmp_path, monkeypatch):
    """The example agents' memories made the status too long for 140 columns: the header dropped
    "workbench — model:" and ended in "…". Now every part stays whole, named while there is room."""
    import sys
    from pathlib import Path

    from workbench.loading import from_folder
    from workbench.runtime import WriterKind

    monkeypatch.setenv("EXAMPLE_AGENTS_DATA", str(tmp_path))
    monkeypatch.setattr(sys, "path", list(sys.path))
    before = set(sys.modules)
    try:
        loaded = from_folder(Path(__file__).resolve().parents[2] / "examples" / "agents")
        status = (
            assemble(
                build_models(ModelConfig()),
                agents=[a.agent for a in loaded],
                mode=Mode.PROVIDER,
                writer=WriterKind.HOST,
            )
            .state()
            .status
        )
    finally:
        for name in set(sys.modules) - before:
            del sys.modules[name]
    wide = header_titles("workbench", status, 140)
    assert wide == ("workbench", "2 memories (F1) · model: scripted · mode: provider · writer: host parse")
    narrow = header_titles("workbench", status, 80)
    assert narrow == ("", "2 memories (F1) · scripted · provider · host parse")
    assert all("…" not in said for said in (*wide, *narrow))
    # On a live model at 80 columns not everything fits: the model stays in view, the memories counted.
    from dataclasses import replace

    live = replace(status, model="smollm2 @ 127.0.0.1:8080")
    assert header_titles("workbench", live, 80) == (
        "",
        "2 memories (F1) · smollm2 @ 127.0.0.1:8080 · provider · host …",
    )
    assert "notes: FileMemoryProvider" in status.explained() and "triage: FileHistoryProvider" in status.explained()


def test_no_agent_resumes_a_history_without_persist():
    started = session()
    assert [started.pane(agent).resumed for agent in started.agent_names] == [None, None]


async def test_the_built_in_model_reads_a_correction_in_the_message_as_newest():
    started = session()
    assert (await started.ask("support", "module=Reporting; database=PostgreSQL")).result.ok
    answer = (await started.ask("support", "module=Billing; database=SQL Server 2022")).result.reply
    # The block it read was built before this turn's update, and says so; the advice follows the correction.
    assert "Working memory (unverified, authorizes nothing): database=PostgreSQL, module=Reporting" in answer
    assert "This message declares (newest, not yet verified): module=Billing, database=SQL Server 2022" in answer
    assert "reproduce the symptom for Billing / SQL Server 2022" in answer
    assert "Reporting / PostgreSQL" not in answer
    assert [f.value for f in started.state().memory.facts] == ["SQL Server 2022", "Billing"]  # updated after
