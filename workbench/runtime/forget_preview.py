"""What a forget will remove, told before it is asked, from the forget's own plan (`Forgetting.plan`):
the question shows this preview, and the answer Forget applies the plan it holds, the same object."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from workbench.memory.forget import ForgetPlan, Forgetting
from workbench.memory.holder_kinds import Itemised, KeepsOutside
from workbench.text import visible

if TYPE_CHECKING:
    from workbench.memory.records import Fact
    from workbench.runtime.memories import AgentMemory
    from workbench.runtime.remembered import Remembered, RememberedSystem


@dataclass(frozen=True)
class ForgetPreview:
    """What a forget will remove, before it is asked: `keys` None for everything; `removed` every fact
    that goes, `also` those of them not asked for (their values hold a forgotten one), `kept` how many
    facts stay, `reaches` the memories it empties or removes values from beside working memory and the
    agents' histories (the persisted sessions, the recall store while recall is on, the other memories),
    `agents` the panes whose sessions it replaces, `unreached` those it cannot reach, named before the
    user answers: a holder the workbench does not know, or a store that could not be read (with why),
    which the forget will try and report. `plan`: the one plan all this is read from, which the answer
    Forget applies (`SessionController.forget`)."""

    keys: tuple[str, ...] | None
    removed: tuple[str, ...]
    also: tuple[str, ...]
    kept: int
    reaches: tuple[str, ...]
    agents: tuple[str, ...]  # the panes whose sessions it replaces (the question counts them)
    unreached: tuple[str, ...] = ()  # memories it cannot reach (a provider it does not know, a store unread)
    # For a forget of keys, each of `reaches` as what is remembered now shows it (F3): True when it holds
    # a value the forget removes, False when it holds none, None when that is not known (it could not be
    # read, or keeps what this process does not see). Empty for a forget of everything, which empties them.
    holding: Mapping[str, bool | None] = field(default_factory=dict)
    plan: ForgetPlan | None = field(default=None, repr=False, compare=False)  # holds the values: never shown


def _holding(system: RememberedSystem | None, keys: set[str], *, outside: bool) -> bool | None:
    """Whether `system` holds a value of `keys` now (True), none (False), or that is not known (None): it
    could not be read, or some of what it keeps is not seen here (a service's, one outside this process)."""
    if system is None or system.unread is not None:
        return None
    if keys & set(system.keys):
        return True
    return None if outside or any(item.unknown for item in system.items) else False


async def forget_preview(
    plan: ForgetPlan,
    facts: Sequence[Fact],
    forgetting: Forgetting,
    memories: Sequence[AgentMemory],
    recall: AgentMemory | None,
    persisted: bool,
    histories: str,
    *,
    agents: tuple[str, ...],
    remembered: Callable[[], Awaitable[Remembered]],
) -> ForgetPreview:
    """The preview of `plan` over memory's `facts` now: the facts that go, the other facts among them
    (their values hold a forgotten one), how many stay, and the memories it empties or removes values
    from beside working memory and the agents' histories: the persisted sessions (when `persisted`), the
    `recall` store (while it is on), the other `memories`; for a forget of keys, what each holds of the
    values that go as `remembered` shows it (the histories' system is named `histories`)."""
    left = plan.kept(facts)
    kept = {f.key for f in left}
    gone = tuple(f.key for f in facts if f.key not in kept)
    keys = plan.asked
    also = tuple(k for k in gone if keys is not None and k not in keys)
    unread = dict(plan.unread)
    unreachable = forgetting.unreachable()
    missed = {*unreachable, *unread}
    unreached = (
        *(n for n in unreachable if n not in unread),
        *(f"{name} (could not be read: {visible(why)})" for name, why in unread.items()),
    )
    said = {m.name: m.announced for m in memories if isinstance(m, Itemised)}  # each id it deletes
    said |= {
        m.name: "in this process; what it keeps outside it is not known, and stays"
        for m in memories
        if isinstance(m, KeepsOutside) and m.outside and m.name not in said  # an itemised one says it itself
    }
    stores = ["persisted sessions"] if persisted else []
    names = [n for n in (*stores, *([recall.name] if recall else []), *(m.name for m in memories)) if n not in missed]
    reaches = tuple(f"{n} ({said[n]})" if n in said else n for n in names)
    holding: dict[str, bool | None] = {}
    if keys is not None and names:  # what each holds of the values that go, as F3 shows it
        systems = {system.name: system for system in (await remembered()).systems}
        if (kept_histories := systems.get(histories)) is not None:
            systems.setdefault("persisted sessions", kept_histories)
        outside = {m.name for m in memories if isinstance(m, KeepsOutside) and m.outside}
        forgotten = {*keys, *gone}
        for name, shown in zip(names, reaches, strict=True):
            holding[shown] = _holding(systems.get(name), forgotten, outside=name in outside)
    return ForgetPreview(keys, gone, also, len(left), reaches, agents, unreached, holding, plan)
