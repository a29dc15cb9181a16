"""`workbench drift`: tables for people, --json for machines, a clear non-zero exit when it stops."""

import contextlib
import io
import json
import re

import pytest

from tests.support.openai_server import Canned
from workbench.cli import main
from workbench.drift import POLICIES

# Mem0 needs a live model and --embedding-model (its row says what it needs), so a run without them has no Mem0 cells.
WITHOUT_EMBEDDINGS = [p.name for p in POLICIES if not p.needs_embedding_model]
SCRIPTED_UNAVAILABLE = {
    "memory_files": "needs --model: only a model that calls functions writes memory files",
    "mem0": "needs --model (a live model extracts Mem0's memories; the built-in script would fake them)",
}


def test_json_output_shape(capsys):
    assert main(["drift", "--json", "--turns", "12"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert set(data) == {
        "chronology",
        "turns",
        "model",
        "live",
        "seconds",
        "partial",
        "stop",
        "failures",
        "unavailable",
        "intake",
        "warnings",
        "policies",
        "left_out",
        "probes",
        "matrix",
        "accounting",
        "request_chars_by_turn",
    }
    assert data["warnings"] == {} and data["left_out"] == []
    assert data["intake"]["facts"]["batches"] > 0 and data["intake"]["facts"]["batches_rejected"] == 0
    assert not any(i["received_nothing"] for i in data["intake"].values())
    assert data["partial"] is False and data["stop"] is None and data["failures"] == {}
    assert data["turns"] == 12 and data["live"] is False and data["model"].startswith("scripted")
    names = [p["name"] for p in data["policies"]]
    assert names == [
        *("full", "window", "summary", "facts", "compaction", "recall", "recall_purged"),
        *("persisted", "memory_files", "extracted", "mem0"),
    ]
    assert [p["id"] for p in data["probes"]] == ["restart", "scope"]
    assert data["probes"][0]["forgotten"] == {"customer": ["Contoso"]}
    cell = data["matrix"]["facts"]["scope"]
    assert set(cell) == {
        "request_chars",
        "current",
        "superseded",
        "prohibition",
        "forgotten",
        "answer",
        "answer_expected",
        "answer_expected_any",
        "answer_forbidden",
    }
    restart = data["probes"][0]
    assert restart["about_prohibition"] is True and restart["expect"] == []
    assert restart["expect_any"][0] == "no downtime during business hours" and "business hours" in restart["why"]
    assert set(data["matrix"]["full"]["restart"]["answer_expected_any"]) == set(restart["expect_any"])
    assert data["probes"][1]["expect"] == ["SQL Server 2022", "Billing"] and data["probes"][1]["derived"] is True
    assert data["matrix"]["full"]["scope"]["answer_forbidden"] == {
        "Contoso": True,
        "PostgreSQL": True,
        "Reporting": True,
    }
    # The request size at every turn, from turn 1, where provenance makes facts larger than a short history.
    sizes = data["request_chars_by_turn"]
    assert data["unavailable"] == SCRIPTED_UNAVAILABLE
    assert "mem0" not in data["matrix"] and "mem0" not in data["accounting"]
    measured = [name for name in names if name not in data["unavailable"]]
    assert all(len(sizes[name]) == 12 for name in measured)
    assert sizes["facts"][0] > sizes["full"][0] and sizes["facts"][-1] < sizes["full"][-1]
    assert cell["forgotten"] == {"Contoso": False} and cell["prohibition"] is False
    for name in measured:
        cost = data["accounting"][name]
        assert set(cost) == {
            "calls",
            "request_chars",
            "estimated_tokens",
            "reported_tokens",
            "retained_history",
            "seconds",
            "framework_seconds",
        }
        assert 0 <= cost["framework_seconds"] <= cost["seconds"]
        # Only the framework's providers that re-read their files are timed as its share.
        assert (cost["framework_seconds"] > 0) is (name == "extracted"), name  # persisted history is the workbench's
        assert cost["reported_tokens"] is None  # the built-in model reports nothing: unknown, not zero
        assert cost["estimated_tokens"] == cost["request_chars"] // 4


@pytest.fixture(scope="module")
def piped() -> tuple[str, str]:
    """`workbench drift --turns 12 > file` at COLUMNS=80: its stdout and stderr (one run for the tests
    that read the tables a pipe receives)."""
    out, err = io.StringIO(), io.StringIO()
    with pytest.MonkeyPatch.context() as patch, contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        patch.setenv("COLUMNS", "80")
        assert main(["drift", "--turns", "12"]) == 0  # a short run: its rows are wider than 80 columns already
    return out.getvalue(), err.getvalue()


def test_tables_name_no_winner(piped):
    out, _ = piped
    assert (
        'probe "restart"' in out
        and 'expect "SQL Server 2022", "Billing"' in out
        and "reported tokens" in out
        and "unknown" in out
    )
    assert "no policy is ranked" in out.replace("\n", " ")
    for word in ("winner", "best", "recommended"):
        assert word not in out.lower()


def test_a_bad_summary_fails_that_policy_and_the_others_go_on(loopback, capsys):
    loopback.state.responder = lambda body: (
        Canned(text="") if "summarizer agent" in body["messages"][0]["content"] else None
    )
    policies = "full,summary,facts,recall_purged"
    code = main(
        ["drift", "--model", "loopback-model", "--base-url", loopback.base_url, "--json", "--policies", policies]
    )
    captured = capsys.readouterr()
    assert code == 0 and captured.err.count("\n") == 1
    assert "generated summary: failed, the other policies went on" in captured.err
    data = json.loads(captured.out)
    assert data["partial"] is False and data["stop"] is None
    assert data["failures"] == {
        "summary": {"turn": 1, "reason": "the summarizer returned an empty summary; no replacement text is used"}
    }
    assert data["matrix"]["summary"] == {} and set(data["matrix"]["recall_purged"]) == {"restart", "scope"}
    assert data["matrix"]["full"]["scope"]["current"]["module"] is True


def test_a_failed_policy_is_marked_in_the_tables_and_the_stop_line_says_it_once(loopback, capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "240")
    loopback.state.responder = lambda body: (
        Canned(text="") if "summarizer agent" in body["messages"][0]["content"] else None
    )
    policies = ["--policies", "full,summary,facts"]
    assert main(["drift", "--model", "loopback-model", "--base-url", loopback.base_url, *policies]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "PARTIAL" not in out and "generated summary failed at turn 1: the summarizer returned an empty" in out
    assert "failed at turn 1: the summarizer returned an empty summary" in out
    assert "generated summary (failed at turn 1)" in out and "not measured (the comparison stopped)" not in out


def test_answers_that_revive_a_superseded_value_are_scored_as_revived(loopback, tmp_path, capsys):
    path = tmp_path / "mine.json"
    path.write_text(
        json.dumps(
            {
                "name": "mine",
                "steps": [
                    {"say": "module=Reporting; database=PostgreSQL"},
                    {"say": "module=Billing; database=SQL Server 2022"},
                    {"say": "Which database do we use?", "probe": "db"},
                    {
                        "say": "What should I check first?",
                        "probe": "given",
                        "expect": ["billing"],
                        "forbid": ["reporting"],
                    },
                ],
            }
        ),
        encoding="utf-8",
    )
    loopback.state.responder = lambda body: (
        None
        if "summarizer agent" in json.dumps(body["messages"]) or "response_format" in body
        else Canned(text="It is PostgreSQL, in the Reporting module.")
    )
    code = main(["drift", "--chronology", str(path), "--model", "m", "--base-url", loopback.base_url, "--json"])
    captured = capsys.readouterr()
    data = json.loads(captured.out)
    assert code == 0 and data["chronology"] == "mine"
    db, _ = data["probes"]
    assert (db["expect"], db["forbid"], db["derived"]) == (["SQL Server 2022"], ["PostgreSQL"], True)
    # The same prose answered every extraction prompt: the extracted memory received nothing, so it is a
    # failed policy with the first reason, and the framework's warnings are in the report, not on stderr.
    assert data["matrix"]["extracted"] == {}
    assert "memory calls failed or stored nothing" in data["failures"]["extracted"]["reason"]
    assert "invalid JSON" in data["failures"]["extracted"]["reason"]
    assert data["intake"]["extracted"]["extractions_failed"] == data["intake"]["extracted"]["memory_calls"] > 0
    [warning] = data["warnings"]["extracted"]
    assert warning["message"].startswith("Skipping memory extraction: extractor returned invalid JSON")
    assert warning["count"] == data["intake"]["extracted"]["memory_calls"]
    assert "Skipping" not in captured.err
    for name in (n for n in WITHOUT_EMBEDDINGS if n != "extracted"):
        assert data["matrix"][name]["db"]["answer_expected"] == {"SQL Server 2022": False}
        assert data["matrix"][name]["db"]["answer_forbidden"] == {"PostgreSQL": True}  # revived
        assert data["matrix"][name]["given"]["answer_expected"] == {"billing": False}
        assert data["matrix"][name]["given"]["answer_forbidden"] == {"reporting": True}  # case-insensitive


def test_a_bad_chronology_file_lists_its_problems_without_a_traceback(tmp_path, capsys):
    path = tmp_path / "bad.json"
    path.write_text(json.dumps({"name": "b", "steps": [{"say": "hi", "forget": "password"}, {"probe": "p"}]}))
    assert main(["drift", "--chronology", str(path)]) == 2
    err = capsys.readouterr().err
    assert "bad.json: 2 problems" in err and "Traceback" not in err
    assert 'step 1, field "forget"' in err and 'step 2, field "probe"' in err


def test_the_sweep_json_shape(capsys):
    assert main(["drift", "--sweep", "10,14", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert set(data) == {"chronology", "model", "lengths", "left_out", "partial", "stop", "runs"}
    assert data["left_out"] == [] and data["lengths"] == [10, 14] and data["partial"] is False and data["stop"] is None
    assert [run["turns"] for run in data["runs"]] == [10, 14]
    for run in data["runs"]:
        assert set(run) == {
            "turns",
            "seconds",
            "partial",
            "policies",
            "request_chars_by_turn",
            "unavailable",
            "failures",
        }
        assert run["unavailable"] == SCRIPTED_UNAVAILABLE
        assert list(run["policies"]) == [p.name for p in POLICIES if p.name not in SCRIPTED_UNAVAILABLE]
        for cell in run["policies"].values():
            assert set(cell) == {"request_chars_at_last_probe", "chars_sent", "calls", "seconds"}
        assert all(len(sizes) == run["turns"] for sizes in run["request_chars_by_turn"].values())
    full = [run["policies"]["full"]["request_chars_at_last_probe"] for run in data["runs"]]
    facts = [run["policies"]["facts"]["request_chars_at_last_probe"] for run in data["runs"]]
    assert full[1] > full[0] and facts[1] - facts[0] < 10


def test_the_sweep_table_and_chart(capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "200")
    assert main(["drift", "--sweep", "10,12", "--policies", "full,facts"]) == 0
    out = capsys.readouterr().out
    assert "request chars at the last probe" in out and "request size at every turn" in out
    assert "b bounded facts" in out and "f full history" in out


@pytest.mark.parametrize("bad", ["10,x", "100,10", "0,10", "10,10", "10,", "1e3"])
def test_bad_sweep_lengths_exit_2(bad, capsys):
    with pytest.raises(SystemExit) as exit:
        main(["drift", "--sweep", bad])
    assert exit.value.code == 2 and "--sweep" in capsys.readouterr().err


def test_progress_stays_off_when_stderr_is_not_a_terminal(piped):
    assert piped[1] == ""


def test_an_unreachable_model_stops_with_a_clear_message(capsys):
    assert (
        main(
            [
                "drift",
                "--model",
                "m",
                "--base-url",
                "http://127.0.0.1:9/v1",
                "--timeout",
                "5",
                "--policies",
                "full,window",
            ]
        )
        == 1
    )
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert "stopped at full history, turn 1 (the server cannot be reached): cannot reach http://127.0.0.1:9/v1" in err
    assert err.count("turn 1") == 1 and err.count("full history") == 1  # the stop line does not repeat itself


def test_live_answers_are_labelled_as_that_models_answers(loopback, capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "300")
    assert main(["drift", "--model", "loopback-model", "--base-url", loopback.base_url, "--policies", "full"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "what loopback-model @ 127.0.0.1" in out and "answered (that model's answers, not a verdict)" in out


def test_piped_tables_are_not_wrapped(piped):
    """`workbench drift > file`: each table row on one line, every number whole, at any COLUMNS."""
    lines = piped[0].splitlines()
    for policy in POLICIES:
        if policy.name in SCRIPTED_UNAVAILABLE:  # the built-in model runs no such policy: its row says why
            assert any(line.startswith(f"│ {policy.title} ") and "needs --model" in line for line in lines)
            continue
        row = next(line for line in lines if line.startswith(f"│ {policy.title} ") and "unknown" in line)
        framework = r"( \(\d+\.\d\d s in the framework's providers\))?"
        assert re.search(
            r" [\d,]+ messages?, [\d,]+ chars(; [\d,]+ bytes on disk)? +│ \d+\.\d\d s" + framework + " +│$", row
        )
    assert max(len(line) for line in lines if "request size at every turn" not in line) > 80


class _Terminal(io.StringIO):
    """stdout and stderr as one terminal: what a person sees, in the order it was written."""

    def isatty(self) -> bool:
        return True


@pytest.mark.parametrize("argv", [["--sweep", "10,12"], ["--turns", "12"]])
def test_progress_is_gone_before_the_report_is_printed(argv, monkeypatch):
    terminal = _Terminal()
    monkeypatch.setattr("sys.stdout", terminal)
    monkeypatch.setattr("sys.stderr", terminal)
    assert main(["drift", *argv, "--policies", "full,facts"]) == 0
    written = terminal.getvalue()
    first = "sweep · " if argv[0] == "--sweep" else "drift lab · "
    start = written.index(first)
    assert "turns" in written[:start] and "━" in written[:start]  # progress was shown, then cleared
    report = written[start:]
    for control in ("\x1b[1A", "\x1b[2K", "\x1b[?25h", "━╸", "12/12"):
        assert control not in report, control  # nothing of the progress display after the report starts


@pytest.mark.parametrize(
    ("argv", "said"),
    [
        (["--turns", "3"], "argument --turns: the chronology needs at least 10 turns; 3 asked"),
        (["--turns", "abc"], 'argument --turns: takes a number of turns, more than 0; not "abc"'),
        (["--turns", "0"], 'argument --turns: takes a number of turns, more than 0; not "0"'),
        (["--turns", "100000"], "argument --turns: at most 2,000 turns; 100,000 asked"),
        (
            ["--sweep", "10,abc"],
            'argument --sweep: takes turn counts separated by commas, like 10,100,1000; not "10,abc"',
        ),
        (["--sweep", "10,5000"], "argument --sweep: at most 2,000 turns; 5,000 asked"),
        (["--sweep", "3,10"], "argument --sweep: the chronology needs at least 10 turns; 3 asked"),
        (["--turns", "50", "--sweep", "10,20"], "--sweep and --turns cannot be combined"),
        (["--timeout", "nan"], 'argument --timeout: takes a number of seconds, more than 0; not "nan"'),
        (["--timeout", "-1"], 'argument --timeout: takes a number of seconds, more than 0; not "-1"'),
        (["--policies", "full,nope"], 'argument --policies: no policy is named "nope"; the policies: full, window,'),
        (["--policies", "yours:mine"], 'no policy is named "yours:mine"; the policies: full, window, summary,'),
        (["--sweep", "10,12", "--policies", "Full"], 'no policy is named "Full"'),
        (["--policies", "full,"], "argument --policies: takes policy names separated by commas, like full,facts; not"),
        (["--policies", "fu\nll"], 'no policy is named "fu\\nll"'),  # one line, the break shown
        (["--policies", "full\x1f,\u3000facts"], 'no policy is named "full\\x1f"'),  # nothing dropped unseen
    ],
)
def test_usage_errors_exit_2_with_one_line(argv, said, capsys):
    try:
        code: object = main(["drift", *argv])
    except SystemExit as exc:  # argparse's own exit, through Parser.error
        code = exc.code
    captured = capsys.readouterr()
    assert code == 2
    assert captured.out == "" and captured.err.count("\n") == 1 and said in captured.err, captured.err
    assert captured.err.startswith("workbench drift: ") and captured.err.rstrip().endswith("(see --help)")
    assert "'" not in captured.err and captured.err.startswith("workbench drift: ")


def test_the_clis_policy_names_are_the_labs():
    from workbench.cli import parser

    assert list(parser.POLICY_NAMES) == [p.name for p in POLICIES]


def test_the_cli_maximum_is_the_labs():
    from workbench.chronology import MAX_TURNS
    from workbench.cli import parser

    assert parser.MAX_TURNS == MAX_TURNS


def test_a_password_in_the_server_url_is_said_nowhere(loopback, capsys):
    """A base URL with a user name and password (as some proxies take it): the report names the model by
    host and port only, on stdout and stderr alike."""
    url = loopback.base_url.replace("http://", "http://user:sk-SECRETVALUE123@")
    assert main(["drift", "--model", "loopback-model", "--base-url", url, "--policies", "full,facts"]) == 0
    captured = capsys.readouterr()
    assert "loopback-model @ 127.0.0.1:" in captured.out
    assert "SECRETVALUE" not in captured.out + captured.err and "user:" not in captured.out + captured.err
