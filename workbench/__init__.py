"""workbench: see and control what LLM agents remember."""

__version__ = "0.1.0"
