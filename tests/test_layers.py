"""The memory core stands alone: importing it pulls in neither the UI nor the agent runtime."""

import os
import subprocess
import sys

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


# What ui/ may take from the runtime: value types (views of its state, records of its calls) and how
# they are said in words. Everything else it asks of the session (`workbench.session`), its only door.
VIEWS = {
    "workbench.runtime.view": {
        "MemorySnapshot",
        "MemoryUpdate",
        "NOT_SAVED",
        "RecalledMessage",
        "ResumedHistory",
        "RuntimeStatus",
        "SAVED_AGAIN",
        "WRITER_FAILING",
        "WRITER_SWITCHED",
    },
    "workbench.runtime.usage": {"UNKNOWN", "Usage", "describe_usage", "estimate_tokens"},
    "workbench.runtime.remembered": {"HeldItem", "Remembered", "RememberedSystem", "describe_size"},
    "workbench.runtime.context": {"ContextSplit"},
    "workbench.runtime.calls": {"CallRecord"},
    "workbench.runtime.config": {"Mode"},
}


def runtime_names(source: str) -> set[str]:
    """`module:name` for every name `source` imports from the runtime, anywhere (TYPE_CHECKING included);
    `module:*` for a whole module imported."""
    import ast

    found: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("workbench.runtime"):
            found |= {f"{node.module}:{alias.name}" for alias in node.names}
        elif isinstance(node, ast.Import):
            found |= {f"{a.name}:*" for a in node.names if a.name.startswith("workbench.runtime")}
    return found


def test_the_ui_takes_only_value_types_from_the_runtime():
    """The session is the UI's only door: ui/ imports views from the runtime, never what it is made of."""
    from pathlib import Path

    ui = Path(__file__).resolve().parent.parent / "workbench" / "ui"
    allowed = {f"{module}:{name}" for module, names in VIEWS.items() for name in names}
    taken = {p.name: sorted(runtime_names(p.read_text()) - allowed) for p in ui.glob("*.py")}
    assert {name: names for name, names in taken.items() if names} == {}


def test_the_ui_never_reaches_the_runtime_through_the_session():
    """No `.runtime` attribute in ui/: what the UI asks, the session answers."""
    import re
    from pathlib import Path

    ui = Path(__file__).resolve().parent.parent / "workbench" / "ui"
    reaches = {p.name: re.findall(r"(?<!workbench)\.runtime\b", p.read_text()) for p in ui.glob("*.py")}
    assert {name: found for name, found in reaches.items() if found} == {}


def test_the_views_the_ui_takes_are_values():
    """Each class ui/ may take from the runtime is a dataclass or an enum: a value, not a service."""
    import dataclasses
    import enum
    import importlib

    classes = [getattr(importlib.import_module(module), name) for module, names in VIEWS.items() for name in names]
    services = [
        c for c in classes if isinstance(c, type) and not (dataclasses.is_dataclass(c) or issubclass(c, enum.Enum))
    ]
    assert services == []


def test_the_runtime_import_check_sees_every_form():
    source = (
        "from workbench.runtime.view import MemoryUpdate\n"
        "import workbench.runtime.agents\n"
        "if TYPE_CHECKING:\n    from workbench.runtime import AgentRuntime\n"
    )
    assert runtime_names(source) == {
        "workbench.runtime.view:MemoryUpdate",
        "workbench.runtime.agents:*",
        "workbench.runtime:AgentRuntime",
    }


def _imports(*, with_typing: bool = True) -> dict[str, set[str]]:
    """Each module of workbench/ (package facades aside: they only re-export, lazily) and the
    workbench modules it imports anywhere in its text, inside functions too, and under TYPE_CHECKING
    unless `with_typing` is False."""
    import ast
    from pathlib import Path

    root = Path(__file__).resolve().parent.parent
    modules = {}
    for path in (root / "workbench").rglob("*.py"):
        parts = path.relative_to(root).with_suffix("").parts
        modules[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    facades = {name for name, path in modules.items() if path.name == "__init__.py"}
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        if name in facades:
            continue
        targets: set[str] = set()
        tree = ast.parse(path.read_text())
        typing_only = {
            id(inner)
            for node in ast.walk(tree)
            if isinstance(node, ast.If) and ast.unparse(node.test) in ("TYPE_CHECKING", "typing.TYPE_CHECKING")
            for inner in ast.walk(node)
        }
        for node in ast.walk(tree):
            if id(node) in typing_only and not with_typing:
                continue
            if isinstance(node, ast.ImportFrom) and node.module:
                targets |= {node.module, *(f"{node.module}.{alias.name}" for alias in node.names)}
            elif isinstance(node, ast.Import):
                targets |= {alias.name for alias in node.names}
        graph[name] = {t for t in targets if t in modules and t not in facades and t != name}
    return graph


def test_the_runtime_never_imports_recall():
    """Recall is assembled where the app is (the CLI) and handed to the runtime as an AgentMemory."""
    reaches = {
        name: sorted(t for t in targets if t.startswith("workbench.recall")) for name, targets in _imports().items()
    }
    assert {n: t for n, t in reaches.items() if n.startswith("workbench.runtime") and t} == {}


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Every import circle, each once, starting from its smallest module."""
    found: list[list[str]] = []

    def walk(start: str, at: str, path: list[str]) -> None:
        for nxt in sorted(graph.get(at, ())):
            if nxt == start:
                found.append([*path, nxt])
            elif nxt not in path and nxt > start:
                walk(start, nxt, [*path, nxt])

    for module in sorted(graph):
        walk(module, module, [module])
    return found


def test_no_module_imports_one_that_imports_it_back():
    """At run time (a name imported for annotations only, under TYPE_CHECKING, is not an import)."""
    assert circles(_imports(with_typing=False)) == []


def test_no_import_circle_either_for_annotations():
    """The package's import graph with the imports made for annotations only (under TYPE_CHECKING) has
    no circle either: each module can be read knowing only those below it."""
    assert circles(_imports()) == []


def test_the_circle_search_finds_a_circle_when_there_is_one():
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a", "d"}, "d": set()}
    assert circles(graph) == [["a", "b", "c", "a"]]


def test_no_opentelemetry_sdk_or_exporter_is_loaded_unless_traces_are_on():
    """The app, the runtime and its spans use the OpenTelemetry API only; the SDK and the exporters
    come with `workbench.runtime.telemetry.start_telemetry`, when --otel or a variable asks for traces."""
    probe = (
        "import sys, workbench.cli, workbench.ui.app, workbench.runtime.agents, workbench.runtime.tracing; "
        "print(' '.join(m for m in sys.modules if m.startswith(('opentelemetry.sdk', 'opentelemetry.exporter'))))"
    )
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout
    assert out.split() == []


def test_holders_of_text_are_registered_by_the_one_assembly_only():
    """Whoever adds a memory finds the one list in `workbench/session/assemble.py`; it and the drift
    lab's product policies register their holders through `workbench/runtime/holders.py`, the one
    module that registers (below both: the session and the lab are peers)."""
    import re
    from pathlib import Path

    root = Path(__file__).resolve().parent.parent / "workbench"
    registering = re.compile(r"\.register\(|\bForgetting\(")
    found = sorted(str(p.relative_to(root)) for p in root.rglob("*.py") if registering.search(p.read_text()))
    assert found == ["runtime/agents.py", "runtime/holders.py"]  # the runtime makes the product's Forgetting
    assert ".register(" not in (root / "runtime" / "agents.py").read_text()
    assert "register(runtime.forgetting, " in (root / "session" / "assemble.py").read_text()


def test_file_modes_and_the_umask_have_one_owner():
    """workbench/files.py owns file privacy: nothing else sets a mode by number or changes the umask."""
    import re
    from pathlib import Path

    root = Path(__file__).resolve().parent.parent / "workbench"
    modes = re.compile(r"\bos\.umask\(|chmod\(0o|mode=0o|\b0o[67]00\b")
    found = {str(p.relative_to(root)): modes.findall(p.read_text()) for p in root.rglob("*.py")}
    assert {name: hits for name, hits in found.items() if hits and name != "files.py"} == {}


def test_the_session_the_lab_and_qualify_are_peers():
    """They share the chronology format (`workbench.chronology`), beside the memory contract; none of
    them imports another, type-only imports included."""
    graph = _imports()
    peers = ("workbench.session", "workbench.drift", "workbench.qualify")
    crossing = {
        name: sorted(t for t in targets if t.startswith(peers) and not t.startswith(name.rsplit(".", 1)[0]))
        for name, targets in graph.items()
        if name.startswith(peers)
    }
    assert {name: t for name, t in crossing.items() if t} == {}


def test_the_built_in_agents_start_loads_neither_recall_nor_duckdb_nor_the_recognised_memories():
    """Recall off is built at its first use (a forget reaches a file an earlier run left), DuckDB with a
    file, the recogniser of the user's agents' memories only with their agents: a plain start loads none."""
    unwanted = "('duckdb', 'workbench.recall.setup', 'workbench.recall.store', 'workbench.agentmem.recognise')"
    probe = (
        "import sys; from workbench import cli; args = cli.parse([]); "
        "cli.session_start(args, cli.model_config(args))(); "
        f"print(' '.join(m for m in {unwanted} if m in sys.modules))"
    )
    env = {**os.environ, "WORKBENCH_DATA_DIR": os.devnull + "-not-a-folder"}
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True, env=env).stdout
    assert out.split() == []
