"""The lock is the set the README installs and the suite passes on (docs/dependencies.md): it agrees with the
ranges in pyproject.toml, the pip files under requirements/ are exactly what it exports, and this
environment is that set. All offline: uv checks and exports from the lock alone."""

import shlex
import subprocess
import sys
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

import pytest
from packaging.requirements import Requirement

ROOT = Path(__file__).resolve().parent.parent
EXPORTS = sorted((ROOT / "requirements").glob("*.txt"))


def _uv(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "uv", *args], cwd=ROOT, text=True, capture_output=True)


def test_the_lock_agrees_with_the_ranges_in_pyproject():
    done = _uv("lock", "--check", "--offline")
    assert done.returncode == 0, done.stderr


def test_both_readme_commands_install_from_the_lock():
    readme = (ROOT / "README.md").read_text()
    assert "pip install -r requirements/app.txt && python3 -m pip install --no-deps ." in readme
    assert "pip install -r requirements/dev.txt && python3 -m pip install --no-deps -e ." in readme
    assert [p.name for p in EXPORTS] == ["app.txt", "dev.txt"]


@pytest.mark.parametrize("export", EXPORTS, ids=lambda p: p.name)
def test_each_pip_file_is_what_the_lock_exports(export):
    """Each file records the command that wrote it on its second line; run again, it writes the same bytes."""
    command = shlex.split(export.read_text().splitlines()[1].lstrip("#").strip())
    assert command[:2] == ["uv", "export"] and "--frozen" in command
    output = command.index("-o")
    done = _uv(*command[1:output], *command[output + 2 :])
    assert done.returncode == 0, done.stderr
    written = export.read_text().split("\n", 2)[2]
    assert done.stdout.split("\n", 2)[2] == written, f"{export.name} is not what uv.lock exports: export it again"
    lines = written.splitlines()
    pinned = [i for i, line in enumerate(lines) if line[:1].isalnum()]
    assert pinned and all("==" in lines[i] and "--hash=sha256:" in lines[i + 1] for i in pinned)


def test_this_environment_is_the_locked_set():
    """What the README's test command installed is the lock's set for this Python, to the version."""
    differs = []
    for line in (ROOT / "requirements" / "dev.txt").read_text().splitlines():
        if line and line[0].isalnum():
            requirement = Requirement(line.rstrip(" \\"))
            if requirement.marker is not None and not requirement.marker.evaluate():
                continue
            wanted = str(requirement.specifier).removeprefix("==")
            try:
                installed = version(requirement.name)
            except PackageNotFoundError:
                installed = "not installed"
            if installed != wanted:
                differs.append(f"{requirement.name}: locked {wanted}, installed {installed}")
    assert not differs, "install from requirements/dev.txt (README): " + "; ".join(differs)
