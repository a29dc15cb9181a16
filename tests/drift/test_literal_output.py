"""`workbench drift` shows what a model wrote literally: no escape sequence, markup or hidden
character reaches the terminal, in the tables or the JSON, and the JSON still decodes to it."""

import json

from tests.support.openai_server import Canned
from workbench.cli import main

HOSTILE = (
    "\x1b[2J\x1b[31mred\x1b[0m \x1b]0;pwned title\x07 \x1b]8;;https://evil.example\x1b\\link\x1b]8;;\x1b\\ "
    "\x9b31m C1 \u202eevil\u2066 [bold red]markup[/] :smile: tag\U000e0041 ok"
)
RAW = ("\x1b", "\x9b", "\x07", "\u202e", "\u2066", "\U000e0041")


def answering(text):
    def responder(body):
        instructions = body["messages"][0]["content"]
        helper = any(f"{role} agent" in instructions for role in ("writer", "summarizer"))
        return None if helper or body.get("response_format") else Canned(text=text)

    return responder


def test_tables_show_a_models_escape_sequences_as_text(loopback, capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "4000")  # wide enough that no cell folds
    loopback.state.responder = answering(HOSTILE)
    assert main(["drift", "--model", "loopback-model", "--base-url", loopback.base_url]) == 0
    out = capsys.readouterr().out
    assert not any(ch in out for ch in RAW)
    assert "\\x1b[2J\\x1b[31mred" in out and "\\x9b31m" in out and "\\u202eevil" in out
    assert "[bold red]markup[/] :smile:" in out  # neither markup nor emoji codes applied


def test_json_escapes_them_and_decodes_to_what_the_model_wrote(loopback, capsys):
    loopback.state.responder = answering(HOSTILE)
    assert main(["drift", "--json", "--model", "loopback-model", "--base-url", loopback.base_url]) == 0
    out = capsys.readouterr().out
    assert not any(ch in out for ch in RAW)
    data = json.loads(out)
    answers = [cell["answer"] for probes in data["matrix"].values() for cell in probes.values()]
    assert answers and set(answers) == {HOSTILE}


def test_a_huge_answer_is_cut_with_its_length(loopback, capsys):
    loopback.state.responder = answering("A" * 50_000)
    policies = ["--policies", "full"]
    assert main(["drift", "--json", "--model", "loopback-model", "--base-url", loopback.base_url, *policies]) == 0
    data = json.loads(capsys.readouterr().out)
    answer = data["matrix"]["full"]["restart"]["answer"]
    assert len(answer) <= 4_000 and answer.endswith("[cut: 50,000 characters in all]")


def test_a_chronologys_name_is_shown_literally_in_the_chart_title_too(tmp_path, capsys):
    """The name is the user's text: the chart's title is drawn by plotext and read back as ANSI, so a raw
    text-direction override there reordered the title on the terminal."""
    story = tmp_path / "story.json"
    name = "evil\u202eeman \x1b]0;p\x07"  # short: plotext leaves out a title wider than the chart
    story.write_text(
        json.dumps({"name": name, "steps": [{"say": "module=Billing"}, {"say": "Which module?", "probe": "q"}]})
    )
    assert main(["drift", "--chronology", str(story), "--policies", "full,facts"]) == 0
    out = capsys.readouterr().out
    assert not any(ch in out for ch in RAW)
    assert out.count("evil\\u202eeman \\x1b]0;p\\x07") == 2  # the report's title and the chart's
