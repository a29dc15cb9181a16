"""`workbench`: the TUI by default."""

from __future__ import annotations

import argparse
import sys

from workbench.runtime import ConfigError, Mode, ModelConfig, WriterKind


def add_model_options(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("model (default: the built-in scripted model, no network)")
    group.add_argument("--model", help="a model on an OpenAI-compatible server; without it the built-in model runs")
    group.add_argument("--base-url", help="the server's /v1 URL (default: OPENAI_BASE_URL, else OpenAI)")
    group.add_argument("--writer-model", help="a separate model for the writer (default: --model)")
    group.add_argument("--timeout", type=float, default=120.0, help="seconds per model call (default: 120)")


def model_config(args: argparse.Namespace) -> ModelConfig:
    return ModelConfig.from_options(
        model=args.model, base_url=args.base_url, writer_model=args.writer_model, timeout=args.timeout
    )


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="workbench",
        description="See and control what LLM agents remember. Keys: OPENAI_API_KEY (never shown).",
    )
    add_model_options(parser)
    parser.add_argument(
        "--mode",
        choices=[m.value for m in Mode],
        default=Mode.MANUAL.value,
        help="how the facts reach the agents: in the user message (manual) or a context provider",
    )
    parser.add_argument(
        "--writer",
        choices=[w.value for w in WriterKind],
        default=WriterKind.MODEL.value,
        help="who proposes facts: the writer model, or the host's own parse (no model call)",
    )
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        config = model_config(args)
    except ConfigError as exc:
        print(f"workbench: {exc}", file=sys.stderr)
        return 2
    from workbench.memory import WorkingMemory
    from workbench.runtime import AgentRuntime, build_models
    from workbench.ui.app import WorkbenchApp

    runtime = AgentRuntime(
        WorkingMemory(),
        build_models(config),
        mode=Mode(args.mode),
        writer=WriterKind(args.writer),
        timeout=config.timeout,
    )
    WorkbenchApp(runtime).run()
    return 0
