"""The example agents' model: a real one when EXAMPLE_MODEL names it, else the workbench's built-in
script (no network, no key). Not an entry of the folder: its name starts with `_`."""

import os

from workbench import ScriptedChatClient

# A local OpenAI-compatible server (llama.cpp, Ollama, vLLM) takes any key; OpenAI's own needs yours.
LOCAL_SERVER_KEY = "local-server-needs-no-key"


def example_client(*, uses_tools: bool = False):
    """EXAMPLE_MODEL on OpenAI (OPENAI_API_KEY) or on the server OPENAI_BASE_URL names (a key if it
    wants one, else a placeholder); without EXAMPLE_MODEL, the built-in script."""
    model = os.environ.get("EXAMPLE_MODEL")
    if not model:
        return ScriptedChatClient(uses_tools=uses_tools)
    from agent_framework.openai import OpenAIChatCompletionClient

    base_url = os.environ.get("OPENAI_BASE_URL") or None
    key = os.environ.get("OPENAI_API_KEY") or (LOCAL_SERVER_KEY if base_url else None)
    if key is None:
        raise RuntimeError(
            f"EXAMPLE_MODEL={model} needs OPENAI_API_KEY for OpenAI, or OPENAI_BASE_URL for a local server"
        )
    return OpenAIChatCompletionClient(model=model, base_url=base_url, api_key=key)
