"""workbench: see and control what LLM agents remember.

From Python, `serve(agents=[...])` opens the TUI on your own Agent Framework agents, and
`ScriptedChatClient` is the built-in offline model, for agents that run with no network and no key
(`examples/agents/`). Both load the framework only when used. Without the window,
`workbench.session.assemble.assemble(...)` builds the same session, every holder of text registered
with its one forget (`docs/your-agents.md`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from workbench.runtime.scripted import ScriptedChatClient

__all__ = ["ScriptedChatClient", "__version__", "serve"]


def serve(agents: Sequence[object], argv: Sequence[str] = ()) -> int:
    """Open the TUI on `agents` (each an Agent, a list of them, or a function returning them), with the
    command line's other options in `argv` (e.g. `["--persist"]`); returns the exit status, 2 when an
    agent cannot be used (one line on stderr). The app is built by the one assembly, as without the
    window: `workbench.session.assemble.assemble(models, agents=...)` (`docs/your-agents.md`)."""
    from workbench.command import main

    return main(list(argv), agents=agents)


def __getattr__(name: str) -> Any:
    if name == "__version__":  # pyproject.toml's, the one source, read when asked (importlib.metadata costs 20 ms)
        from importlib.metadata import version

        return version("agent-memory-workbench")
    if name == "ScriptedChatClient":
        from workbench.runtime.scripted import ScriptedChatClient

        return ScriptedChatClient
    raise AttributeError(f"module 'workbench' has no attribute {name!r}")
