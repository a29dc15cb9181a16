"""Agent Framework's own memories as the workbench runs them: memory files the model writes itself
(`FileMemoryProvider`) and extracted long-term memory (`extracted.py`, while the framework has it), each
an `AgentMemory` both agents share, shown live and reached by the one forget, down to the disk."""

import warnings

# The framework marks its harness (both memories) experimental and warns once, on stderr, which would
# land in the middle of the TUI. The versions are pinned and the README says the API is experimental.
warnings.filterwarnings("ignore", message=r"\[(HARNESS|FILE_HISTORY)\]")
