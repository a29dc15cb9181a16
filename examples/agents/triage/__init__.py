"""A triage agent whose conversation is kept on disk by Agent Framework's FileHistoryProvider
(one JSON Lines file per session). Offline on the workbench's built-in model; set EXAMPLE_MODEL
(and OPENAI_API_KEY, or OPENAI_BASE_URL for a local server) to run it on a real one."""

import os
from pathlib import Path

from agent_framework import Agent, FileHistoryProvider

from workbench import ScriptedChatClient

DATA = Path(os.environ.get("EXAMPLE_AGENTS_DATA", Path(__file__).parent.parent / ".data"))


def _client():  # the model: a real one when EXAMPLE_MODEL names it, else the built-in script
    if model := os.environ.get("EXAMPLE_MODEL"):
        from agent_framework.openai import OpenAIChatCompletionClient

        return OpenAIChatCompletionClient(model=model)
    return ScriptedChatClient()


agent = Agent(
    _client(),
    "You are the triage agent: you sort incoming product problems by module and priority.",
    name="triage",
    context_providers=[FileHistoryProvider(DATA / "triage-history")],
)
