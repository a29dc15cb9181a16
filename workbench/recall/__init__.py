"""Retrieved chat-history memory (seed 004): every message stored with its embedding in an Agent
Framework vector store, the most similar ones recalled before a run or on the model's request.

Unbounded and unverified, the opposite of the working memory's facts. Imports no Textual, and
nothing here depends on a particular store: DuckDB lives in `workbench.recall.duckdb_file`."""

import warnings

# The framework marks its vector stores experimental and warns once, on stderr, which would land in
# the middle of the TUI. The versions are pinned and docs/recall.md says the API is experimental.
warnings.filterwarnings("ignore", message=r"\[VECTOR_STORES\]")

# Recall as a holder of text and a memory the app lists (`setup.RecallSetup`, `config.DeferredRecall`).
NAME = "recall store"
UNIT = "stored message(s) deleted"  # on DuckDB, the file is rewritten so they are gone from disk too
