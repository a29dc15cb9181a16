"""A notes agent that keeps its own memory files (Agent Framework's FileMemoryProvider: the model
writes them with the file_memory_* tools) and has one tool of its own. Offline on the workbench's
built-in model, which writes each message's key=value declarations to a memory file when it is
offered the tools; set EXAMPLE_MODEL (and OPENAI_API_KEY, or OPENAI_BASE_URL for a local server) to
run it on a real one (`_example_model.py`)."""

import os
from pathlib import Path

from _example_model import example_client
from agent_framework import Agent, FileMemoryProvider, FileSystemAgentFileStore, tool

DATA = Path(os.environ.get("EXAMPLE_AGENTS_DATA", Path(__file__).parent / ".data"))

LOGS = {"Billing": "/var/log/billing/app.log", "Reporting": "/var/log/reporting/jobs.log"}


@tool
def log_location(module: str) -> str:
    """Where a module writes its logs."""
    return LOGS.get(module, f"no log location is known for {module}")


agent = Agent(
    example_client(uses_tools=True),  # the built-in script writes memory files, as a model calling tools does
    "You are the notes agent: you keep notes of what the user tells you and say where logs are.",
    name="notes",
    tools=[log_location],
    context_providers=[FileMemoryProvider(FileSystemAgentFileStore(DATA / "notes-memory"), scope="user")],
)
