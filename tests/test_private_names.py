"""Dependencies' private names are listed in docs/private-names.md against the versions they were checked
with: an upgrade fails here until the page is checked again, and so does a use of a dependency's private
name that the page does not list, or a listed name the dependency no longer has.

What counts as a use of a dependency's private name (`_x`: one leading underscore, not a dunder), in the
workbench, its tests and its benches:
- an import of a dependency's private module or name;
- an attribute `_x` reached on `self`, `cls` or `super()` inside a class that has a dependency class
  among its bases, when one of those dependency classes (its MRO) has `_x`: a method or class attribute,
  or an attribute its own methods set on `self`. Overrides (`def _inner_search`) count alike. The
  workbench's own attributes of such a class (`self._prepared`) do not: no dependency class has them;
- an attribute `_x` reached on any other object (`store._client`, `sdk._should_retry`), when a
  dependency class the file imports has `_x` and no class the file defines sets or defines `_x` itself;
  or when `_x` occurs in a dependency's installed source and no workbench code defines `_x` (as a
  function, class, parameter, variable or attribute): a name only a dependency has can only be its;
- a keyword argument `_x=` and a string literal `"_x"` (a screen id, a metadata key, a method named to
  a wrapper), by that last rule; a string used as an affix (`removesuffix("_id")`, `f"run_{name}_x"`)
  is not a name;
- a monkeypatch: an assignment to an attribute of a dependency's module or class
  (`linux_driver.XTermParser = ...`), or `setattr` on one, whatever the attribute's name.

A use is listed when a row of the page's section "The names" names its file (or a pattern matching it,
`tests/ui/*.py`) and the name (monkeypatches: the module's dotted name and the attribute). Every row says
the version its names were checked on, which must be the version the page checked for its package."""

from __future__ import annotations

import ast
import fnmatch
import functools
import importlib
import importlib.util
import inspect
import re
from dataclasses import dataclass
from importlib.metadata import version
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parent.parent
PAGE = ROOT / "docs" / "private-names.md"
# The import name of each dependency whose private names are watched, and its distribution.
DISTRIBUTIONS = {
    "agent_framework": "agent-framework-core",
    "agent_framework_duckdb": "agent-framework-duckdb",
    "agent_framework_postgres": "agent-framework-postgres",
    "agent_framework_redis": "agent-framework-redis",
    "agent_framework_openai": "agent-framework-openai",
    "agent_framework_mem0": "agent-framework-mem0",
    "textual": "textual",
    "textual_plotext": "textual-plotext",
    "openai": "openai",
    "mem0": "mem0ai",
    "plotext": "plotext",
    "rich": "rich",
}
_TOKEN = re.compile(r"(?<![A-Za-z0-9_])_[A-Za-z][A-Za-z0-9_]*")
_FORMAT_FIELD = re.compile(r"\{[A-Za-z_][\w.]*(?:![rsa])?\}")
_AFFIX_METHODS = {"removesuffix", "removeprefix", "startswith", "endswith", "split", "rsplit", "partition"}


def _private(name: str | None) -> bool:
    return name is not None and name.startswith("_") and not name.startswith("__") and len(name) > 1


def _watched(module: str) -> bool:
    return module.split(".")[0] in DISTRIBUTIONS


def _sources() -> list[Path]:
    """The workbench, its tests and benches; not this file, which names the names as data."""
    found = [*ROOT.glob("workbench/**/*.py"), *ROOT.glob("tests/**/*.py"), *ROOT.glob("bench/*.py")]
    return sorted(p for p in found if p != Path(__file__).resolve())


# --- the page ---------------------------------------------------------------------------------------


def _section(title: str) -> str:
    return PAGE.read_text().split(f"## {title}\n", 1)[1].split("\n## ", 1)[0]


def _table(text: str) -> list[list[str]]:
    rows = [
        [c.strip() for c in line.strip().strip("|").split("|")] for line in text.splitlines() if line.startswith("|")
    ]
    return [r for r in rows if r[0] not in {"package", "file"} and not set(r[0]) <= {"-", " "}]


def _rows(section: str) -> list[list[str]]:
    """The table rows of one `## ` section of the page, each as its cells (header and rule left out)."""
    return _table(_section(section))


def _checked() -> dict[str, str]:
    return {package: checked for package, checked in _rows("Versions checked")}


def _listed() -> dict[str, list[list[str]]]:
    """The rows of "The names", by the `### ` package section they are in."""
    parts = _section("The names").split("\n### ")[1:]
    return {part.split("\n", 1)[0].strip(): _table(part) for part in parts}


def _files_of(row: list[str]) -> list[str]:
    return re.findall(r"`([^`]+)`", row[0])


def _row_covers(row: list[str], file: str) -> bool:
    return any(fnmatch.fnmatch(file, pattern) for pattern in _files_of(row))


# --- the dependencies -------------------------------------------------------------------------------


@functools.cache
def _dependency_tokens() -> frozenset[str]:
    """Every private identifier that occurs in the watched dependencies' installed source (as a name, an
    attribute or inside a string)."""
    found: set[str] = set()
    for top in DISTRIBUTIONS:
        spec = importlib.util.find_spec(top)
        for folder in (spec.submodule_search_locations or []) if spec else []:
            for path in Path(folder).rglob("*.py"):
                found.update(_TOKEN.findall(path.read_text(errors="replace")))
    return frozenset(found)


@functools.cache
def _text(path: str) -> str:
    return Path(path).read_text(errors="replace")


@functools.cache
def _class_sources(path: str) -> dict[str, str]:
    """The source of each class a dependency's file defines at module level or inside a class (classes
    of one name merged)."""
    text = _text(path)
    lines = text.splitlines(keepends=True)
    found: dict[str, str] = {}

    def visit(body: list[ast.stmt]) -> None:
        for node in body:
            if isinstance(node, ast.ClassDef):
                found[node.name] = found.get(node.name, "") + "".join(lines[node.lineno - 1 : node.end_lineno])
                visit(node.body)
            elif isinstance(node, (ast.If, ast.Try)):
                visit([*node.body, *node.orelse])

    visit(ast.parse(text).body)
    return found


@functools.cache
def _dependency_class_has(cls: type, name: str) -> bool:
    """Whether a dependency class, or a dependency class in its MRO, has the private name: as a method or
    class attribute, or set on `self` in its body."""
    assignment = re.compile(rf"\bself\.{name}\b\s*(?::[^=\n]+)?=(?!=)")
    for klass in cls.__mro__:
        if not _watched(klass.__module__):
            continue
        if name in vars(klass):
            return True
        try:
            source = inspect.getsourcefile(klass)
        except TypeError:
            continue
        body = _class_sources(source).get(klass.__name__, "") if source else ""
        # The substring first: the expression, which must match it, took seconds over the large classes.
        if f"self.{name}" in body and assignment.search(body):
            return True
    return False


def _is_self(node: ast.expr) -> bool:
    return isinstance(node, ast.Name) and node.id == "self"


def _own_class_names(node: ast.ClassDef) -> set[str]:
    """The private names a class body defines: its methods and class attributes, and what its methods
    set on `self`."""
    names = {n.name for n in node.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))}
    for statement in node.body:
        if isinstance(statement, ast.Assign):
            names.update(t.id for t in statement.targets if isinstance(t, ast.Name))
        elif isinstance(statement, ast.AnnAssign) and isinstance(statement.target, ast.Name):
            names.add(statement.target.id)
    for n in ast.walk(node):
        if isinstance(n, ast.Attribute) and isinstance(n.ctx, ast.Store) and _is_self(n.value):
            names.add(n.attr)
    return {name for name in names if _private(name)}


# --- the workbench ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Use:
    file: str
    line: int
    kind: str  # import, attribute, override, keyword, string, monkeypatch
    name: str  # the private name; for an import `module:names`; for a monkeypatch `module.attribute`


def _embedded_code(tree: ast.Module) -> list[ast.Module]:
    """The Python programs a file holds as strings (a bench's script for a fresh interpreter): strings of
    several lines that parse, once their `str.format` fields (`{size!r}`) are filled, with a statement other
    than an expression; numbered as lines of the file."""
    found = []
    bare: set[int] = set()  # strings standing as statements (docstrings): never a program
    for node in ast.walk(tree):  # a statement before what it holds
        if isinstance(node, ast.Expr):
            bare.add(id(node.value))
        elif (
            isinstance(node, ast.Constant)
            and isinstance(node.value, str)
            and id(node) not in bare
            and "\n" in node.value.strip()
        ):
            try:
                program = ast.parse(node.value)
            except SyntaxError:
                try:
                    program = ast.parse(_FORMAT_FIELD.sub("None", node.value))
                except SyntaxError:
                    continue
            if any(not isinstance(statement, ast.Expr) for statement in program.body):
                found.append(ast.increment_lineno(program, node.lineno - 1))
    return found


class _File:
    """One workbench source file: what it imports, its classes, and the dependency classes behind them."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.rel = str(path.relative_to(ROOT))
        tree = ast.parse(path.read_text())
        self.trees = [tree, *_embedded_code(tree)]
        # Every node of the file and of its embedded programs, walked once: the scan reads them too.
        self.nodes = [node for tree in self.trees for node in ast.walk(tree)]
        self.bound: dict[str, tuple[str, str | None]] = {}  # local name: (module, imported name or None)
        for node in self.nodes:
            if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                for alias in node.names:
                    self.bound[alias.asname or alias.name] = (node.module, alias.name)
            elif isinstance(node, ast.Import):
                for alias in node.names:
                    self.bound[alias.asname or alias.name.split(".")[0]] = (
                        alias.name if alias.asname else alias.name.split(".")[0],
                        None,
                    )
        self.parents = {child: node for node in self.nodes for child in ast.iter_child_nodes(node)}
        self.classes = {n.name: n for n in self.nodes if isinstance(n, ast.ClassDef)}

    def resolve(self, name: str) -> Any:
        """The object an imported name is bound to (None when it is not imported or cannot be)."""
        if name not in self.bound:
            return None
        module, attribute = self.bound[name]
        try:
            imported = importlib.import_module(module)
            return imported if attribute is None else getattr(imported, attribute)
        except (ImportError, AttributeError):
            try:  # `from package import module`
                return importlib.import_module(f"{module}.{attribute}")
            except ImportError:
                return None

    def _base_object(self, base: ast.expr) -> Any:
        while isinstance(base, ast.Subscript):
            base = base.value
        if isinstance(base, ast.Name):
            return self.resolve(base.id) if base.id not in self.classes else self.classes[base.id]
        if isinstance(base, ast.Attribute) and isinstance(base.value, ast.Name):
            owner = self.resolve(base.value.id)
            return getattr(owner, base.attr, None) if owner is not None else None
        return None

    @functools.cache  # noqa: B019  # one _File per test run
    def dependency_bases(self, node: ast.ClassDef) -> tuple[type, ...]:
        """The dependency classes behind a class of this file (through its bases defined here)."""
        found: list[type] = []
        for base in node.bases:
            resolved = self._base_object(base)
            if isinstance(resolved, ast.ClassDef):
                found += self.dependency_bases(resolved)
            elif inspect.isclass(resolved):
                found += [klass for klass in resolved.__mro__ if _watched(klass.__module__)]
        return tuple(found)

    def inherits(self, node: ast.ClassDef | None, name: str) -> bool:
        """Whether a class of this file has the private name from a dependency class behind it."""
        return node is not None and any(_dependency_class_has(cls, name) for cls in self.dependency_bases(node))

    @functools.cached_property
    def imported_classes(self) -> tuple[type, ...]:
        """The dependency classes this file imports."""
        found = (self.resolve(local) for local, (module, _) in self.bound.items() if _watched(module))
        return tuple(cls for cls in found if inspect.isclass(cls))

    @functools.cached_property
    def own_class_names(self) -> set[str]:
        """The private names this file's classes define for themselves (not a dependency base's)."""
        return {
            name for node in self.classes.values() for name in _own_class_names(node) if not self.inherits(node, name)
        }

    def enclosing_class(self, node: ast.AST) -> ast.ClassDef | None:
        while node in self.parents:
            node = self.parents[node]
            if isinstance(node, ast.ClassDef):
                return node
        return None

    def is_dependency_object(self, node: ast.expr) -> str | None:
        """The dotted name of the dependency module or class `node` names, if it names one."""
        if isinstance(node, ast.Name) and node.id in self.bound and _watched(self.bound[node.id][0]):
            found = self.resolve(node.id)
            if inspect.ismodule(found):
                return found.__name__
            if inspect.isclass(found):
                return f"{found.__module__}.{found.__qualname__}"
        return None


def _affix(file: _File, node: ast.Constant) -> bool:
    parent = file.parents.get(node)
    if isinstance(parent, ast.JoinedStr):
        return True
    return (
        isinstance(parent, ast.Call)
        and isinstance(parent.func, ast.Attribute)
        and parent.func.attr in _AFFIX_METHODS
        and node in parent.args
    )


@functools.cache
def _scan() -> tuple[Use, ...]:
    files = [_File(path) for path in _sources()]
    dependency = _dependency_tokens()
    own: set[str] = set()  # private names workbench code defines for itself
    candidates: list[tuple[_File, Use, bool]] = []  # (file, use, certain)
    for file in files:
        for node in file.nodes:
            line = getattr(node, "lineno", 0)
            if isinstance(node, ast.ImportFrom) and node.module and node.level == 0 and _watched(node.module):
                names = [a.name for a in node.names if _private(a.name)]
                if names or any(p.startswith("_") for p in node.module.split(".")):
                    candidates.append((file, Use(file.rel, line, "import", f"{node.module}:{','.join(names)}"), True))
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and _private(node.name):
                parent = file.parents.get(node)
                if isinstance(parent, ast.ClassDef) and file.inherits(parent, node.name):
                    candidates.append((file, Use(file.rel, line, "override", node.name), True))
                else:
                    own.add(node.name)
            elif isinstance(node, ast.arg) and _private(node.arg):
                own.add(node.arg)
            elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store) and _private(node.id):
                own.add(node.id)
            elif isinstance(node, ast.alias) and node.asname and _private(node.asname):
                own.add(node.asname)
            elif isinstance(node, ast.Attribute) and _private(node.attr):
                receiver = node.value
                selfish = (isinstance(receiver, ast.Name) and receiver.id in ("self", "cls")) or (
                    isinstance(receiver, ast.Call)
                    and isinstance(receiver.func, ast.Name)
                    and receiver.func.id == "super"
                )
                if selfish:
                    if file.inherits(file.enclosing_class(node), node.attr):
                        candidates.append((file, Use(file.rel, line, "attribute", node.attr), True))
                    elif isinstance(node.ctx, ast.Store):
                        own.add(node.attr)
                elif (
                    isinstance(receiver, ast.Name)
                    and receiver.id in file.bound
                    and not _watched(file.bound[receiver.id][0])
                ):
                    pass  # another library's module or class (`os._exit`)
                elif file.is_dependency_object(receiver) or (
                    any(_dependency_class_has(cls, node.attr) for cls in file.imported_classes)
                    and node.attr not in file.own_class_names
                ):
                    candidates.append((file, Use(file.rel, line, "attribute", node.attr), True))
                else:
                    candidates.append((file, Use(file.rel, line, "attribute", node.attr), False))
            elif isinstance(node, ast.keyword) and _private(node.arg):
                candidates.append((file, Use(file.rel, line, "keyword", str(node.arg)), False))
            elif (
                isinstance(node, ast.Constant)
                and isinstance(node.value, str)
                and re.fullmatch(r"_[A-Za-z]\w*", node.value)
                and _private(node.value)
                and not _affix(file, node)
            ):
                candidates.append((file, Use(file.rel, line, "string", node.value), False))
            if isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
                for target in node.targets if isinstance(node, ast.Assign) else [node.target]:
                    if isinstance(target, ast.Attribute) and (where := file.is_dependency_object(target.value)):
                        candidates.append((file, Use(file.rel, line, "monkeypatch", f"{where}.{target.attr}"), True))
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Name)
                and node.func.id == "setattr"
                and len(node.args) >= 2
                and (where := file.is_dependency_object(node.args[0]))
            ):
                named = node.args[1]
                attribute = str(named.value) if isinstance(named, ast.Constant) else ast.unparse(named)
                candidates.append((file, Use(file.rel, line, "monkeypatch", f"{where}.{attribute}"), True))
    return tuple(use for _, use, certain in candidates if certain or (use.name in dependency and use.name not in own))


def _is_listed(use: Use, rows: list[list[str]]) -> bool:
    covering = [" ".join(r[1:]) for r in rows if _row_covers(r, use.file)]
    if use.kind == "import":
        module, names = use.name.split(":")
        private_module = any(p.startswith("_") for p in module.split("."))
        wanted = [n for n in names.split(",") if n]
        naming = [r for r in covering if not private_module or module in r]
        return bool(naming) and all(any(re.search(rf"(?<![\w]){n}(?![\w])", r) for r in naming) for n in wanted)
    if use.kind == "monkeypatch":
        return any(use.name in r for r in covering)
    return any(re.search(rf"(?<![\w]){re.escape(use.name)}(?![\w])", r) for r in covering)


# --- the tests --------------------------------------------------------------------------------------


@pytest.mark.parametrize("package", sorted(_checked()))
def test_the_installed_version_is_the_one_the_private_names_were_checked_against(package):
    installed = version(package)
    assert installed == _checked()[package], (
        f"{package} is {installed}, its private names were checked on {_checked()[package]}: re-check {package}'s "
        "rows against its source and record the version (see docs/private-names.md; bench/newest.py reports it)"
    )


def test_the_scan_sees_every_kind_of_use():
    found = {(u.file, u.kind, u.name) for u in _scan()}
    assert ("workbench/ui/paste.py", "import", "textual._xterm_parser:") in found
    assert ("workbench/ui/paste.py", "monkeypatch", "textual.drivers.linux_driver.XTermParser") in found
    assert ("workbench/recall/duckdb_search.py", "override", "_inner_search") in found
    assert ("workbench/recall/duckdb_search.py", "keyword", "_shared_client") in found
    assert ("workbench/recall/duckdb_private.py", "attribute", "_client") in found
    assert ("workbench/runtime/deadline.py", "attribute", "_should_retry") in found
    assert ("workbench/ui/main_screen.py", "string", "_default") in found
    # The workbench's own private attributes are not a dependency's, even on a dependency's subclass.
    assert not [u for u in _scan() if u.name in {"_prepared", "_private", "_start", "_composed"}]


def test_every_use_of_a_dependency_private_name_is_listed_with_its_reason():
    rows = [row for section in _listed().values() for row in section]
    unlisted = [u for u in _scan() if not _is_listed(u, rows)]
    assert not unlisted, "not listed in docs/private-names.md (file, name, reason, checked on):\n" + "\n".join(
        f"  {u.file}:{u.line} {u.kind} {u.name}" for u in unlisted
    )


def test_every_row_says_the_version_it_was_checked_on():
    checked = _checked()
    for package, rows in _listed().items():
        assert package in checked, f"docs/private-names.md: ### {package} has no version checked"
        for row in rows:
            assert len(row) == 4, f"{package}: a row needs file, name, reason and checked on: {row}"
            assert row[3] == checked[package], f"{package}: {row[1]} checked on {row[3]}, not {checked[package]}"


def _used_names(use: Use) -> set[str]:
    """The private names a use stands for: an import's private module parts and names too."""
    if use.kind == "import":
        module, names = use.name.split(":")
        return {p for p in module.split(".") if p.startswith("_")} | {n for n in names.split(",") if n}
    if use.kind == "monkeypatch":
        return {p for p in use.name.split(".") if _private(p)}
    return {use.name}


def test_every_listed_name_is_still_used_and_still_in_the_dependency():
    """A row whose name its files no longer use is stale; one the dependency no longer has is a bug."""
    dependency = _dependency_tokens()
    uses = _scan()
    for package, rows in _listed().items():
        for row in rows:
            files = [p for pattern in _files_of(row) for p in ROOT.glob(pattern)]
            assert files, f"{package}: no file matches {row[0]}"
            used = {name for use in uses if _row_covers(row, use.file) for name in _used_names(use)}
            for name in set(_TOKEN.findall(row[1])):
                assert name in used, f"{package}: {name} is listed for {row[0]}, which no longer uses it"
                assert name in dependency, f"{package}: {name} ({row[0]}) is not in the installed {package}"
            for dotted in re.findall(r"`([\w.]+)`", row[1]):
                top = dotted.split(".")[0]
                if top in DISTRIBUTIONS and "." in dotted:
                    _resolve_dotted(dotted)


def _resolve_dotted(dotted: str) -> None:
    """Import the longest module prefix of `dotted` and reach the rest as attributes."""
    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            found: Any = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        for attribute in parts[cut:]:
            assert hasattr(found, attribute), f"{dotted}: {attribute} is gone from the installed dependency"
            found = getattr(found, attribute)
        return
    raise AssertionError(f"{dotted} cannot be imported")
