"""What the tests of a folder's entries and of workflows share: each test imports the user's modules
afresh, with its own data directory."""

import sys

import pytest


@pytest.fixture(autouse=True)
def _fresh_modules(monkeypatch, tmp_path):
    before = set(sys.modules)
    monkeypatch.setattr(sys, "path", list(sys.path))
    monkeypatch.setenv("WORKBENCH_DATA_DIR", str(tmp_path / "data"))
    yield
    for name in set(sys.modules) - before:
        del sys.modules[name]
