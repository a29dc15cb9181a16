"""The user's own agents, found the way Agent Framework's DevUI finds them.

A folder (`workbench PATH`): each subfolder a package whose `__init__.py` exports `agent` (or
`agents`), or a `.py` file exporting `agent` or `agents`; names starting with `.` or `_` are skipped.
An importable object (`--agents module:attribute`): an `Agent`, a list of them, or a function that
returns one or a list. From Python: `workbench.serve(agents=[...])`.

Loading a module runs its code, as it does in DevUI: point the workbench only at code you trust.
A `.env` beside an agent (or in the folder above) is read first, as DevUI does, without overriding
what the environment already sets.

A folder loads what loads, as DevUI does (`load_folder`): every entry that imports is kept, and every
one that does not is a `LoadFailed` in `Loaded.skipped`, one line naming the file and the problem, which
the command line prints on stderr and the app shows; the start stops (exit status 2) only when nothing
loads, or at the first failure with `--strict` (`from_folder`). `--agents module:attribute` and
`workbench.serve` load all or nothing: the user named each one. A module that exits (`sys.exit()` at
import) is a load error too, never a silent end. An agent without a name in a folder's entry gets the
entry's name (its folder's, or its module's), said as such (`LoadedAgent.named_by`).

A `workflow` an entry exports is a `LoadedWorkflow`, with the agents its executors run (an
`AgentExecutor`'s agent, or an `Agent` an executor of the user's holds): never dropped in silence.

A dependency's refusal of what its own published samples write says what it needs (`_HINTS`). What
the user's code prints while it loads goes to stderr: stdout carries the scripts' reports
(`workbench remembered --json`).
"""

from __future__ import annotations

import importlib
import importlib.metadata
import importlib.util
import sys
from collections.abc import Iterable, Iterator
from contextlib import redirect_stdout
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING

from workbench.text import clip, hides, visible

if TYPE_CHECKING:
    from agent_framework import Agent, Workflow

EXPORTS = ("agent", "agents")
WORKFLOW_EXPORTS = ("workflow",)  # as DevUI: an entry's module exporting `workflow`
MAX_NAME_CHARS = 40  # a pane's title, a holder's name in the forget's report
_PROBLEM_CHARS = 300  # how much of an import error's message the one line carries
_NOTICE_CHARS = 100  # how much of it the app's notice carries


class LoadFailed(Exception):
    """What could not be loaded: `where` is the file or `module:attribute`, `problem` one sentence."""

    def __init__(self, where: str, problem: str, skipped: tuple[LoadFailed, ...] = ()) -> None:
        self.where = where
        self.problem = problem
        self.skipped = skipped  # a folder's entries that did not load, each said before this line
        super().__init__(f"{visible(where)}: {visible(clip(problem, _PROBLEM_CHARS))}")


@dataclass(frozen=True)
class LoadedAgent:
    """An agent the user built, and where it came from (shown in F1 and in a load error)."""

    agent: Agent
    source: str
    named_by: str | None = None  # "folder name" or "module name" when the agent had no name of its own

    @property
    def name(self) -> str:
        return self.agent.name or ""

    @property
    def label(self) -> str:
        """The name as the app shows it: "weather_agent (folder name)" for a name the workbench gave."""
        return f"{self.name} ({self.named_by})" if self.named_by else self.name


@dataclass(frozen=True)
class LoadedWorkflow:
    """A workflow an entry exports (`workflow = WorkflowBuilder(...).build()`), the agents its executors
    run, and why a message typed in a pane cannot start it (`cannot_run`), None when it can."""

    workflow: Workflow
    name: str
    source: str
    agents: tuple[LoadedAgent, ...]
    named_by: str | None = None
    cannot_run: str | None = None

    @property
    def label(self) -> str:
        return f"{self.name} ({self.named_by})" if self.named_by else self.name


@dataclass(frozen=True)
class Loaded:
    """What a folder (and the other sources) loaded: the agents, the workflows, and each entry that did
    not load, as its one line (`LoadFailed`)."""

    agents: tuple[LoadedAgent, ...] = ()
    workflows: tuple[LoadedWorkflow, ...] = ()
    skipped: tuple[LoadFailed, ...] = ()
    root: Path | None = None  # the folder, when loaded from one: the notice names its entries under it

    @property
    def names(self) -> tuple[str, ...]:
        """Every pane's name: the agents', then the workflows'."""
        return (*(a.name for a in self.agents), *(w.name for w in self.workflows))

    def notice(self) -> str | None:
        """What the app says once it opens, in short lines: each entry not loaded (its file under the folder,
        its reason cut to `_NOTICE_CHARS`: stderr and What is remembered have them whole), each name the
        workbench gave, each workflow a message cannot start; None when there is nothing to say."""
        lines = [f"not loaded: {self._short(f.where)}: {visible(clip(f.problem, _NOTICE_CHARS))}" for f in self.skipped]
        if self.skipped:
            lines.append("(each in full on stderr and in What is remembered, F3)")
        lines += [f"named {item.label}" for item in self.agents if item.named_by]
        lines += [f"named {flow.label}" for flow in self.workflows if flow.named_by]
        lines += [f"workflow {w.label}: cannot start from a pane" for w in self.workflows if w.cannot_run]
        return "\n".join(lines) or None

    def _short(self, where: str) -> str:
        path = Path(where)
        if self.root is not None and path.is_relative_to(self.root):
            return visible(path.relative_to(self.root).as_posix())
        return visible(where)


def from_folder(path: Path) -> tuple[LoadedAgent, ...]:
    """Every agent a DevUI-style folder exports, all or nothing (`--strict`): the first entry that
    cannot be used is a `LoadFailed`."""
    return load_folder(path, strict=True).agents


def load_folder(path: Path, *, strict: bool = False) -> Loaded:
    """What a DevUI-style folder exports, in the order of its entries' names: each entry that loads,
    and each one that does not as its `LoadFailed` (raised at once when `strict`). A `LoadFailed` when
    the folder cannot be read, or nothing in it loads."""
    folder = path.expanduser()
    if not folder.is_dir():
        raise LoadFailed(str(path), "no such folder" if not folder.exists() else "not a folder")
    agents: list[LoadedAgent] = []
    workflows: list[LoadedWorkflow] = []
    skipped: list[LoadFailed] = []
    for entry in sorted(folder.iterdir(), key=lambda p: p.name):
        if entry.name.startswith((".", "_")):
            continue
        if entry.is_dir() and any((entry / name).is_file() for name in ENTRY_FILES):
            named_by = "folder name"
        elif entry.is_file() and entry.suffix == ".py" and _may_export(entry):
            named_by = "module name"
        else:
            continue
        try:
            found, flows = [], []
            for module, file in _entry_modules(entry):  # as DevUI: the package, then its agent.py, its workflow.py
                found = _exported(module, file, entry.stem, named_by)
                flows = _workflows(module, file, entry.stem, named_by)
                if found or flows:
                    break
            checked([*agents, *found], [*workflows, *flows])
        except LoadFailed as failed:
            if strict:
                raise
            skipped.append(failed)
            continue
        agents += found
        workflows += flows
    if not agents and not workflows:
        if skipped:
            count = f"{len(skipped)} entr{'y' if len(skipped) == 1 else 'ies'}"
            raise LoadFailed(
                str(path), f"nothing loaded: {count} could not be loaded (each said above)", tuple(skipped)
            )
        raise LoadFailed(
            str(path),
            "exports no agent: no subfolder with an __init__.py or .py file defines agent, agents or workflow",
        )
    return Loaded(tuple(agents), tuple(workflows), tuple(skipped), folder)


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


def checked(loaded: Iterable[LoadedAgent], workflows: Iterable[LoadedWorkflow] = ()) -> tuple[LoadedAgent, ...]:
    """The agents, each with a name of its own, and the workflows' names beside them (each is a pane):
    a missing or repeated name is a `LoadFailed`."""
    agents = tuple(loaded)
    seen: dict[str, str] = {}
    for name, source, what in (
        *((item.name, item.source, "agents") for item in agents),
        *((w.name, w.source, "panes (agents and workflows)") for w in workflows),
    ):
        name = name.strip()
        if not name:
            raise LoadFailed(source, "an agent has no name: give it Agent(..., name=...)")
        if len(name) > MAX_NAME_CHARS or any(hides(ch) or ch in "\n\t" for ch in name):
            raise LoadFailed(
                source,
                f"an agent's name must be at most {MAX_NAME_CHARS} characters with nothing invisible: {name!r}",
            )
        if name in seen:
            raise LoadFailed(source, f"two {what} are named {name!r} (the other comes from {seen[name]})")
        seen[name] = source
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


ENTRY_FILES = ("__init__.py", "agent.py", "workflow.py")  # what makes a subfolder an entry, as for DevUI


def _entry_modules(entry: Path) -> Iterator[tuple[ModuleType, Path]]:
    """An entry's modules in the order DevUI tries them, each imported when asked for: a `.py` file;
    or a subfolder's package (its `__init__.py`), then its `agent.py`, then its `workflow.py`."""
    if entry.is_file():
        yield _import_file(entry.stem, entry), entry
        return
    init = entry / "__init__.py"
    if init.is_file():
        yield _import_file(entry.name, init, package=entry), init
    for stem in ("agent", "workflow"):
        if (file := entry / f"{stem}.py").is_file():
            yield _import_submodule(entry, stem), file


def _import_submodule(entry: Path, stem: str) -> ModuleType:
    """`entry`'s module `stem` (`agent.py`, `workflow.py`), imported as `<folder>.<stem>` so that its
    relative imports work, as DevUI imports it."""
    _read_env(entry)
    if (folder := str(entry.parent.resolve())) not in sys.path:
        sys.path.insert(0, folder)
    name = f"{entry.name}.{stem}"
    try:
        with redirect_stdout(sys.stderr):
            return importlib.import_module(name)
    except (Exception, SystemExit) as exc:  # the user's code may raise anything while it runs, or exit
        sys.modules.pop(name, None)
        raise LoadFailed(str(entry / f"{stem}.py"), _failure(exc)) from exc


def _may_export(file: Path) -> bool:
    """Whether a `.py` file of the folder binds `agent`, `agents` or `workflow` at its top level, read
    without running it, as DevUI reads one: a launcher that builds its agents inside `main()` (DevUI's own
    `main.py`) is no entry, and is not imported. A file that cannot be read or parsed is tried (its import
    says what is wrong)."""
    import ast

    try:
        tree = ast.parse(file.read_bytes(), filename=str(file))
    except (OSError, SyntaxError, ValueError):
        return True
    wanted = {*EXPORTS, *WORKFLOW_EXPORTS}
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) and node.name in wanted:
            return True
        if isinstance(node, ast.Import | ast.ImportFrom):
            if any((alias.asname or alias.name).split(".")[0] in wanted for alias in node.names):
                return True
            if any(alias.name == "*" for alias in node.names):
                return True
            continue
        if isinstance(node, ast.Assign | ast.AnnAssign | ast.AugAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if any(isinstance(n, ast.Name) and n.id in wanted for t in targets for n in ast.walk(t)):
                return True
        elif isinstance(node, ast.If | ast.Try | ast.With) and any(  # an export bound under a guard
            isinstance(n, ast.Name) and n.id in wanted and isinstance(n.ctx, ast.Store) for n in ast.walk(node)
        ):
            return True
    return False


def _read_env(folder: Path) -> None:
    from dotenv import load_dotenv

    for env in (folder / ".env", folder.parent / ".env"):
        if env.is_file():
            load_dotenv(env, override=False)
            return


def _exported(module: ModuleType, file: Path, entry: str, named_by: str) -> list[LoadedAgent]:
    """The agents the entry's module exports; one without a name gets the entry's (`named_by`)."""
    values = [getattr(module, name) for name in EXPORTS if hasattr(module, name)]
    found = [agent for value in values for agent in _agents(value, str(file))]
    unnamed = [item for item in found if not (item.agent.name or "").strip()]
    for number, item in enumerate(unnamed, start=1):
        name = entry if len(unnamed) == 1 else f"{entry}_{number}"
        found[found.index(item)] = LoadedAgent(_named(item.agent, name), item.source, named_by)
    return found


def _named(agent: Agent, name: str) -> Agent:
    """A copy of the user's agent under `name`: their object keeps its own (no) name."""
    import copy

    named = copy.copy(agent)
    named.name = name
    return named


def _workflows(module: ModuleType, file: Path, entry: str, named_by: str) -> list[LoadedWorkflow]:
    """The workflow the entry's module exports, with the agents its executors run; a `LoadFailed` for
    an export named `workflow` that is not one."""
    from agent_framework import Workflow

    found: list[LoadedWorkflow] = []
    for export in WORKFLOW_EXPORTS:
        if not hasattr(module, export):
            continue
        value = getattr(module, export)
        if callable(value) and not isinstance(value, Workflow):
            try:
                with redirect_stdout(sys.stderr):
                    value = value()
            except (Exception, SystemExit) as exc:  # the user's factory may raise anything, or exit
                raise LoadFailed(str(file), _failure(exc)) from exc
        if not isinstance(value, Workflow):
            raise LoadFailed(str(file), f"{export} is {_kind(value)}, not an Agent Framework Workflow")
        own = (value.name or "").strip()
        generated = not own or own.startswith("WorkflowBuilder-")  # the builder's name when given none
        name, given = (entry, named_by) if generated else (own, None)
        found.append(
            LoadedWorkflow(value, name, str(file), workflow_agents(value, str(file)), given, _cannot_run(value))
        )
    return found


def workflow_agents(workflow: Workflow, source: str) -> tuple[LoadedAgent, ...]:
    """The agents a workflow's executors run, each once: an `AgentExecutor`'s agent (an `Agent` given to
    the builder is wrapped in one), and an `Agent` an executor of the user's holds as an attribute."""
    from agent_framework import Agent, AgentExecutor

    found: dict[int, Agent] = {}
    for executor in workflow.get_executors_list():
        held = [executor.agent] if isinstance(executor, AgentExecutor) else list(vars(executor).values())
        for value in held:
            if isinstance(value, Agent):
                found.setdefault(id(value), value)
    return tuple(LoadedAgent(agent, source) for agent in found.values())


def _cannot_run(workflow: Workflow) -> str | None:
    """Why a message typed in a pane cannot start `workflow` (its first executor takes no text), or None."""
    from agent_framework import Message

    takes = workflow.input_types
    if str in takes or Message in takes:
        return None
    names = ", ".join(getattr(t, "__name__", str(t)) for t in takes) or "nothing"
    return f"its first executor takes {names}, not a message: the workbench cannot start it from a pane"


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
