"""The agents' sessions as a holder of text a forget reaches, made in one place: the runtime's and those
of the drift lab's policies that run the product's forget. The one builder (`workbench.build.builder`)
orders and registers every holder; `tests/test_layers.py` fails when one is registered anywhere else."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable

from workbench.memory.forget import ForgetPlan, TextHolder

AGENT_SESSIONS = "agent sessions"  # how a forget's report, F3 and the traces name the agents' sessions


def agent_sessions(
    texts: Callable[[], Iterable[str]], replace: Callable[[ForgetPlan], int | Awaitable[int]]
) -> TextHolder:
    """The agents' sessions as a forget reaches them: the texts of their messages now, and `replace`,
    which gives each agent a new, empty session (their count, in messages). The app's runtime and the
    lab's policies that run the product's forget hold the same."""
    return TextHolder(AGENT_SESSIONS, "message(s)", texts, replace)
