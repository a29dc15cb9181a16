"""One working session as the app runs it, without drawing anything: the runtime, the conversation's
transcript, forget, export, mode and recall switches. Imports no Textual, so it is tested alone."""
