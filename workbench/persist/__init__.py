"""Sessions that survive a restart: both agents' histories through the framework's
`FileHistoryProvider`, their sessions through `AgentSession.to_dict`/`from_dict`, and the facts and
the ledger, in files private to the user, reached by the one forget."""

import warnings

# The framework marks FileHistoryProvider experimental and warns once, on stderr, which would land in
# the middle of the TUI. The README says the API is experimental.
warnings.filterwarnings("ignore", message=r"\[FILE_HISTORY\]")
