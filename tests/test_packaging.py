"""Every package ships, and so do the stylesheets: a non-editable install looks like a checkout."""

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
    installed = requires("workbench") or []
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
    installed = requires("workbench") or []
    assert not otel & _names(installed, "")
    assert otel <= _names(installed, "otel")
