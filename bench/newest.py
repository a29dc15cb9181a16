"""The newest releases the ranges allow, tried before a user installs them. Run on demand:

    python bench/newest.py                 # resolve the newest set, build an environment, mypy, the suite
    python bench/newest.py --resolve-only  # only say which packages would move from the lock
    python bench/newest.py --adopt         # the same check, then, if it is green, move the lock to that set

The lock (`uv.lock`, exported for pip to `requirements/app.txt` and `requirements/dev.txt`) is what the
README's two commands install, so a fresh clone gets the set the suite passed on. The ranges in
`pyproject.toml` admit newer releases for people who install the package into an environment of their
own; this finds out what those releases do before they do. It resolves, with uv, the newest set the
ranges allow (the `dev` extra included) for this interpreter, prints each package whose version differs
from the lock, and each exactly pinned package (alpha and beta integrations) with a newer release on the
registry, which the ranges keep out until someone moves the pin. Then it builds a fresh virtual
environment with that set, installs this tree into it without dependencies, and runs mypy and the suite
there (`pytest -n auto`, the lock's own check left out: it fails by design on any other set). It ends
with the failed tests, and exits 0 only when mypy and every test passed.

`--adopt` moves the lock only after a green run: `uv lock --upgrade`, then each file under
`requirements/` rewritten by the command its own second line records. docs/dependencies.md says what to
check before committing the moved lock (the private-names page among it).
"""

from __future__ import annotations

import argparse
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import tomllib
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parent.parent
EXPORTS = sorted((ROOT / "requirements").glob("*.txt"))
# The lock's own check (tests/test_lock.py) asserts the environment is the locked set: on the newest set it
# fails by design, so it is left out here and named in the output.
LEFT_OUT = "tests/test_lock.py::test_this_environment_is_the_locked_set"
_PIN = re.compile(r"^([A-Za-z0-9._-]+)==([^\s;\\]+)")


def uv(*args: str, capture: bool = True) -> str:
    """Runs this environment's uv (a `dev` dependency) in the checkout."""
    done = subprocess.run([sys.executable, "-m", "uv", *args], cwd=ROOT, check=True, text=True, capture_output=capture)
    return done.stdout if capture else ""


def locked_versions() -> dict[str, str]:
    """The version the lock installs of each package on this interpreter (its markers evaluated)."""
    exported = uv("export", "--frozen", "--no-emit-project", "--extra", "dev", "--no-hashes", "--no-header")
    found: dict[str, str] = {}
    for line in exported.splitlines():
        if line.strip() and not line.lstrip().startswith("#"):
            requirement = Requirement(line.strip())
            if requirement.marker is None or requirement.marker.evaluate():
                found[canonicalize_name(requirement.name)] = str(requirement.specifier).removeprefix("==")
    return found


def newest_set(folder: Path) -> Path:
    """The newest set the ranges allow for this interpreter, `dev` extra included, as a pip requirements
    file (versions only: hashes belong to the lock)."""
    out = folder / "newest.txt"
    uv(
        "pip", "compile", "pyproject.toml", "--extra", "dev", "--upgrade", "--no-header", "--no-annotate",
        "--python", sys.executable, "--output-file", str(out),
    )  # fmt: skip
    return out


def pins(requirements: Path) -> dict[str, str]:
    found: dict[str, str] = {}
    for line in requirements.read_text().splitlines():
        if match := _PIN.match(line.strip()):
            found[canonicalize_name(match[1])] = match[2]
    return found


def exact_pins() -> list[str]:
    """The project's requirements pinned with `==` (alphas and betas, pinned exactly on purpose)."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    every = [*project["dependencies"], *(r for extra in project["optional-dependencies"].values() for r in extra)]
    return sorted({r.split("==")[0].strip() for r in every if "==" in r})


def newest_release(name: str, folder: Path) -> str:
    """The newest release of one package on the registry, pre-releases included, whatever the ranges say."""
    wanted = folder / f"{name}.in"
    wanted.write_text(f"{name}\n")
    out = folder / f"{name}.txt"
    uv("pip", "compile", str(wanted), "--no-deps", "--prerelease", "allow", "--no-header", "--no-annotate",
       "--python", sys.executable, "--output-file", str(out))  # fmt: skip
    return pins(out)[canonicalize_name(name)]


def moved(newest: dict[str, str], locked: dict[str, str]) -> list[str]:
    return [
        f"  {name}: {locked.get(name, '(not in the lock)')} -> {newest.get(name, '(no longer needed)')}"
        for name in sorted(newest.keys() | locked.keys())
        if newest.get(name) != locked.get(name)
    ]


def run(step: str, command: list[str], env: dict[str, str]) -> tuple[bool, str]:
    print(f"+ {step}: {shlex.join(command)}", flush=True)
    done = subprocess.run(command, cwd=ROOT, env=env, text=True, capture_output=True)
    return done.returncode == 0, done.stdout + done.stderr


def check(folder: Path, requirements: Path) -> bool:
    venv = folder / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    python = str(venv / "bin" / "python")
    uv("pip", "install", "--python", python, "--quiet", "-r", str(requirements), capture=False)
    uv("pip", "install", "--python", python, "--quiet", "--no-deps", "--editable", ".", capture=False)
    env = {**os.environ, "PATH": f"{venv / 'bin'}{os.pathsep}{os.environ['PATH']}", "VIRTUAL_ENV": str(venv)}
    typed, typing_output = run("mypy", [python, "-m", "mypy"], env)
    print(typing_output.strip().splitlines()[-1] if typing_output.strip() else "(mypy printed nothing)")
    if not typed:
        print(typing_output)
    tested, test_output = run(
        "the suite", [python, "-m", "pytest", "-n", "auto", "-p", "no:cacheprovider", "-rfE",
                      "--deselect", LEFT_OUT], env)  # fmt: skip
    failures = [line for line in test_output.splitlines() if line.startswith(("FAILED ", "ERROR "))]
    summary = [line for line in test_output.splitlines() if re.search(r"\d+ (passed|failed|error)", line)]
    print(summary[-1] if summary else test_output[-3000:])
    print(f"left out: {LEFT_OUT} (it asserts the locked set)")
    if failures:
        print("failed on the newest set:")
        print("\n".join(f"  {line}" for line in failures))
    return typed and tested


def adopt() -> None:
    uv("lock", "--upgrade", capture=False)
    for export in EXPORTS:
        command = shlex.split(export.read_text().splitlines()[1].lstrip("#").strip())
        assert command[:2] == ["uv", "export"], f"{export}: its second line is not the uv export that made it"
        uv(*command[1:])
        print(f"rewrote {export.relative_to(ROOT)}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--resolve-only", action="store_true", help="only print what would move from the lock")
    parser.add_argument("--adopt", action="store_true", help="move the lock to the newest set if the check is green")
    parser.add_argument("--keep", action="store_true", help="keep the environment built for the check")
    options = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="workbench-newest-"))
    print(f"Python {sys.version.split()[0]}; the newest set the ranges in pyproject.toml allow, against uv.lock")
    newest = pins(newest_set(folder))
    changes = moved(newest, locked_versions())
    print("\n".join(["moved from the lock:", *changes]) if changes else "moved from the lock: nothing")
    held = [(name, newest_release(name, folder), newest.get(canonicalize_name(name), "?")) for name in exact_pins()]
    newer = [f"  {name}: pinned {pinned}, newest {latest}" for name, latest, pinned in held if latest != pinned]
    print("\n".join(["pinned exactly, newer on the registry:", *newer]) if newer else "pinned exactly: all newest")
    if options.resolve_only:
        return 0
    try:
        green = check(folder, folder / "newest.txt")
    finally:
        if not options.keep:
            shutil.rmtree(folder, ignore_errors=True)
    print("verdict: the newest set passed mypy and the suite" if green else "verdict: the newest set FAILED")
    if options.adopt and green and changes:
        adopt()
    elif options.adopt:
        print("the lock was not moved" + ("" if green else ": the check failed"))
    return 0 if green else 1


if __name__ == "__main__":
    sys.exit(main())
