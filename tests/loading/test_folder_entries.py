"""A folder loads what loads, as DevUI does: every entry that imports is kept, and each one that does
not is said in one line with its file and its reason (on stderr, in the app's notice, in what is
remembered); the start stops only when nothing loads, or at the first failure with --strict. An agent
without a name takes its entry's name, said as such."""

import sys
from pathlib import Path

import pytest

from tests.loading.helpers import _fresh_modules  # noqa: F401  (the fixture, used by every test here)
from tests.loading.test_loading import write
from workbench.cli.dispatch import main
from workbench.loading import LoadFailed, load_folder

MISSING_OPTIONAL = "import agent_framework_lab_not_installed  # an optional package the user has not installed\n"


def broken_and_good(folder: Path) -> None:
    write(folder, "a_broken/__init__.py", MISSING_OPTIONAL + "agent = Agent(ScriptedChatClient(), name='never')\n")
    write(folder, "b_good.py", "agent = Agent(ScriptedChatClient(), name='good')\n")
    write(folder, "c_odd.py", "agent = 42\n")
    write(folder, "weather_agent/__init__.py", "agent = Agent(ScriptedChatClient(), instructions='weather')\n")
    write(folder, "d_twin.py", "agent = Agent(ScriptedChatClient(), name='good')\n")


def test_a_folder_loads_every_entry_that_loads_and_names_each_one_that_does_not(tmp_path):
    broken_and_good(tmp_path)
    loaded = load_folder(tmp_path)
    assert [(a.name, a.label) for a in loaded.agents] == [
        ("good", "good"),
        ("weather_agent", "weather_agent (folder name)"),
    ]
    lines = [str(failed) for failed in loaded.skipped]
    assert lines == [
        f"{tmp_path / 'a_broken' / '__init__.py'}: ModuleNotFoundError: No module named "
        "'agent_framework_lab_not_installed'",
        f"{tmp_path / 'c_odd.py'}: a builtins.int is not an Agent Framework Agent",
        f"{tmp_path / 'd_twin.py'}: two agents are named 'good' (the other comes from {tmp_path / 'b_good.py'})",
    ]
    notice = loaded.notice()
    assert notice is not None
    shown = notice.splitlines()
    assert shown[:2] == [
        "not loaded: a_broken/__init__.py: ModuleNotFoundError: No module named 'agent_framework_lab_not_installed'",
        "not loaded: c_odd.py: a builtins.int is not an Agent Framework Agent",
    ]
    assert shown[2].startswith("not loaded: d_twin.py: two agents are named 'good'") and "[cut: " in shown[2]
    assert shown[3:] == ["(each in full on stderr and in What is remembered, F3)", "named weather_agent (folder name)"]


def test_a_file_that_binds_no_export_is_not_imported_as_devui_reads_it(tmp_path):
    """A launcher that builds its agents inside main() (DevUI's own main.py) is no entry: never run."""
    write(
        tmp_path,
        "main.py",
        "raise SystemExit('never imported')\ndef main():\n    agent = Agent(ScriptedChatClient())\n",
    )
    write(
        tmp_path,
        "guarded.py",
        "try:\n    agent = Agent(ScriptedChatClient(), name='guarded')\nexcept ImportError:\n    pass\n",
    )
    loaded = load_folder(tmp_path)
    assert ([a.name for a in loaded.agents], loaded.skipped) == (["guarded"], ())


def test_strict_stops_at_the_first_entry_that_does_not_load(tmp_path):
    broken_and_good(tmp_path)
    with pytest.raises(LoadFailed) as failed:
        load_folder(tmp_path, strict=True)
    assert failed.value.where == str(tmp_path / "a_broken" / "__init__.py")


def test_the_name_given_is_the_entrys_and_the_users_agent_keeps_its_own(tmp_path):
    write(tmp_path, "solo.py", "agent = Agent(ScriptedChatClient())\n")
    write(tmp_path, "twins.py", "agents = [Agent(ScriptedChatClient()), Agent(ScriptedChatClient())]\n")
    write(tmp_path, "many.py", "agents = [Agent(ScriptedChatClient()), Agent(ScriptedChatClient(), name='kept')]\n")
    loaded = load_folder(tmp_path)
    assert [(a.name, a.named_by) for a in loaded.agents] == [
        ("many", "module name"),
        ("kept", None),
        ("solo", "module name"),
        ("twins_1", "module name"),
        ("twins_2", "module name"),
    ]
    assert sys.modules["solo"].agent.name is None  # the user's object keeps its own (no) name


def test_the_command_line_says_each_entry_not_loaded_on_stderr_and_starts_on_the_others(tmp_path, capsys):
    broken_and_good(tmp_path)
    assert main(["remembered", str(tmp_path)]) == 0
    captured = capsys.readouterr()
    err = captured.err.splitlines()
    assert err[:3] == [
        f"workbench: not loaded: {tmp_path / 'a_broken' / '__init__.py'}: ModuleNotFoundError: No module named "
        "'agent_framework_lab_not_installed'",
        f"workbench: not loaded: {tmp_path / 'c_odd.py'}: a builtins.int is not an Agent Framework Agent",
        f"workbench: not loaded: {tmp_path / 'd_twin.py'}: two agents are named 'good' (the other comes from "
        f"{tmp_path / 'b_good.py'})",
    ]
    # What is remembered lists each entry not loaded, whose memories it cannot know.
    assert f"{tmp_path / 'c_odd.py'} (not loaded)" in captured.out
    assert "what its agents would remember is not known" in captured.out


def test_nothing_loaded_exits_2_after_saying_each_entry(tmp_path, capsys):
    write(tmp_path, "a_broken.py", MISSING_OPTIONAL + "agent = Agent(ScriptedChatClient(), name='never')\n")
    write(tmp_path, "b_odd.py", "agent = 42\n")
    assert main([str(tmp_path)]) == 2
    err = capsys.readouterr().err.splitlines()
    assert err == [
        f"workbench: not loaded: {tmp_path / 'a_broken.py'}: ModuleNotFoundError: No module named "
        "'agent_framework_lab_not_installed'",
        f"workbench: not loaded: {tmp_path / 'b_odd.py'}: a builtins.int is not an Agent Framework Agent",
        f"workbench: {tmp_path}: nothing loaded: 2 entries could not be loaded (each said above)",
    ]
