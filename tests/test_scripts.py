"""`workbench remembered` and `workbench forget`, run as a user runs them (a process of their own) over
a real `--persist` folder that a turn through the session wrote: what they print, what a forget leaves
in the folder's bytes, and their exit statuses."""

from __future__ import annotations

import asyncio
import json
import os
import pty
import secrets
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.recall_files import UNREADABLE, earlier_recall, unreadable
from tests.test_startup import HANG, _env, closed_port, holding, start
from workbench import command as command_module
from workbench import scripts
from workbench.cli import main
from workbench.cli.configs import model_config
from workbench.cli.parser import build_parser, parse
from workbench.cli.scripted import forget_words
from workbench.cli.start import load_agents, session_start


def files(folder: Path) -> list[Path]:
    return sorted(p for p in folder.rglob("*") if p.is_file())


def holding_value(folder: Path, value: str) -> list[str]:
    """The raw scan: every file under `folder` whose bytes hold `value` (as typed, or as JSON escapes it)."""
    forms = {value.encode(), json.dumps(value)[1:-1].encode()}
    return [str(p.relative_to(folder)) for p in files(folder) if any(f in p.read_bytes() for f in forms)]


@pytest.fixture
def persisted(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, dict[str, str]]:
    """A data directory whose `--persist` folder holds one turn of the support agent, said through the
    session the TUI starts (`workbench.cli.start.session_start`), and the values it declared (the product's has an ESC)."""
    data = tmp_path / "data"
    monkeypatch.setenv("WORKBENCH_DATA_DIR", str(data))
    tag = secrets.token_hex(4)
    values = {"customer": f"Contoso-{tag}", "product": f"Billing\x1b[31m-{tag}"}
    args = build_parser().parse_args(["--persist"])
    session = session_start(args, model_config(args))()

    async def turn() -> None:
        outcome = await session.ask("support", "; ".join(f"{k}={v}" for k, v in values.items()))
        assert outcome.result.ok

    asyncio.run(turn())
    session.runtime.histories.close()  # type: ignore[attr-defined]  # the workbench quits: the lock goes
    assert holding_value(data, values["customer"]), "the turn was written to the folder"
    return data, values


def run(data: Path, *options: str, as_user: bool = False) -> subprocess.CompletedProcess[str]:
    return start(data, *options, as_user=as_user)


def test_remembered_json_lists_the_fact_and_the_history_with_values_as_typed(persisted):
    data, values = persisted
    done = run(data, "remembered", "--persist", "--json")  # the TUI's options, after the command
    assert (done.returncode, done.stderr) == (0, "")
    listed = json.loads(done.stdout)
    systems = {s["name"]: s for s in listed["systems"]}
    facts = {i["name"]: i["content"] for i in systems["working memory"]["items"] if i["kind"] == "fact"}
    assert facts == values  # the ESC as typed: JSON escapes it, decoding gives it back
    assert "\x1b" not in done.stdout
    histories = {i["name"]: i for i in systems["persisted sessions"]["items"] if i["kind"] == "history"}
    assert values["customer"] in histories["support"]["content"]
    assert set(histories["support"]["keys"]) == {"customer", "product"}
    assert listed["values"]["customer"] == [values["customer"]]
    assert systems["persisted sessions"]["location"] == str(data / "sessions")
    assert listed["completed"] is None


def test_remembered_says_of_each_key_exactly_the_values_a_forget_of_it_removes(persisted):
    """The second declaration of a message, `product` here, read from the state file's JSON: its value
    ends where the JSON string does (it was printed as `"Billing…", "additional_properties": {}}], …`)."""
    data, values = persisted
    done = run(data, "remembered", "--persist", "--json")
    assert done.returncode == 0, done.stderr
    listed = json.loads(done.stdout)["values"]
    args = build_parser().parse_args(["--persist"])
    session = session_start(args, model_config(args))()
    try:
        plans = {key: asyncio.run(session.runtime.forgetting.plan(key)) for key in values}
    finally:
        session.runtime.histories.close()  # type: ignore[attr-defined]
    assert listed == {key: [value] for key, value in values.items()}
    assert listed == {key: sorted(plan.values) for key, plan in plans.items()}
    shown = run(data, "remembered", "--persist").stdout.splitlines()
    product = values["product"].replace("\x1b", "\\x1b")
    assert shown[1:3] == [f'  customer: "{values["customer"]}"', f'  product: "{product}"']


def test_remembered_shows_text_literally_with_hidden_characters_made_visible(persisted):
    data, values = persisted
    done = run(data, "--persist", "remembered")  # the TUI's options, before the command
    assert done.returncode == 0, done.stderr
    assert "\x1b" not in done.stdout
    shown = values["product"].replace("\x1b", "\\x1b")
    assert f'product: "{shown}"' in done.stdout
    assert '- history "support" [keys: customer, product]' in done.stdout


def test_forget_removes_the_key_from_every_holder_and_no_byte_of_its_value_is_left(persisted):
    data, values = persisted
    done = run(data, "forget", "customer", "--persist", "--yes")
    assert (done.returncode, done.stderr) == (0, "")
    lines = done.stdout.splitlines()
    assert lines[0] == "forgot customer: the fact(s) customer removed"
    assert "  agent sessions: 2 message(s)" in lines and "  persisted sessions: 1 file(s)" in lines
    assert holding_value(data, values["customer"]) == []
    assert holding_value(data, values["product"]) != []  # the other fact stays

    listed = json.loads(run(data, "remembered", "--persist", "--json").stdout)
    assert "customer" not in listed["values"] and listed["values"]["product"] == [values["product"]]


def test_forget_everything_as_json(persisted):
    data, values = persisted
    done = run(data, "--persist", "forget", "--all", "--yes", "--json")
    assert (done.returncode, done.stderr) == (0, "")
    report = json.loads(done.stdout)
    assert report["key"] is None and sorted(report["facts_removed"]) == ["customer", "product"]
    assert report["failures"] == {} and report["unreached"] == {} and report["removed"]["agent sessions"] == 2
    assert [p for v in values.values() for p in holding_value(data, v)] == []


def test_a_holder_that_fails_makes_forget_exit_non_zero_and_the_others_still_forget(persisted):
    """A memory file the user made read-only: the memory files holder cannot rewrite it."""
    data, values = persisted
    folder = data / "agent-memory" / "files" / "local-user"
    folder.mkdir(parents=True)
    note = folder / "customer.md"
    # Declared, as the completion below plans from what is left: memory no longer knows the value then.
    note.write_text(f"customer={values['customer']}\n")
    note.chmod(stat.S_IRUSR)
    done = run(data, "forget", "customer", "--persist", "--agent-memory", "files", "--yes", as_user=True)
    assert done.returncode == scripts.NOT_REACHED, done.stderr
    assert "  memory files: NOT reached: PermissionError" in done.stdout
    assert holding_value(data, values["customer"]) == ["agent-memory/files/local-user/customer.md"]

    note.chmod(stat.S_IRUSR | stat.S_IWUSR)  # the user lets it be written: the next start completes the forget
    listed = run(data, "remembered", "--persist", "--agent-memory", "files", "--json", as_user=True)
    assert listed.returncode == 0, listed.stderr
    assert listed.stderr.startswith("workbench remembered: completed the forget of 'customer' cut short at ")
    assert json.loads(listed.stdout)["completed"].startswith("completed the forget of 'customer'")
    assert holding_value(data, values["customer"]) == []


def test_forget_without_yes_and_without_a_terminal_refuses_in_one_line(persisted):
    data, values = persisted
    done = run(data, "forget", "customer", "--persist")
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr.count("\n") == 1 and "add --yes" in done.stderr
    assert holding_value(data, values["customer"])


def test_forget_on_a_terminal_shows_what_goes_and_asks(persisted):
    data, values = persisted
    primary, secondary = pty.openpty()
    command = [sys.executable, "-m", "workbench", "forget", "customer", "--persist"]
    with subprocess.Popen(
        command, env=_env(data), stdin=secondary, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    ) as forget:
        os.close(secondary)
        os.write(primary, b"y\n")
        out, err = forget.communicate(timeout=HANG)
    os.close(primary)
    assert forget.returncode == 0, err
    assert f'Forget customer?\n  removes the fact(s): customer = "{values["customer"]}"\n' in err
    assert "  also removed from: persisted sessions\n" in err and err.endswith("Forget? [y/N] ")
    assert out.startswith("forgot customer")
    assert holding_value(data, values["customer"]) == []


@pytest.mark.parametrize("command", [("remembered",), ("forget", "customer", "--yes")])
def test_a_folder_another_workbench_holds_is_refused_in_one_line(persisted, command):
    data, values = persisted
    with holding(data, "--persist") as pid:
        done = run(data, *command, "--persist")
    assert (done.returncode, done.stdout, done.stderr.count("\n")) == (1, "", 1), done.stderr
    assert done.stderr.startswith(f"workbench {command[0]}: ") and f"another workbench (PID {pid})" in done.stderr
    assert holding_value(data, values["customer"])


def test_a_key_that_is_not_one_is_a_usage_error(tmp_path):
    done = run(tmp_path / "data", "forget", "nam\x1be", "--yes")
    assert (done.returncode, done.stdout) == (2, "")
    assert '"nam\\x1be" is not a key' in done.stderr
    assert not (tmp_path / "data").exists()


def test_a_look_alike_key_is_refused_naming_its_letter(tmp_path):
    done = run(tmp_path / "data", "forget", "m\u043edule", "--yes")
    assert (done.returncode, done.stdout, done.stderr.count("\n")) == (2, "", 1)
    assert '"m\u043edule" is not a key: it contains U+043E CYRILLIC SMALL LETTER O;' in done.stderr


def test_output_whose_reader_went_away_ends_quietly(persisted):
    """`workbench remembered | head -c 10`: the reader is gone before the listing is written."""
    data, _ = persisted
    command = [sys.executable, "-m", "workbench", "remembered", "--persist", "--json"]
    with subprocess.Popen(command, env=_env(data), stdout=subprocess.PIPE, stderr=subprocess.PIPE) as listing:
        assert listing.stdout is not None and listing.stderr is not None
        listing.stdout.close()
        stderr = listing.stderr.read()
        assert (listing.wait(timeout=HANG), stderr) == (command_module.READER_GONE, b"")


def test_your_agents_memories_are_listed_and_forgotten_and_an_unknown_one_is_read_and_named_outside(
    tmp_path, monkeypatch
):
    """`workbench remembered|forget PATH`: the example agents' own files, and a provider the workbench
    does not know, read in the process (it holds nothing there) and what it keeps outside named as not
    known: exit status 0, everything it could see being clear."""
    import shutil

    agents = tmp_path / "agents"
    shutil.copytree(Path(__file__).resolve().parent.parent / "examples" / "agents", agents)
    (agents / "odd.py").write_text(
        "from agent_framework import Agent, ContextProvider\nfrom workbench import ScriptedChatClient\n\n"
        "class Notebook(ContextProvider):\n    pass\n\n"
        "agent = Agent(ScriptedChatClient(), name='odd', context_providers=[Notebook(source_id='notebook')])\n"
    )
    monkeypatch.setenv("EXAMPLE_AGENTS_DATA", str(tmp_path / "example-data"))
    data = tmp_path / "data"
    tag = secrets.token_hex(4)
    with monkeypatch.context() as patch:
        patch.setattr(sys, "path", list(sys.path))
        before = set(sys.modules)
        args = parse([str(agents)])
        session = session_start(args, model_config(args), load_agents(args))()
        asyncio.run(session.ask("triage", f"module=Reporting-{tag}"))
        session.close()  # the run ends: its folders are let go
        for name in set(sys.modules) - before:
            del sys.modules[name]
    assert holding_value(tmp_path / "example-data", f"Reporting-{tag}")

    listed = json.loads(run(data, "remembered", "--json", str(agents)).stdout)
    systems = {s["name"]: s for s in listed["systems"]}
    assert any(f"Reporting-{tag}" in item["content"] for item in systems["triage: FileHistoryProvider"]["items"])
    from workbench.runtime.inprocess import InProcess

    odd = systems["odd: Notebook"]
    assert odd["location"] == InProcess.location and odd["items"][-1]["content"]
    assert "no string there holds a value it knows" in odd["items"][-1]["content"]

    done = run(data, "forget", "module", str(agents), "--yes")
    assert done.returncode == 0, done.stdout + done.stderr  # everything it could see is clear
    lines = done.stdout.splitlines()
    assert f"  odd: Notebook: 0 {InProcess.unit}" in lines
    outside = lines.index("outside what the workbench can see (not known; what it holds there stays):")
    assert lines[outside + 1].startswith("  odd: Notebook: what it keeps outside this process (a server, a file, ")
    assert holding_value(tmp_path / "example-data", f"Reporting-{tag}") == []


@pytest.mark.parametrize(
    ("words", "key", "path"),
    [
        (["forget", "module"], "module", None),
        (["forget", "module", "dir"], "module", "dir"),
        (["forget", "--all", "--yes", "dir"], None, "dir"),
    ],
)
def test_forget_reads_its_key_and_path_from_its_words(words, key, path):
    args = parse(words)
    assert forget_words(args.words, everything=getattr(args, "all", False)) == (key, path)


@pytest.mark.parametrize("how", UNREADABLE)
def test_forget_with_an_earlier_recall_store_that_cannot_be_read_says_so_in_one_line_and_keeps_its_record(
    tmp_path, monkeypatch, capsys, how
):
    """Recall off: the store an earlier run left cannot be opened. The forget reaches every other holder,
    says the store was NOT reached in one line (no traceback) and exits 3; its record stays, so each
    later start tries it again, says so in one line and goes on; once the store can be opened again,
    the next start completes the forget and no byte of the value is left."""
    data = tmp_path / "data"
    monkeypatch.setenv("WORKBENCH_DATA_DIR", str(data))
    value = f"Contoso-{secrets.token_hex(4)}"
    asyncio.run(earlier_recall(data / "recall.duckdb", f"customer={value}"))
    with unreadable(data / "recall.duckdb", how) as why:
        assert main(["forget", "customer", "--yes"]) == scripts.NOT_REACHED
        out, err = capsys.readouterr()
        (line,) = [line for line in out.splitlines() if "recall store" in line]
        assert line.startswith("  recall store: NOT reached: IOException: ") and why in line
        assert "Traceback" not in out + err and (data / "forget-pending.json").exists()

        assert main(["remembered"]) == 0
        out, err = capsys.readouterr()
        assert err.count("\n") == 1 and err.startswith("workbench remembered: could not complete the forget of ")
        assert "recall store NOT reached (IOException: " in err
        assert f"could not be read: IOException: {'IO Error: '}" in out and why in out
    if how == "corrupt":
        return  # left as it is: only the user can say what it was
    listed = run(data, "remembered", "--json")  # the workbench that held it quit
    assert listed.returncode == 0, listed.stderr
    assert listed.stderr.startswith("workbench remembered: completed the forget of 'customer' cut short at ")
    assert not (data / "forget-pending.json").exists() and holding_value(data, value) == []


def test_forget_with_a_recall_server_that_cannot_be_reached_says_so_in_one_line(tmp_path, monkeypatch, capsys):
    """WORKBENCH_RECALL_POSTGRES names a server that refuses, recall off: the other holders forget."""
    monkeypatch.setenv("WORKBENCH_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("WORKBENCH_RECALL_POSTGRES", f"postgresql://me:s3cret-pw@127.0.0.1:{closed_port()}/recall")
    assert main(["forget", "customer", "--yes"]) == scripts.NOT_REACHED
    out, err = capsys.readouterr()
    (line,) = [line for line in out.splitlines() if "recall store" in line]
    assert line.startswith("  recall store: NOT reached: ") and "Connection refused" in line
    assert "Traceback" not in out + err and "s3cret-pw" not in out + err
    assert main(["remembered"]) == 0
    out, err = capsys.readouterr()
    assert err.count("\n") == 1 and "recall store NOT reached" in err and "s3cret-pw" not in out + err
    assert "could not be read: " in out


def test_ctrl_c_at_the_forget_question_stops_at_once_in_one_line_with_status_130(persisted):
    """It did nothing until Enter (asyncio's handler only cancels its task), then printed a traceback."""
    import signal

    data, values = persisted
    primary, secondary = pty.openpty()
    command = [sys.executable, "-m", "workbench", "forget", "--all", "--persist"]
    with subprocess.Popen(
        command, env=_env(data), stdin=secondary, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    ) as forget:
        os.close(secondary)
        assert forget.stderr is not None
        asked = b""
        while not asked.endswith(b"Forget? [y/N] "):  # the question is whole: it reads the answer now
            asked += os.read(forget.stderr.fileno(), 4096) or b"(closed)"
            assert not asked.endswith(b"(closed)"), asked
        forget.send_signal(signal.SIGINT)  # as the terminal sends it for Ctrl+C; no Enter follows
        out, err = forget.communicate(timeout=HANG)
    os.close(primary)
    assert (forget.returncode, out, err) == (command_module.INTERRUPTED, b"", b"workbench: interrupted (Ctrl+C)\n")
    assert holding_value(data, values["customer"])


@pytest.mark.parametrize("words", [["--help"], ["remembered", "--help"], ["forget", "--help"]], ids=" ".join)
def test_help_says_the_agents_not_both_as_the_users_agents_may_be_one_or_three(words, capsys):
    """Help is static and `--agents`/PATH load any number of agents: --persist, remembered and forget said
    "both agents" (the tester of issue 36, with one agent of theirs loaded)."""
    for parser in (build_parser(), build_parser(path=True)) if words == ["--help"] else (build_parser(),):
        with pytest.raises(SystemExit):
            parser.parse_args(words)
        shown = " ".join(capsys.readouterr().out.split())
        assert "both agents" not in shown.lower()
        assert "the agents' sessions" in shown or "the agents' histories" in shown
