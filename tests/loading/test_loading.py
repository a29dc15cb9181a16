"""The user's agents load the way DevUI loads them (a folder, `module:attribute`, `serve`), and
whatever cannot be used stops the start with one line naming the file and the problem, exit 2."""

import sys
import textwrap
from pathlib import Path

import pytest
from agent_framework import Agent

import workbench
from workbench.cli.dispatch import main
from workbench.cli.parser import parse
from workbench.loading import LoadFailed, from_folder, from_objects, from_reference

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "agents"
SCRIPTED_AGENT = """
from agent_framework import Agent
from workbench import ScriptedChatClient
"""


@pytest.fixture(autouse=True)
def _fresh_modules(monkeypatch, tmp_path):
    """Each test imports its own modules: what it imported is forgotten afterwards."""
    before = set(sys.modules)
    monkeypatch.setenv("EXAMPLE_AGENTS_DATA", str(tmp_path / "data"))
    monkeypatch.setattr(sys, "path", list(sys.path))
    yield
    for name in set(sys.modules) - before:
        del sys.modules[name]


def write(folder: Path, name: str, body: str) -> Path:
    path = folder / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(SCRIPTED_AGENT + textwrap.dedent(body))
    return path


def test_the_example_folder_loads_both_agents_by_name():
    loaded = from_folder(EXAMPLES)
    assert [(a.name, Path(a.source).relative_to(EXAMPLES).as_posix()) for a in loaded] == [
        ("notes", "notes.py"),
        ("triage", "triage/__init__.py"),
    ]


def test_a_folder_takes_packages_and_files_exporting_agent_or_agents_and_skips_private_entries(tmp_path):
    write(tmp_path, "alpha/__init__.py", "from .made import agent\n")
    write(tmp_path, "alpha/made.py", "agent = Agent(ScriptedChatClient(), name='alpha')\n")
    write(
        tmp_path,
        "pair.py",
        "agents = [Agent(ScriptedChatClient(), name='b1'), Agent(ScriptedChatClient(), name='b2')]\n",
    )
    write(tmp_path, "_private.py", "raise SystemExit('never imported')\n")
    write(tmp_path, "helpers.py", "VALUE = 1\n")  # exports no agent: not an entry
    assert [a.name for a in from_folder(tmp_path)] == ["alpha", "b1", "b2"]


def test_a_reference_takes_an_agent_a_list_or_a_function(tmp_path):
    write(
        tmp_path,
        "mine.py",
        """
        one = Agent(ScriptedChatClient(), name="one")
        both = [one, Agent(ScriptedChatClient(), name="two")]
        def make():
            return Agent(ScriptedChatClient(), name="made")
        class Team:
            lead = Agent(ScriptedChatClient(), name="lead")
        """,
    )
    sys.path.insert(0, str(tmp_path))
    assert [a.name for a in from_reference("mine:one")] == ["one"]
    assert [a.name for a in from_reference("mine:both")] == ["one", "two"]
    assert [a.name for a in from_reference("mine:make")] == ["made"]
    assert [a.name for a in from_reference("mine:Team.lead")] == ["lead"]


def test_serve_opens_on_the_agents_given_and_refuses_what_is_not_an_agent(capsys):
    agent = Agent(workbench.ScriptedChatClient(), name="given")
    assert [a.name for a in from_objects([agent])] == ["given"]
    assert workbench.serve(agents=[agent, "not an agent"]) == 2
    assert capsys.readouterr().err == "workbench: serve(agents=...): a builtins.str is not an Agent Framework Agent\n"


@pytest.mark.parametrize(
    ("files", "argv", "where", "problem"),
    [
        (
            {"broken.py": "import no_such_module_here\nagent = None\n"},
            ["{dir}", "--strict"],
            "broken.py",
            "ModuleNotFoundError: No module named",
        ),
        ({"odd.py": "agent = 42\n"}, ["{dir}", "--strict"], "odd.py", "a builtins.int is not an Agent Framework Agent"),
        (
            {
                "a.py": "agent = Agent(ScriptedChatClient(), name='x')\n",
                "b.py": "agent = Agent(ScriptedChatClient(), name='x')\n",
            },
            ["{dir}", "--strict"],
            "b.py",
            "two agents are named 'x' (the other comes from",
        ),
        ({}, ["{dir}/missing"], "missing", "no such folder"),
        (
            {"e.py": "agent = Agent(ScriptedChatClient(), name='ev\\x1bil')\n"},
            ["{dir}", "--strict"],
            "e.py",
            "nothing invisible",
        ),
        ({"none.py": "VALUE = 1\n"}, ["{dir}"], "", "exports no agent"),
        (
            {"m.py": "agent = Agent(ScriptedChatClient(), name='m')\n"},
            ["--agents", "m:nothing"],
            "m:nothing",
            "has no attribute nothing",
        ),
        ({}, ["--agents", "just_a_module"], "just_a_module", "expected module:attribute"),
        (
            {"f.py": "def agent():\n    return None\n"},
            ["{dir}", "--strict"],
            "f.py",
            "the function returned a builtins.NoneType",
        ),
        (
            {"anon.py": "agent = Agent(ScriptedChatClient())\n"},
            ["--agents", "anon:agent"],
            "anon:agent",
            "an agent has no name",
        ),
    ],
)
def test_what_cannot_be_used_stops_the_start_with_one_line_and_exit_2(tmp_path, capsys, files, argv, where, problem):
    """With --strict, a folder is all or nothing, as before; --agents always is."""
    for name, body in files.items():
        write(tmp_path, name, body)
    sys.path.insert(0, str(tmp_path))
    assert main([a.format(dir=tmp_path) for a in argv]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("workbench: ")
    assert where in err and problem in err


def test_a_load_error_shows_hostile_text_literally_and_bounded(tmp_path):
    write(tmp_path, "loud.py", "raise RuntimeError('\\x1b[2J' + 'x' * 5000)\nagent = None\n")
    with pytest.raises(LoadFailed) as failed:
        from_folder(tmp_path)
    line = str(failed.value)
    assert "\x1b" not in line and "\\x1b[2J" in line and len(line) < 600


def test_two_commands_names_are_not_taken_for_a_folder(tmp_path):
    args = parse(["drift", str(tmp_path)])
    assert (args.command, args.path) == ("drift", str(tmp_path))
    args = parse([str(tmp_path), "--mode", "manual"])
    assert (args.command, args.path, args.mode) == (None, str(tmp_path), "manual")


def test_a_reference_imports_from_the_current_folder_as_python_m_does(tmp_path, monkeypatch):
    """The `workbench` script's own folder is first on sys.path, not the one the user is in."""
    write(tmp_path, "here_agents.py", "agent = Agent(ScriptedChatClient(), name='here')\n")
    monkeypatch.chdir(tmp_path)
    assert [a.name for a in from_reference("here_agents:agent")] == ["here"]
