"""Search every string an object graph holds: the proof that a forget left no residue.

The walk follows every reference from the roots (instances, containers, closures, suspended
coroutines and their frames) after a full garbage collection. It does not descend into modules,
classes or code objects: those hold the program, not what it was told.
"""

from __future__ import annotations

import gc
import sys
import types
from collections.abc import Iterable, Iterator


def _module_dicts() -> set[int]:
    return {id(vars(m)) for m in list(sys.modules.values()) if isinstance(m, types.ModuleType)}


def reachable_strings(*roots: object, ignore: Iterable[object] = ()) -> Iterator[tuple[str, object]]:
    """Each string (bytes decoded) reachable from `roots`, with the object that holds it."""
    gc.collect()
    skip = _module_dicts() | {id(o) for o in ignore}
    seen: set[int] = set()
    stack: list[tuple[object, object]] = [(root, None) for root in roots]
    while stack:
        obj, holder = stack.pop()
        if id(obj) in seen or id(obj) in skip:
            continue
        seen.add(id(obj))
        if isinstance(obj, str):
            yield obj, holder
        elif isinstance(obj, bytes | bytearray | memoryview):
            yield bytes(obj).decode("utf-8", "replace"), holder
        elif isinstance(obj, types.ModuleType | type | types.CodeType):
            continue
        elif isinstance(obj, types.FunctionType):
            cells = [c.cell_contents for c in obj.__closure__ or () if _filled(c)]
            stack.extend((o, obj) for o in [*cells, *(obj.__defaults__ or ()), *(obj.__kwdefaults__ or {}).values()])
        else:
            stack.extend((o, obj) for o in gc.get_referents(obj))


def _filled(cell: types.CellType) -> bool:
    try:
        cell.cell_contents  # noqa: B018
    except ValueError:
        return False
    return True


def residue(values: Iterable[str], *roots: object) -> dict[str, list[str]]:
    """For each value found, a short description of the strings (and their holders) that contain it."""
    needles = list(values)
    found: dict[str, list[str]] = {}
    for text, holder in reachable_strings(*roots, ignore=[needles, *needles]):
        for needle in needles:
            if needle in text:
                where = f"{type(holder).__name__}: {text[:160]!r}"
                found.setdefault(needle, []).append(where)
    return found
