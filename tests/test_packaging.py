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
    from workbench.ui.app import WorkbenchApp, stylesheet_dir

    assert stylesheet_dir() == ROOT / "styles"
    assert all(Path(p).exists() for p in WorkbenchApp.CSS_PATH)
