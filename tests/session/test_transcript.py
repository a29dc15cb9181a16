"""The conversation as the lab replays it: questions judged by the app's own rule."""

from tests.memory.helpers import say as admit
from workbench.memory import Status, WorkingMemory
from workbench.session.transcript import Transcript


def test_a_lookalike_declaration_is_no_question_for_the_export_as_for_the_app():
    """`café=1` is rejected by name as a declaration, so the export does not tick it as a question."""
    assert admit(WorkingMemory(), "café=1").status is Status.REJECTED
    transcript = Transcript()
    for text in ("café=1", "Which module is it?"):
        transcript.said("support", text)
    assert [text for _, _, text in transcript.questions()] == ["Which module is it?"]
