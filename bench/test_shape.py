"""The shape of the UI and session tests (issue 28): how many test cases start the whole app, how many
mount a widget or a screen alone in a small host app, how many run a flow through the session with no
Textual at all. Run on demand:

    python bench/test_shape.py

Each collected case (`pytest --collect-only`, parameters counted) is sorted by what its test function
calls, directly, through a function of its own module, or through a fixture of its module or of
`tests/ui/conftest.py`: a call of `WorkbenchApp` or of a helper that builds one (`tests/ui/helpers.py`'s
make_app, make_recall_app, make_persisted_app, or the CLI's build_app) is whole-app; else any Textual
app (`run_test`, a host app, a snapshot) is widget-alone; else session-level."""

from __future__ import annotations

import ast
import collections
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FOLDERS = ("tests/ui", "tests/session")
WHOLE_APP = {"WorkbenchApp", "make_app", "make_recall_app", "make_persisted_app", "build_app"}
SOME_APP = {"run_test", "run_async", "snap_compare", "App", "PaneHost", "ScreenHost"}


def _names(node: ast.AST) -> set[str]:
    """The plain names a function uses (the functions and fixtures it can reach), and the names it calls,
    plain or as an attribute (`WorkbenchApp(...)`, `cli.build_app(...)`, `app.run_test(...)`)."""
    plain = {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}
    called = {
        n.func.id if isinstance(n.func, ast.Name) else n.func.attr
        for n in ast.walk(node)
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Name | ast.Attribute)
    }
    return {f"{name}()" for name in called} | plain


def _functions(path: Path) -> dict[str, ast.FunctionDef | ast.AsyncFunctionDef]:
    tree = ast.parse(path.read_text())
    return {f.name: f for f in ast.walk(tree) if isinstance(f, ast.FunctionDef | ast.AsyncFunctionDef)}


def _uses(name: str, local: dict[str, ast.FunctionDef | ast.AsyncFunctionDef]) -> set[str]:
    """Names a function uses, through the functions and fixtures it reaches."""
    seen: set[str] = set()
    todo = [name]
    used: set[str] = set()
    while todo:
        current = todo.pop()
        if current in seen or current not in local:
            continue
        seen.add(current)
        function = local[current]
        found = _names(function) | {a.arg for a in function.args.args}
        used |= found
        todo += [n.removesuffix("()") for n in found if n.removesuffix("()") in local]
    return used


def kind_of(used: set[str]) -> str:
    """Whole-app when a function reached calls what builds the app; widget-alone when one uses any app."""
    if {f"{name}()" for name in WHOLE_APP} & used:
        return "whole-app"
    if {f"{name}()" for name in SOME_APP} & used or "snap_compare" in used:
        return "widget-alone"
    return "session-level"


def main() -> int:
    collected = subprocess.run(
        [sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:randomly", "-o", "addopts=", *FOLDERS],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    shared = _functions(ROOT / "tests/ui/conftest.py")
    counts: collections.Counter[tuple[str, str]] = collections.Counter()
    for node in (line for line in collected if "::" in line):
        path, test = node.split("::", 1)
        local = {**shared, **_functions(ROOT / path)}
        counts[(path.split("/")[1], kind_of(_uses(test.split("[")[0], local)))] += 1
    for kind in ("whole-app", "widget-alone", "session-level"):
        by_folder = ", ".join(f"{folder} {counts[(folder, kind)]}" for folder in ("ui", "session"))
        print(f"{kind:14} {sum(n for (f, k), n in counts.items() if k == kind):4}  ({by_folder})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
