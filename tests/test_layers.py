"""The layers. Which package may import which is stated as import-linter contracts in pyproject.toml
(`[tool.importlinter]`), checked here by `lint-imports`. What a contract cannot say is tested by hand:
what an import loads at run time (start-up cost, optional integrations), that the types the UI draws
are values, and the one owner of the holders' registration and of file modes."""

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

HEAVY = ("textual", "agent_framework", "openai")


def imported_after(statement: str) -> list[str]:
    probe = f"import sys; {statement}; print(' '.join(m for m in {HEAVY!r} if m in sys.modules))"
    result = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    return result.stdout.split()


def test_memory_core_imports_neither_textual_nor_agent_framework():
    assert imported_after("import workbench.memory") == []


def test_runtime_and_drift_lab_do_not_import_textual():
    assert "textual" not in imported_after("import workbench.runtime, workbench.drift")


def test_qualify_does_not_import_textual():
    assert "textual" not in imported_after("import workbench.qualify")


def test_the_tui_opens_without_loading_agent_framework_pydantic_markdown_or_the_chart_library():
    assert imported_after("import workbench.cli, workbench.ui.app") == ["textual"]
    probe = (
        "import sys, workbench.cli, workbench.ui.app; "
        "print(' '.join(m for m in ('pydantic', 'markdown_it', 'plotext') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout
    assert out.split() == []


def test_recall_imports_no_textual_and_its_provider_no_duckdb():
    loaded = imported_after("import workbench.recall.provider, workbench.recall.store")
    assert "textual" not in loaded
    probe = "import sys, workbench.recall.provider, workbench.recall.store; print('duckdb' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"


def test_recall_switched_off_loads_no_postgresql_driver():
    """Asking whether a PostgreSQL store is configured took psycopg and the framework's PostgreSQL
    integration along (about 440 ms at every start, recall on or off)."""
    probe = (
        "import sys; from workbench.recall.config import RecallConfig; RecallConfig(); "
        "print(' '.join(m for m in ('psycopg', 'agent_framework_postgres') if m in sys.modules))"
    )
    env = {k: v for k, v in os.environ.items() if k != "WORKBENCH_RECALL_POSTGRES"}
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True, env=env).stdout
    assert out.split() == []


def lint(config: Path, *, root: Path) -> tuple[int, str]:
    """`lint-imports` on `config`, in `root`, without the cache it would otherwise write there."""
    result = subprocess.run(
        [
            sys.executable,
            "-c",
            "import sys; from importlinter.cli import lint_imports_command; lint_imports_command()",
            "--config",
            str(config),
            "--no-cache",
            "--no-logo",
        ],
        capture_output=True,
        text=True,
        cwd=root,
        env={**os.environ, "PYTHONPATH": str(root)},
    )
    return result.returncode, result.stdout + result.stderr


def test_the_layer_contracts_are_kept():
    status, report = lint(ROOT / "pyproject.toml", root=ROOT)
    assert status == 0, report
    assert "7 kept, 0 broken" in report, report


def test_the_contracts_count_imports_inside_functions_and_for_annotations(tmp_path: Path):
    """The workbench loads heavy modules late (inside functions) and imports for annotations under
    TYPE_CHECKING: the checker must see both, or a layer could be crossed unseen."""
    package = tmp_path / "pkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "low.py").write_text("def late():\n    from pkg import high\n")
    (package / "high.py").write_text("")
    (package / "typed.py").write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from pkg import high\n")
    config = tmp_path / "contracts.toml"
    config.write_text(
        '[tool.importlinter]\nroot_package = "pkg"\n'
        '[[tool.importlinter.contracts]]\nname = "layers"\ntype = "layers"\ncontainers = ["pkg"]\n'
        'layers = ["high", "low | typed"]\n'
    )
    status, report = lint(config, root=tmp_path)
    assert status == 1, report
    assert "pkg.low -> pkg.high" in report and "pkg.typed -> pkg.high" in report, report


def test_the_ui_never_reaches_the_runtime_through_the_session():
    """No `.runtime` attribute in ui/: what the UI asks, the session answers."""
    import re

    ui = ROOT / "workbench" / "ui"
    reaches = {p.name: re.findall(r"(?<!workbench)\.runtime\b", p.read_text()) for p in ui.glob("*.py")}
    assert {name: found for name, found in reaches.items() if found} == {}


def test_the_types_the_ui_draws_are_values():
    """Each class ui/ takes from `workbench.session.views` (the contract `ui-through-the-session` holds it
    to that module and the session) is a dataclass, an enum or an error: a value, not a service. The one
    exception is the log that holds the libraries' notes until the window says them."""
    import dataclasses
    import enum

    import workbench.session.views as views

    classes = [getattr(views, name) for name in views.__all__]
    services = [
        c.__name__
        for c in classes
        if isinstance(c, type) and not (dataclasses.is_dataclass(c) or issubclass(c, (enum.Enum, Exception)))
    ]
    assert services == ["LibraryLog"]


def test_no_opentelemetry_sdk_or_exporter_is_loaded_unless_traces_are_on():
    """The app, the runtime and its spans use the OpenTelemetry API only; the SDK and the exporters
    come with `workbench.runtime.telemetry.start_telemetry`, when --otel or a variable asks for traces."""
    probe = (
        "import sys, workbench.cli, workbench.ui.app, workbench.runtime.agents, workbench.runtime.tracing; "
        "print(' '.join(m for m in sys.modules if m.startswith(('opentelemetry.sdk', 'opentelemetry.exporter'))))"
    )
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout
    assert out.split() == []


def test_holders_of_text_are_registered_by_the_one_builder_only():
    """Whoever adds a memory finds the one order in `workbench/build/builder.py` (`in_order`); the app's
    assembly and the drift lab's product policies (`lab_forget`) register their holders there, the one
    module that registers (below both: the session starts the lab, which builds its own forgets)."""
    import re

    root = ROOT / "workbench"
    registering = re.compile(r"\.register\(|\bForgetting\(")
    found = sorted(str(p.relative_to(root)) for p in root.rglob("*.py") if registering.search(p.read_text()))
    assert found == ["build/builder.py", "runtime/agents.py"]  # the runtime makes the product's Forgetting
    assert ".register(" not in (root / "runtime" / "agents.py").read_text()
    assert "_register(runtime.forgetting, " in (root / "build" / "builder.py").read_text()


def test_only_the_builder_constructs_a_runtime():
    """The runtime is constructed in `workbench/build/builder.py` alone, in the package, the tests and
    the benches; the one test that proves a bare runtime refuses to forget builds one on purpose."""
    import re

    constructing = re.compile(r"\bAgentRuntime\(")
    found = sorted(
        str(p.relative_to(ROOT))
        for folder in ("workbench", "tests", "bench")
        for p in (ROOT / folder).rglob("*.py")
        if constructing.search(p.read_text())
    )
    assert found == ["tests/runtime/test_one_runtime.py", "workbench/build/builder.py"]


def test_file_modes_and_the_umask_have_one_owner():
    """workbench/files.py owns file privacy: nothing else sets a mode by number or changes the umask."""
    import re

    root = ROOT / "workbench"
    modes = re.compile(r"\bos\.umask\(|chmod\(0o|mode=0o|\b0o[67]00\b")
    found = {str(p.relative_to(root)): modes.findall(p.read_text()) for p in root.rglob("*.py")}
    assert {name: hits for name, hits in found.items() if hits and name != "files.py"} == {}


def test_the_built_in_agents_start_loads_neither_recall_nor_duckdb_nor_the_recognised_memories():
    """Recall off is built at its first use (a forget reaches a file an earlier run left), DuckDB with a
    file, the recogniser of the user's agents' memories only with their agents: a plain start loads none."""
    unwanted = "('duckdb', 'workbench.recall.setup', 'workbench.recall.store', 'workbench.agentmem.recognise')"
    probe = (
        "import sys; from workbench.cli.parser import parse; from workbench.cli.configs import model_config; "
        "from workbench.cli.start import session_start; args = parse([]); session_start(args, model_config(args))(); "
        f"print(' '.join(m for m in {unwanted} if m in sys.modules))"
    )
    env = {**os.environ, "WORKBENCH_DATA_DIR": os.devnull + "-not-a-folder"}
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True, env=env).stdout
    assert out.split() == []
