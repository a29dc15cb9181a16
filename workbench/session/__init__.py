"""The session: the application service the UI talks to, and its only door (`SessionController`), without
drawing anything: the runtime, the conversation's transcript, forget, export, mode and recall switches, the
drift lab. Not an agent session (the framework's `AgentSession`). Imports no Textual, so it is tested alone."""
