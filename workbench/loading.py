"""The user's own agents, found the way Agent Framework's DevUI finds them.

A folder (`workbench PATH`): each subfolder a package whose `__init__.py` exports `agent` (or
`agents`), or a `.py` file exporting `agent` or `agents`; names starting with `.` or `_` are skipped.
An importable object (`--agents module:attribute`): an `Agent`, a list of them, or a function that
returns one or a list. From Python: `workbench.serve(agents=[...])`.

Loading a module runs its code, as it does in DevUI: point the workbench only at code you trust.
A `.env` beside an agent (or in the folder above) is read first, as DevUI does, without overriding
what the environment already sets.

Whatever cannot be loaded is a `LoadFailed`: one line naming the file (or the module) and the
problem, which the command line prints before any window opens (exit status 2); a module that exits
(`sys.exit()` at import) is one too, never a silent end. A dependency's refusal of what its own published
samples write says what it needs (`_HINTS`). What the user's code prints while it loads
goes to stderr: stdout carries the scripts' reports (`workbench remembered --json`).
"""

from __future__ import annotations

import importlib
import importlib.metadata
import importlib.util
import sys
from collections.abc import Iterable
from contextlib import redirect_stdout
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING

from workbench.text import clip, hides, visible

if TYPE_CHECKING:
    from agent_framework import Agent

EXPORTS = ("agent", "agents")
MAX_NAME_CHARS = 40  # a pane's title, a holder's name in the forget's report
_PROBLEM_CHARS = 300  # how much of an import error's message the one line carries


class LoadFailed(Exception):
    """What could not be loaded: `where` is the file or `module:attribute`, `problem` one sentence."""

    def __init__(self, where: str, problem: str) -> None:
        self.where = where
        self.problem = problem
        super().__init__(f"{visible(where)}: {visible(clip(problem, _PROBLEM_CHARS))}")


@dataclass(frozen=True)
class LoadedAgent:
    """An agent the user built, and where it came from (shown in F1 and in a load error)."""

    agent: Agent
    source: str

    @property
    def name(self) -> str:
        return self.agent.name or ""


def from_folder(path: Path) -> tuple[LoadedAgent, ...]:
    """Every agent a DevUI-style folder exports, in the order of its entries' names."""
    folder = path.expanduser()
    if not folder.is_dir():
        raise LoadFailed(str(path), "no such folder" if not folder.exists() else "not a folder")
    found: list[LoadedAgent] = []
    for entry in sorted(folder.iterdir(), key=lambda p: p.name):
        if entry.name.startswith((".", "_")):
            continue
        if entry.is_dir() and (entry / "__init__.py").is_file():
            found += _exported(_import_file(entry.name, entry / "__init__.py", package=entry), entry / "__init__.py")
        elif entry.is_file() and entry.suffix == ".py":
            found += _exported(_import_file(entry.stem, entry), entry)
    if not found:
        raise LoadFailed(
            str(path), "exports no agent: no subfolder with an __init__.py or .py file defines agent or agents"
        )
    return checked(found)


def from_reference(reference: str) -> tuple[LoadedAgent, ...]:
    """The agents `module:attribute` names: an Agent, a list of them, or a function returning either."""
    module_name, _, attribute = reference.partition(":")
    if not module_name or not attribute:
        raise LoadFailed(reference, "expected module:attribute, e.g. my_agents:agent")
    if (here := str(Path.cwd())) not in sys.path:  # as `python -m` and uvicorn do: the current folder imports
        sys.path.insert(0, here)
    try:
        with redirect_stdout(sys.stderr):
            module = importlib.import_module(module_name)
    except (Exception, SystemExit) as exc:  # the user's code may raise anything while it is imported, or exit
        raise LoadFailed(reference, _failure(exc)) from exc
    try:
        value = _attribute(module, attribute)
    except AttributeError:
        raise LoadFailed(reference, f"module {module_name} has no attribute {attribute}") from None
    return checked(_agents(value, reference))


def from_objects(objects: Iterable[object], source: str = "serve(agents=...)") -> tuple[LoadedAgent, ...]:
    """Agents handed in from Python (`workbench.serve`)."""
    return checked([agent for value in objects for agent in _agents(value, source)])


def checked(loaded: Iterable[LoadedAgent]) -> tuple[LoadedAgent, ...]:
    """The agents, each with a name of its own: a missing or repeated name is a `LoadFailed`."""
    agents = tuple(loaded)
    seen: dict[str, str] = {}
    for item in agents:
        name = item.name.strip()
        if not name:
            raise LoadFailed(item.source, "an agent has no name: give it Agent(..., name=...)")
        if len(name) > MAX_NAME_CHARS or any(hides(ch) or ch in "\n\t" for ch in name):
            raise LoadFailed(
                item.source,
                f"an agent's name must be at most {MAX_NAME_CHARS} characters with nothing invisible: {name!r}",
            )
        if name in seen:
            raise LoadFailed(item.source, f"two agents are named {name!r} (the other comes from {seen[name]})")
        seen[name] = item.source
    return agents


def _import_file(name: str, file: Path, *, package: Path | None = None) -> ModuleType:
    """Import `file` as module `name` (a package when `package` is its folder), so that its own
    absolute and relative imports work as they do under DevUI."""
    _read_env(file.parent)
    folder = str((package.parent if package is not None else file.parent).resolve())
    if folder not in sys.path:
        sys.path.insert(0, folder)
    already = sys.modules.get(name)
    if already is not None and Path(getattr(already, "__file__", "") or "").resolve() != file.resolve():
        raise LoadFailed(str(file), f"a module named {name} is already imported from {already.__file__}")
    spec = importlib.util.spec_from_file_location(
        name, file, submodule_search_locations=[str(package)] if package is not None else None
    )
    if spec is None or spec.loader is None:
        raise LoadFailed(str(file), "cannot be imported")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        with redirect_stdout(sys.stderr):
            spec.loader.exec_module(module)
    except (Exception, SystemExit) as exc:  # the user's code may raise anything while it runs, or exit
        del sys.modules[name]
        raise LoadFailed(str(file), _failure(exc)) from exc
    return module


def _read_env(folder: Path) -> None:
    from dotenv import load_dotenv

    for env in (folder / ".env", folder.parent / ".env"):
        if env.is_file():
            load_dotenv(env, override=False)
            return


def _exported(module: ModuleType, file: Path) -> list[LoadedAgent]:
    values = [getattr(module, name) for name in EXPORTS if hasattr(module, name)]
    if not values:
        return []
    return [agent for value in values for agent in _agents(value, str(file))]


def _agents(value: object, source: str) -> list[LoadedAgent]:
    """`value` as agents: an Agent, a list or tuple of them, or a function returning either."""
    from agent_framework import Agent

    if isinstance(value, Agent):
        return [LoadedAgent(value, source)]
    if isinstance(value, (list, tuple)):
        return [agent for item in value for agent in _agents_only(item, source)]
    if callable(value):
        try:
            with redirect_stdout(sys.stderr):
                made = value()
        except (Exception, SystemExit) as exc:  # the user's factory may raise anything, or exit
            raise LoadFailed(source, _failure(exc)) from exc
        if isinstance(made, Agent):
            return [LoadedAgent(made, source)]
        if isinstance(made, (list, tuple)):
            return [agent for item in made for agent in _agents_only(item, source)]
        raise LoadFailed(source, f"the function returned {_kind(made)}, not an Agent or a list of them")
    raise LoadFailed(source, f"{_kind(value)} is not an Agent Framework Agent")


def _agents_only(item: object, source: str) -> list[LoadedAgent]:
    from agent_framework import Agent

    if not isinstance(item, Agent):
        raise LoadFailed(source, f"the list holds {_kind(item)}, which is not an Agent Framework Agent")
    return [LoadedAgent(item, source)]


def _attribute(module: ModuleType, dotted: str) -> object:
    value: object = module
    for part in dotted.split("."):
        value = getattr(value, part)
    return value


def _kind(value: object) -> str:
    return f"a {type(value).__module__}.{type(value).__qualname__}"


def _failure(exc: BaseException) -> str:
    said = f"{type(exc).__name__}: {exc}"
    hint = _hint(exc)
    return f"{hint} ({said})" if hint else said


# What a dependency needs when it refuses what its own published samples write, while the user's agents are
# built: (its package, the function that raised, its exact message) -> (its distribution, what to write
# instead). Matched on all three, so the words only ever explain the refusal they were written for.
_HINTS = {
    (
        "agent_framework_redis",
        "RedisHistoryProvider.__init__",
        "application_id must be a non-empty string when key_format='scoped'",
    ): (
        "agent-framework-redis",
        "RedisHistoryProvider ({version}) needs application_id=... for its scoped keys, or key_format='legacy' "
        "(deprecated); the framework's sample predates this",
    ),
}


def _hint(exc: BaseException) -> str | None:
    tb = exc.__traceback__
    while tb is not None and tb.tb_next is not None:
        tb = tb.tb_next
    if tb is None:
        return None
    package = str(tb.tb_frame.f_globals.get("__name__", "")).partition(".")[0]
    known = _HINTS.get((package, tb.tb_frame.f_code.co_qualname, str(exc)))
    if known is None:
        return None
    distribution, words = known
    try:
        version = f"{distribution} {importlib.metadata.version(distribution)}"
    except importlib.metadata.PackageNotFoundError:
        version = distribution
    return words.format(version=version)
