"""The one place a holder of user or model text is registered with a forget (`tests/test_layers.py`
fails when one is registered anywhere else).

Two callers hand it their holders, each list in the order a forget reaches them: the one assembly
of a running workbench (`workbench.session.assemble`: the runtime's holders, the session's, the
persisted sessions last), and the drift lab's product policies (`workbench.drift`), each of which runs
the product's forget over the one memory it compares. It lives below both, since the session and the
lab are peers that import neither each other."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable

from workbench.memory.forget import ForgetPlan, Forgetting, Holder, Memory, TextHolder

AGENT_SESSIONS = "agent sessions"  # how a forget's report, F3 and the traces name the agents' sessions


def register(forgetting: Forgetting, holders: Iterable[Holder]) -> None:
    """Register `holders` with `forgetting`, in the order a forget reaches them."""
    for holder in holders:
        forgetting.register(holder)


def forgetting_over(memory: Memory, holders: Iterable[Holder]) -> Forgetting:
    """A forget of its own over `memory` and `holders`: memory first, then each holder in order, as in
    the app. A drift lab policy's, which keeps its memory in a folder of its own and writes no journal."""
    forgetting = Forgetting(memory)
    register(forgetting, holders)
    return forgetting


def agent_sessions(
    texts: Callable[[], Iterable[str]], replace: Callable[[ForgetPlan], int | Awaitable[int]]
) -> TextHolder:
    """The agents' sessions as a forget reaches them: the texts of their messages now, and `replace`,
    which gives each agent a new, empty session (their count, in messages). The app's runtime and the
    lab's policies that run the product's forget hold the same."""
    return TextHolder(AGENT_SESSIONS, "message(s)", texts, replace)
