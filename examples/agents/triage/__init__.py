"""A triage agent whose conversation is kept on disk by Agent Framework's FileHistoryProvider
(one JSON Lines file per session). Offline on the workbench's built-in model; set EXAMPLE_MODEL
(and OPENAI_API_KEY, or OPENAI_BASE_URL for a local server) to run it on a real one (`_example_model.py`)."""

import os
from pathlib import Path

from _example_model import example_client
from agent_framework import Agent, FileHistoryProvider

DATA = Path(os.environ.get("EXAMPLE_AGENTS_DATA", Path(__file__).parent.parent / ".data"))


agent = Agent(
    example_client(),
    "You are the triage agent: you sort incoming product problems by module and priority.",
    name="triage",
    context_providers=[FileHistoryProvider(DATA / "triage-history")],
)
