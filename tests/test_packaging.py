"""Every package ships, and so do the stylesheets: a non-editable install looks like a checkout."""

import os
import re
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_every_package_is_listed_for_the_wheel():
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    found = {".".join(p.parent.relative_to(ROOT).parts) for p in (ROOT / "workbench").rglob("__init__.py")}
    assert found | {"workbench.styles"} == set(config["packages"])
    assert config["package-dir"] == {"workbench.styles": "styles"}
    assert list((ROOT / "styles").glob("*.tcss"))


def test_the_app_loads_the_stylesheets_of_this_tree():
    from workbench.ui.app import WorkbenchApp
    from workbench.ui.startup import stylesheet_dir

    assert stylesheet_dir() == ROOT / "styles"
    assert all(Path(p).exists() for p in WorkbenchApp.CSS_PATH)


def _names(requirements: list[str], extra: str) -> set[str]:
    from packaging.requirements import Requirement

    parsed = [Requirement(r) for r in requirements]
    return {r.name for r in parsed if r.marker is None or r.marker.evaluate({"extra": extra})}


def test_entra_id_sign_in_is_an_extra_never_a_requirement():
    """`pip install .` does not bring azure-identity; `pip install ".[azure]"` does. Checked in the
    project file and in the metadata pip installed from it."""
    from importlib.metadata import requires

    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert "azure-identity" not in _names(project["dependencies"], "")
    assert "azure-identity" in _names(project["optional-dependencies"]["azure"], "azure")
    installed = requires("agent-memory-workbench") or []
    assert "azure-identity" not in _names(installed, "")
    assert "azure-identity" in _names(installed, "azure")


def test_the_opentelemetry_sdk_and_exporter_are_an_extra_never_a_requirement():
    """`pip install .` brings only the OpenTelemetry API (through agent-framework-core); traces need
    `pip install ".[otel]"`."""
    from importlib.metadata import requires

    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    otel = {"opentelemetry-sdk", "opentelemetry-exporter-otlp-proto-http"}
    assert not otel & _names(project["dependencies"], "")
    assert otel <= _names(project["optional-dependencies"]["otel"], "otel")
    installed = requires("agent-memory-workbench") or []
    assert not otel & _names(installed, "")
    assert otel <= _names(installed, "otel")


# "workbench" on PyPI is someone else's package: an install hint naming it would install that.
_FOREIGN_EXTRA = re.compile(rb"(?<![\w.-])workbench\[")
_NOT_OURS = {
    ".git",
    ".venv",
    "venv",
    "__pycache__",
    "build",
    "dist",
    ".pytest_cache",
    ".hypothesis",
    ".ruff_cache",
    ".mypy_cache",
}


def _repository_files() -> list[Path]:
    """Every file of the checkout, without descending into environments, caches or build output."""
    found = []
    for folder, folders, files in os.walk(ROOT):
        folders[:] = [f for f in folders if f not in _NOT_OURS and not f.endswith(".egg-info")]
        found += [Path(folder) / name for name in files]
    return found


def test_no_text_names_the_unrelated_workbench_distribution():
    """Hints, messages and docs name this distribution with its extra ("agent-memory-workbench" and then
    the extra in brackets) or a clone's `.[mem0]`, never PyPI's unrelated package with an extra."""
    files = _repository_files()
    assert ROOT / "README.md" in files and ROOT / "workbench" / "cli" / "parser.py" in files
    found = [
        f"{path.relative_to(ROOT)}:{number}"
        for path in files
        for number, line in enumerate(path.read_bytes().splitlines(), 1)
        if _FOREIGN_EXTRA.search(line)
    ]
    assert found == []


def test_the_distribution_has_a_name_of_its_own():
    """The command and the import package stay `workbench`; the distribution is not PyPI's `workbench`."""
    from importlib.metadata import entry_points

    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert project["name"] == "agent-memory-workbench"
    assert project["scripts"] == {"workbench": "workbench.command:main"}
    # Metadata of an earlier install under the old name may linger beside it (a checkout's egg-info).
    scripts = entry_points(group="console_scripts", name="workbench")
    assert "agent-memory-workbench" in {s.dist.name for s in scripts if s.dist is not None}
