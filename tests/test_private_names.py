"""Dependencies' private names are listed in docs/private-names.md against the versions they were checked
with: an upgrade fails here until the page is checked again, and so does a private import it does not list."""

import ast
from importlib.metadata import version
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PAGE = ROOT / "docs" / "private-names.md"
# The import name of each dependency whose private names are watched, and its distribution.
DISTRIBUTIONS = {
    "agent_framework": "agent-framework-core",
    "agent_framework_duckdb": "agent-framework-duckdb",
    "agent_framework_postgres": "agent-framework-postgres",
    "agent_framework_openai": "agent-framework-openai",
    "agent_framework_mem0": "agent-framework-mem0",
    "textual": "textual",
    "textual_plotext": "textual-plotext",
    "openai": "openai",
    "mem0": "mem0ai",
    "plotext": "plotext",
    "rich": "rich",
}


def _rows(section: str) -> list[list[str]]:
    """The table rows of one `## ` section of the page, each as its cells (header and rule left out)."""
    text = PAGE.read_text().split(f"## {section}\n", 1)[1].split("\n## ", 1)[0]
    rows = [
        [c.strip() for c in line.strip().strip("|").split("|")] for line in text.splitlines() if line.startswith("|")
    ]
    return [r for r in rows if r[0] not in {"package", "file"} and not set(r[0]) <= {"-", " "}]


def _checked() -> dict[str, str]:
    return {package: checked for package, checked in _rows("Versions checked")}


def _private_imports() -> list[tuple[str, str, str, list[str]]]:
    """(file, dependency, module, private names) for every import of a dependency's private module or name."""
    found = []
    for path in sorted([*ROOT.glob("workbench/**/*.py"), *ROOT.glob("tests/**/*.py"), *ROOT.glob("bench/*.py")]):
        for node in ast.walk(ast.parse(path.read_text())):
            if not isinstance(node, ast.ImportFrom) or not node.module:
                continue
            top = node.module.split(".")[0]
            names = [a.name for a in node.names if a.name.startswith("_")]
            if top in DISTRIBUTIONS and (names or any(p.startswith("_") for p in node.module.split("."))):
                found.append((str(path.relative_to(ROOT)), top, node.module, names))
    return found


@pytest.mark.parametrize("package", sorted(_checked()))
def test_the_installed_version_is_the_one_the_private_names_were_checked_against(package):
    assert version(package) == _checked()[package], f"recheck docs/private-names.md for {package}"


def test_every_private_import_is_listed_with_its_reason():
    rows = _rows("The names")
    found = _private_imports()
    assert any(file == "workbench/ui/paste.py" for file, *_ in found)  # the scan sees them
    for file, top, module, names in found:
        assert DISTRIBUTIONS[top] in _checked(), f"{DISTRIBUTIONS[top]} ({file}) has no version checked"
        listed = [" ".join(r[1:]) for r in rows if f"`{file}`" in r[0]]
        private_module = any(p.startswith("_") for p in module.split("."))
        assert any(
            (not private_module or module in r) and all(f"{n}`" in r or f"{n}," in r for n in names) for r in listed
        ), f"{file}: {module} {names} is not listed in docs/private-names.md"
