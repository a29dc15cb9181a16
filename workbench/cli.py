"""`workbench`: the TUI by default."""

from __future__ import annotations

import argparse
import asyncio
import math
import os
import sys
from collections.abc import Callable, Sequence
from functools import partial
from typing import TYPE_CHECKING, Any, NoReturn

from workbench.agentmem.config import AgentMemoryConfig, AgentMemoryKind
from workbench.heap import release_collections
from workbench.loading import Loaded, LoadedAgent, LoadedWorkflow, LoadFailed
from workbench.notes import LibraryLog, library_log
from workbench.recall.config import RecallConfig
from workbench.runtime.config import (
    DEFAULT_AZURE_API_VERSION,
    DEFAULT_MAX_TOKENS,
    ConfigError,
    Mode,
    ModelConfig,
    WriterFormat,
    WriterKind,
)
from workbench.runtime.telemetry import TelemetryError, TelemetrySettings, start_telemetry

if TYPE_CHECKING:
    from workbench.agentmem.mem0_config import Mem0Config
    from workbench.drift.copies import Refused
    from workbench.memory.contract import Contract
    from workbench.persist.journal import ForgetJournal
    from workbench.persist.redis_histories import RedisHistories
    from workbench.persist.sessions import PersistedSessions
    from workbench.session.controller import SessionController
    from workbench.ui.app import WorkbenchApp


# Mirrors workbench.chronology.MAX_TURNS, which the CLI cannot import before it parses (the lab
# is heavy to load); tests/drift/test_cli.py checks that the two agree.
MAX_TURNS = 2_000


class Parser(argparse.ArgumentParser):
    """Usage errors as one line on stderr and exit status 2 (argparse prints the whole usage first)."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: {message} (see --help)\n")


def _seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not (math.isfinite(value) and value > 0):
        raise argparse.ArgumentTypeError(f"takes a number of seconds, more than 0; not {_quoted(text)}")
    return value


def _tokens(text: str) -> int:
    stripped = text.strip()
    if not (stripped.isascii() and stripped.isdigit() and int(stripped) > 0):
        raise argparse.ArgumentTypeError(f"takes a number of tokens, more than 0; not {_quoted(text)}")
    return int(stripped)


def _turns(text: str) -> int:
    stripped = text.strip()
    if not (stripped.isascii() and stripped.isdigit() and int(stripped) > 0):
        raise argparse.ArgumentTypeError(f"takes a number of turns, more than 0; not {_quoted(text)}")
    if int(stripped) > MAX_TURNS:
        raise argparse.ArgumentTypeError(f"at most {MAX_TURNS:,} turns; {int(stripped):,} asked")
    return int(stripped)


def _lengths(text: str) -> tuple[int, ...]:
    from workbench.drift.sweep import parse_lengths

    try:
        return parse_lengths(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


# Mirrors the names of workbench.drift.POLICIES for --policies' help, before the lab is loaded;
# tests/drift/test_cli.py checks that the two agree.
POLICY_NAMES = (
    *("full", "window", "summary", "facts", "compaction", "recall", "recall_purged"),
    *("persisted", "memory_files", "extracted", "mem0"),
)


def _names(text: str) -> tuple[str, ...]:
    """--policies' names, separated by commas; whether a policy has each name is checked once the
    user's agents are loaded (their policies are named after them)."""
    names = tuple(part.strip(" ") for part in text.split(","))  # spaces only: no invisible character dropped
    if not all(names):
        raise argparse.ArgumentTypeError(
            f"takes policy names separated by commas, like full,facts; not {_quoted(text)}"
        )
    return names


REDIS_SCHEMES = ("redis://", "rediss://", "unix://")


def _persist_target(text: str) -> str:
    """--persist's optional value: a Redis URL (never echoed: it may hold a password)."""
    if not text.startswith(REDIS_SCHEMES):
        raise argparse.ArgumentTypeError("expected nothing or a Redis URL (redis://, rediss://, unix://)")
    from workbench.agentmem.redis_server import display_url

    try:
        display_url(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
    return text


def redis_persist(args: argparse.Namespace) -> str | None:
    """The Redis URL `--persist redis://…` keeps the agents' histories on, if it gave one."""
    return args.persist if isinstance(args.persist, str) else None


def _quoted(text: str) -> str:
    from workbench.memory.shown import quoted

    return quoted(text, 40)


def add_model_options(parser: argparse.ArgumentParser, *, with_defaults: bool = True) -> None:
    group = parser.add_argument_group("model (default: the built-in scripted model, no network)")
    # Subcommands leave the default out, so an option given before the subcommand is not overwritten.
    timeout_default: dict[str, Any] = {"default": 120.0} if with_defaults else {}
    tokens_default: dict[str, Any] = {"default": DEFAULT_MAX_TOKENS} if with_defaults else {}
    group.add_argument("--model", help="a model on an OpenAI-compatible server; without it the built-in model runs")
    group.add_argument("--base-url", help="the server's /v1 URL (default: OPENAI_BASE_URL, else OpenAI)")
    group.add_argument("--writer-model", help="a separate model for the writer (default: --model)")
    group.add_argument(
        "--azure-endpoint",
        help="an Azure OpenAI resource, https://<resource>.openai.azure.com (default: AZURE_OPENAI_ENDPOINT); "
        "--model and --writer-model then name deployments (default: AZURE_OPENAI_DEPLOYMENT_NAME)",
    )
    group.add_argument(
        "--api-version",
        help=f"the Azure OpenAI API version (default: AZURE_OPENAI_API_VERSION, else {DEFAULT_AZURE_API_VERSION})",
    )
    group.add_argument(
        "--writer-format",
        choices=[f.value for f in WriterFormat],
        help="how the writer's JSON travels: json_schema (default for OpenAI and the built-in model), "
        "json_object_schema (JSON mode with the schema: llama.cpp, llama-cpp-python), json_object, prompt, or "
        "auto (default for other servers: steps down in that order when the server refuses a format)",
    )
    group.add_argument(
        "--timeout",
        type=_seconds,
        help="seconds per model call (default: 120)",
        **timeout_default,
    )
    group.add_argument(
        "--max-tokens",
        type=_tokens,
        help=f"the most tokens an agent's or the summarizer's reply may have (default: {DEFAULT_MAX_TOKENS}); a "
        "longer reply is cut off and not kept. The writer's bound follows from the message (a few hundred tokens)",
        **tokens_default,
    )


def model_config(args: argparse.Namespace) -> ModelConfig:
    return ModelConfig.from_options(
        model=args.model,
        base_url=args.base_url,
        writer_model=args.writer_model,
        timeout=args.timeout,
        writer_format=args.writer_format,
        azure_endpoint=args.azure_endpoint,
        api_version=args.api_version,
        max_tokens=args.max_tokens,
    )


def add_recall_options(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("recall: retrieved chat-history memory (seed 004), off by default")
    group.add_argument(
        "--recall",
        action="store_true",
        help="store every message with its embedding and recall the most similar ones into each request",
    )
    group.add_argument(
        "--recall-store",
        metavar="PATH|memory|postgresql://...",
        help="the DuckDB file (default: recall.duckdb in the user's data directory), 'memory' (gone on exit), or "
        "a PostgreSQL database with pgvector (default when set: WORKBENCH_RECALL_POSTGRES, which keeps a "
        "password off the command line)",
    )
    group.add_argument(
        "--embedding-model",
        help="an embedding model on an OpenAI-compatible /v1/embeddings server, or with --azure-endpoint an "
        "embedding deployment (default: AZURE_OPENAI_EMBEDDING_DEPLOYMENT_NAME; else the built-in "
        "lexical embedder, offline, not semantic)",
    )
    group.add_argument("--embedding-base-url", help="the embeddings server's /v1 URL (default: --base-url's)")
    group.add_argument(
        "--recall-on-demand",
        action="store_true",
        help="let the model call a search function when it wants (default: recall before every turn)",
    )


def add_otel_options(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("traces (OpenTelemetry), off by default")
    group.add_argument(
        "--otel",
        action="store_true",
        help="send the framework's spans and the workbench's (turns, writer calls, admissions, forgets, recall "
        "searches) over OTLP to OTEL_EXPORTER_OTLP_ENDPOINT (setting it turns traces on too), else "
        "http://localhost:4318; they carry counts, reason codes and keys, no message text and no fact value",
    )
    group.add_argument(
        "--otel-sensitive",
        action="store_true",
        help="traces also carry messages, replies and fact values (the framework's sensitive data); "
        "a forget cannot reach what a collector has received",
    )


def recall_config(args: argparse.Namespace, chat: ModelConfig | None = None) -> RecallConfig:
    return RecallConfig.from_options(
        enabled=args.recall,
        store=args.recall_store,
        embedding_model=args.embedding_model,
        embedding_base_url=args.embedding_base_url,
        base_url=args.base_url,
        on_demand=args.recall_on_demand,
        chat=chat,
    )


def add_agent_memory_options(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("Agent Framework's own memories, off by default")
    group.add_argument(
        "--agent-memory",
        choices=[k.value for k in AgentMemoryKind],
        help="files: the model writes memory files with file_memory_* functions (FileMemoryProvider; needs a "
        "model that calls functions); extracted: a model call after each turn extracts topic memories into "
        "MEMORY.md and topic files (the framework's extracted memory, which it retires after 2026-12-31); "
        "mem0: Mem0 run locally extracts memories after each turn and finds them by embeddings (needs --model, "
        '--embedding-model and pip install "agent-memory-workbench[mem0]")',
    )
    group.add_argument(
        "--agent-memory-dir",
        metavar="DIR",
        help="where that memory keeps its files (default: agent-memory in the user's data directory)",
    )


# The commands besides the TUI. A first word that names none of them is the TUI's PATH.
COMMANDS = ("drift", "qualify", "remembered", "forget")


PATH_HELP = (
    "a folder laid out as for the framework's DevUI: subfolders whose __init__.py exports agent (or workflow), or "
    ".py files exporting agent, agents or workflow; every entry that loads is run, each one that does not is "
    "said in one line"
)


def add_agents_options(parser: argparse.ArgumentParser, *, path: bool = True) -> None:
    """PATH and --agents; without `path`, --agents alone (the command takes PATH among its own words)."""
    group = parser.add_argument_group(
        "your own Agent Framework agents (default: the built-in support and logs agents); loading runs their code"
    )
    if path:
        group.add_argument("path", nargs="?", metavar="PATH", help=PATH_HELP)
    group.add_argument(
        "--agents",
        action="append",
        metavar="MODULE:ATTRIBUTE",
        help="an importable Agent, list of agents, or function returning them (repeatable)",
    )
    group.add_argument(
        "--strict",
        action="store_true",
        help="stop at the first entry of PATH that cannot be loaded (default: load every entry that loads)",
    )


def add_persist_option(parser: argparse.ArgumentParser) -> None:
    """--persist, with an optional Redis URL: a positional argument goes before it, or it is taken for one."""
    parser.add_argument(
        "--persist",
        nargs="?",
        const=True,
        type=_persist_target,
        metavar="redis://…",
        help="keep both agents' sessions, the facts and the ledger in the user's data directory (files readable "
        "by you only) and resume them on the next --persist; with a Redis URL (redis://, rediss://, unix://) the "
        "agents' histories are kept on that server instead (docs/redis.md); without it nothing is written",
    )


def add_contract_options(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("the contract (default: the seed's keys, 5 facts, values of 256 characters)")
    group.add_argument(
        "--config",
        metavar="FILE",
        help="read the contract from this file's [contract] table (keys, max_facts, max_value_chars); default: "
        "workbench.toml in PATH's folder, else in the current folder, when there is one",
    )
    group.add_argument(
        "--keys",
        metavar="KEY,KEY,...",
        help="the contract's keys (ASCII identifiers, 1 to 32), replacing the file's; `qualify` keeps its fixed "
        "suite on the seed's keys",
    )


def contract_config(args: argparse.Namespace) -> Contract:
    """The run's contract from --config (or a workbench.toml beside PATH's agents, else in the current
    folder) and --keys; ContractFileError, one line naming the file or the option, when it declares none
    that can be used. `main` checks it before any command runs."""
    from pathlib import Path

    from workbench.contract_file import declared_contract

    path = getattr(args, "path", None)
    folders = [] if path is None else [Path(path) if Path(path).is_dir() else Path(path).parent]
    return declared_contract(getattr(args, "config", None), getattr(args, "keys", None), [*folders, Path.cwd()])


def build_parser(*, path: bool = False) -> argparse.ArgumentParser:
    """The command line; with `path`, the TUI's alone with its PATH argument (argparse cannot tell a
    folder from a command's name in one parser)."""
    parser = Parser(
        prog="workbench",
        description="See and control what LLM agents remember. Without a command, the TUI opens. "
        f"Commands: {', '.join(COMMANDS)} (workbench COMMAND --help). "
        "API keys are read from OPENAI_API_KEY (Azure: AZURE_OPENAI_API_KEY) and never shown.",
    )
    add_model_options(parser)
    add_session_options(parser)
    add_recall_options(parser)
    add_agent_memory_options(parser)
    add_otel_options(parser)
    if path:
        add_agents_options(parser)
        parser.set_defaults(command=None)
        return parser
    add_agents_options(parser, path=False)  # `workbench --agents m:a remembered`, as after the command
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    drift = commands.add_parser(
        "drift",
        help="run a chronology through every context policy and print what each kept, lost and answered",
        description="Run the drift lab: a chronology (the built-in one, or --chronology FILE) through every "
        "context policy (retrieved history in two variants, the persisted history --persist keeps, Agent "
        "Framework's own memories, Mem0), scored on what each request contains and, with a live model, on what "
        "each answer says, with call counts, reported tokens (or unknown) and each memory's bytes on disk. No "
        "winner is named.",
        # Options given before the command keep their values unless repeated after it.
        argument_default=argparse.SUPPRESS,
    )
    add_model_options(drift, with_defaults=False)
    add_contract_options(drift)
    add_agents_options(drift)
    drift.add_argument(
        "--turns",
        type=_turns,
        help=f"stretch the chronology to this many turns with filler turns (at most {MAX_TURNS:,}: full history "
        "resends every earlier message, so a run grows with the square of its length)",
    )
    drift.add_argument(
        "--chronology",
        metavar="FILE",
        help="run this chronology file (the format is in docs/drift-lab.md) instead of the built-in one",
    )
    drift.add_argument(
        "--sweep",
        metavar="N,N,...",
        type=_lengths,
        help="run the stretched chronology at each length (e.g. 10,100,1000; each at most "
        f"{MAX_TURNS:,}) and show how each policy grows",
    )
    drift.add_argument(
        "--policies",
        metavar="NAME,NAME,...",
        type=_names,
        help="run only these policies and report only them (each replays the whole chronology: fewer policies, "
        f"fewer model calls): {', '.join(POLICY_NAMES)}; your agents' rows are yours:NAME (as configured) and "
        "yours:NAME+facts (in the workbench), NAME as the report names them",
    )
    drift.add_argument(
        "--embedding-model",
        help="with --model: the embedding model the Mem0 policy uses (on --embedding-base-url, default: "
        "--base-url's); without it that policy says what it needs",
    )
    drift.add_argument("--embedding-base-url", help="the embeddings server's /v1 URL (default: --base-url's)")
    drift.add_argument("--json", action="store_true", help="print the report as JSON")
    drift.add_argument(
        "--lab-writes-to-your-stores",
        action="store_true",
        help="run your agents even when one of their memories cannot be redirected to a store of the lab's own "
        "(a provider the workbench does not know, Mem0's, a store it cannot copy): the story's messages are then "
        "written into that store, as it is, and stay there; without it, those agents' rows are not run",
    )
    qualify = commands.add_parser(
        "qualify",
        help="run the contract suite against the configured model and report what it measured",
        description="Qualify a model: a fixed contract suite through the writer, verified by the host as in "
        "the app. Exit status: 0 when the model did what the contract says in every case, 3 when some case "
        "did not, 1 when the model cannot be asked, 4 without --model: the built-in script only checked the "
        "suite itself, and no model was qualified.",
        argument_default=argparse.SUPPRESS,
    )
    add_model_options(qualify, with_defaults=False)
    add_contract_options(qualify)
    qualify.add_argument("--json", action="store_true", help="print the report as JSON")
    add_script_commands(commands)
    return parser


def add_session_options(parser: argparse.ArgumentParser) -> None:
    """How the agents take the facts, who writes them, and whether the sessions are kept. No defaults:
    they depend on whose agents run (`mode`, `writer`)."""
    parser.add_argument(
        "--mode",
        choices=[m.value for m in Mode],
        help="how the facts reach the agents: in the user message (manual, the built-in agents' default) or a "
        "context provider (provider, your agents' default)",
    )
    parser.add_argument(
        "--writer",
        choices=[w.value for w in WriterKind],
        help="who proposes facts: the writer model, or the host's own parse (no model call); default: the writer "
        "model, but the host's parse for your agents unless --writer-model names a model",
    )
    add_persist_option(parser)
    add_contract_options(parser)


def add_script_commands(commands: Any) -> None:
    """`workbench remembered` and `workbench forget`: the TUI's F3 and forget for scripts. They open what
    the TUI opens with the same options, given before or after the command (`workbench.scripts`)."""
    common = {"argument_default": argparse.SUPPRESS}
    cannot_start = (
        "1 when the start cannot open what the options ask (another workbench holds it, a file cannot be read)"
    )
    remembered = commands.add_parser(
        "remembered",
        help="print what every memory the agents run holds now (the TUI's F3)",
        description="Print what every memory the agents run holds now, as the TUI's F3 lists it: the working "
        "memory's facts and ledger, both agents' histories, recall and the other memories, each item with the "
        "keys a forget of which reaches it. Text is shown as typed, control and invisible characters as "
        "escapes; --json prints it whole (the format is in docs/forget.md). A memory that cannot be read says "
        f"why in its place. Exit status: 0, or {cannot_start}.",
        **common,
    )
    forget = commands.add_parser(
        "forget",
        help="forget a key, or everything, through the one forget, and print what each holder removed",
        description="Forget KEY (or --all: every key) through the one forget the TUI runs: working memory, "
        "both agents' sessions and every memory they run, in one plan. Without --yes it shows what the forget "
        "will remove and asks; with stdin not a terminal it refuses. Then it prints what each holder removed "
        "(--json: the format is in docs/forget.md). Exit status: 0 when every holder applied the forget, 3 when "
        "a holder was not reached or failed (the others applied it), 2 for a usage error or a question stdin "
        f"cannot answer, {cannot_start}, or when the question was answered no.",
        **common,
    )
    for script in (remembered, forget):
        add_model_options(script, with_defaults=False)
        add_session_options(script)
        add_recall_options(script)
        add_agent_memory_options(script)
        script.add_argument("--json", action="store_true", help="print the result as JSON")
    # One list, read by `forget_words`: argparse gives a second optional positional nothing once an option
    # comes between (`forget module --yes PATH`), and KEY would take PATH after --all.
    forget.add_argument(
        "words",
        nargs="*",
        metavar="KEY [PATH]",
        help=f"the key to forget (one of the contract's keys); PATH: {PATH_HELP}",
    )
    forget.add_argument("--all", action="store_true", help="forget every key (then the only word is PATH)")
    forget.add_argument("--yes", action="store_true", help="forget without showing what goes and asking")
    add_agents_options(remembered)
    add_agents_options(forget, path=False)


def _print_report(args: argparse.Namespace, data: dict[str, Any], renderable: Any) -> None:
    """JSON for machines with --json, else the tables."""
    if getattr(args, "json", False):
        from workbench.text import dumps

        print(dumps(data))
    else:
        from workbench.tables import report_console

        report_console().print(renderable)


def _say(command: str, line: str) -> None:
    """One line on stderr; a server's or a file's words in it are shown literally and bounded."""
    from workbench.text import clip, visible

    print(f"workbench {command}: {visible(clip(line, 1000))}", file=sys.stderr)


def _stopped(command: str, exc: Exception) -> None:
    _say(command, f"stopped: {exc}")


# `workbench qualify` without --model checked the suite, not a model: never exit 0, so no CI job reads it
# as a qualification.
NOT_QUALIFIED = 4


def run_qualify_command(args: argparse.Namespace, config: ModelConfig) -> int:
    from workbench.progress import stderr_progress
    from workbench.qualify import QualifyStopped, run_qualify
    from workbench.qualify.report import render, to_json
    from workbench.runtime import build_models

    try:
        with stderr_progress(wanted=not getattr(args, "json", False)) as progress:
            models = build_models(config)
            report = asyncio.run(
                run_qualify(models, timeout=config.timeout, progress=progress, configured=contract_config(args))
            )
    except QualifyStopped as exc:
        _stopped("qualify", exc)
        return 1
    _print_report(args, to_json(report), render(report))
    if not report.all_passed:
        return 3
    return NOT_QUALIFIED if report.self_check else 0


def _drift_mem0(args: argparse.Namespace, config: ModelConfig) -> Mem0Config | None:
    """Mem0's model and embedder for the lab's Mem0 policy, when this run can give them (a live model
    and --embedding-model); else None, and the report says what that policy needs."""
    embedding_model = getattr(args, "embedding_model", None)
    if not config.is_live or not embedding_model:
        return None
    from workbench.agentmem.mem0_config import Mem0Config

    return Mem0Config.from_options(
        config, embedding_model=embedding_model, embedding_base_url=getattr(args, "embedding_base_url", None)
    )


def _your_stores_lines(refused: Sequence[Refused], *, allowed: bool) -> list[str]:
    """What the lab does with the user's agents' stores, before it runs: on stores of its own, and each
    memory it cannot redirect, in a line (not run without the option; with it, run where it writes)."""
    from workbench.drift.copies import ALLOW_OPTION

    lines = [
        "your agents' memories run on stores of the lab's own (copies of their folders, a key prefix of the "
        "lab's on their Redis server), removed afterwards; your own stores are not written"
    ]
    for cannot in refused:
        if allowed:
            lines.append(f"{cannot.describe()}: run as it is ({ALLOW_OPTION}): the story is written into your store")
        else:
            lines.append(f"{cannot.describe()}: its agent's rows are not run (give {ALLOW_OPTION} to run them there)")
    return lines


def run_drift_command(args: argparse.Namespace, config: ModelConfig, loaded: Sequence[LoadedAgent] = ()) -> int:
    """The report, whole or partial; a stop adds one line on stderr and exits 1. A usage error or a
    chronology that is not valid exits 2 before anything runs. A chronology file is read under the run's
    contract; the built-in one is the seed's story and runs on the seed's (a line says so when the run
    declares another)."""
    from workbench.drift import ChronologyError, load_chronology, load_chronology_file, run_drift
    from workbench.drift.catalog import UnknownPolicy, chosen_policies
    from workbench.drift.report import render, render_sweep, stop_line, sweep_json, to_json
    from workbench.drift.sweep import run_sweep
    from workbench.drift.yours_policy import PREFIX
    from workbench.progress import stderr_progress
    from workbench.runtime import build_models

    contract = contract_config(args)
    path = getattr(args, "chronology", None)
    lengths: tuple[int, ...] | None = getattr(args, "sweep", None)
    turns: int | None = getattr(args, "turns", None)
    if lengths is not None and turns is not None:
        _say("drift", "--sweep and --turns cannot be combined: --sweep gives the lengths (see --help)")
        return 2
    policies: tuple[str, ...] | None = getattr(args, "policies", None)
    try:
        chosen = chosen_policies(policies, loaded)
    except UnknownPolicy as exc:
        _say("drift", f"argument --policies: {exc} (see --help)")
        return 2
    try:
        story = load_chronology_file(path, contract) if path else load_chronology()
        for length in lengths or ((turns,) if turns is not None else ()):
            story.check_length(length)
        mem0 = _drift_mem0(args, config)
    except (ChronologyError, ConfigError) as exc:
        _say("drift", str(exc))
        return 2
    except ValueError as exc:
        option = "--sweep" if lengths is not None else "--turns"
        _say("drift", f"argument {option}: {exc} (see --help)")
        return 2
    if not path and not contract.is_seed:
        _say(
            "drift",
            "the built-in chronology is the seed's story: it runs on the seed's contract, not this run's "
            f"({contract.describe()}); give your own with --chronology FILE",
        )
    allowed = getattr(args, "lab_writes_to_your_stores", False)
    if loaded and (chosen is None or any(name.startswith(PREFIX) for name in chosen)):
        from workbench.drift.copies import refused

        for line in _your_stores_lines(refused([item.agent for item in loaded]), allowed=allowed):
            _say("drift", line)
    from workbench.opening import StartFailed, check_agents_folders

    try:
        check_agents_folders([item.agent for item in loaded])
    except StartFailed as exc:
        _say("drift", str(exc))
        return 1
    # The report is printed once the progress display is gone: printed while it is live, the two
    # share the terminal and the display's clearing leaves a line, or a bar, behind.
    with stderr_progress(wanted=not getattr(args, "json", False)) as progress:

        def show(policy: str, turn: int, total: int) -> None:
            assert progress is not None
            progress(f"{policy} · {total:,} turns", turn, total)

        sink = show if progress else None
        # With a live model the memory-files policy's agents call the file_memory_* functions.
        models = build_models(config, function_calls=config.is_live)
        if lengths is not None:
            result = asyncio.run(
                run_sweep(
                    models,
                    lengths,
                    chronology=story,
                    progress=sink,
                    mem0=mem0,
                    agents=loaded,
                    policies=policies,
                    allow_your_stores=allowed,
                )
            )
        else:
            report = asyncio.run(
                run_drift(
                    models,
                    turns=turns,
                    chronology=story,
                    progress=sink,
                    mem0=mem0,
                    agents=loaded,
                    policies=policies,
                    allow_your_stores=allowed,
                )
            )
    if lengths is not None:
        stopped = result.stopped
        _print_report(args, sweep_json(result), render_sweep(result))
    else:
        stopped = report if report.partial else None
        _print_report(args, to_json(report), render(report))
    reports = result.reports if lengths is not None else [report]
    left = [(name, removal) for run in reports for name, removal in run.left_behind]
    for name, removal in left:
        _say("drift", f"{name}: left behind: {removal.line}")
    if stopped is not None:
        _say("drift", f"{stop_line(stopped)} (the report above is partial)")
        return 1
    if left:
        return 1
    failed = result.failed if lengths is not None else list(report.failures)
    titles = result.reports[-1].titles if lengths is not None and result.reports else report.titles
    if failed:
        names = ", ".join(dict.fromkeys(titles.get(name, name) for name in failed))
        others = ", the other policies went on" if set(titles) - set(failed) else ""  # --policies may name one
        _say("drift", f"{names}: failed{others} (the report above marks the cells)")
    return 0


def parse(argv: list[str] | None) -> argparse.Namespace:
    words = _persist_last(sys.argv[1:] if argv is None else argv)
    return build_parser(path=not any(word in COMMANDS for word in words)).parse_args(words)


def _persist_last(words: Sequence[str]) -> list[str]:
    """`--persist` followed by a word that is not a Redis URL (a command, a folder of agents) goes after
    that word, or argparse would take the word for --persist's optional value."""
    moved = list(words)
    for i in range(len(moved) - 1):
        following = moved[i + 1]
        if moved[i] == "--persist" and not following.startswith(("-", *REDIS_SCHEMES)):
            moved[i], moved[i + 1] = following, moved[i]
    return moved


def load_agents(args: argparse.Namespace, given: Sequence[object] = ()) -> tuple[LoadedAgent, ...]:
    """The user's agents (`load`'s)."""
    return load(args, given).agents


def load(args: argparse.Namespace, given: Sequence[object] = ()) -> Loaded:
    """The user's agents and workflows: PATH's (every entry that loads, each one that does not in
    `skipped`; all or nothing with --strict), --agents', and those handed to `workbench.serve`;
    LoadFailed (one line) when nothing of PATH loads or anything else cannot be. None of them: the
    built-in agents run."""
    path, references = getattr(args, "path", None), getattr(args, "agents", None) or []
    if path is None and not references and not given:
        return Loaded()
    from pathlib import Path

    from workbench.loading import checked, from_objects, from_reference, load_folder

    folder = load_folder(Path(path), strict=getattr(args, "strict", False)) if path is not None else Loaded()
    loaded = [*folder.agents, *from_objects(given)]
    agents = checked([*loaded, *(agent for reference in references for agent in from_reference(reference))])
    checked(agents, folder.workflows)
    return Loaded(agents, folder.workflows, folder.skipped, folder.root)


def run_script_command(
    args: argparse.Namespace,
    config: ModelConfig,
    loaded: Sequence[LoadedAgent] = (),
    workflows: Sequence[LoadedWorkflow] = (),
    not_loaded: Sequence[LoadFailed] = (),
) -> int:
    """`workbench remembered` and `workbench forget` (`workbench.scripts`), started as the TUI starts
    (`session_start`). A usage error, or a question stdin cannot answer, exits 2 before anything opens;
    a start that cannot open what the options ask exits 1 with one line, as the TUI's does."""
    from workbench import scripts
    from workbench.opening import StartFailed

    command: str = args.command

    def say(line: str) -> None:
        _say(command, line)

    key: str | None = getattr(args, "key", None)
    contract = contract_config(args)
    if key is not None and not contract.allows(key):
        foreign = contract.foreign_characters(key)
        say(f"{_quoted(key)} is not a key{f': {foreign}' if foreign else ''}; the keys: {', '.join(contract.keys)}")
        return 2
    ask = None if command == "remembered" or getattr(args, "yes", False) else _asked
    if ask is not None and not sys.stdin.isatty():
        say("stdin is not a terminal, so what the forget removes cannot be asked: add --yes to forget without asking")
        return 2
    opened_too, refused = open_left_out(args, config)
    if refused is not None:
        say(refused)
        return scripts.NOTHING_DONE
    for what in opened_too:
        say(f"also opened {what}: the data directory holds it")
    if problem := unfinished_forget(args, config):
        say(problem)
        return scripts.NOTHING_DONE
    try:
        start = session_start(args, config, loaded, workflows, not_loaded)
    except StartFailed as exc:
        say(str(exc))
        return scripts.NOTHING_DONE
    as_json = getattr(args, "json", False)
    try:
        if command == "remembered":
            return asyncio.run(scripts.remembered(start, as_json=as_json, say=say))
        return asyncio.run(scripts.forget(start, key, ask=ask, as_json=as_json, say=say))
    except scripts.Stopped as exc:
        say(str(exc))
        return scripts.NOTHING_DONE


def forget_words(words: Sequence[str], *, everything: bool) -> tuple[str | None, str | None]:
    """`workbench forget`'s KEY and PATH from its words: KEY [PATH], or with --all PATH alone."""
    if everything:
        if len(words) > 1:
            raise ValueError("--all takes no key: forget --all [PATH]")
        return None, words[0] if words else None
    if not 1 <= len(words) <= 2:
        raise ValueError("forget takes a KEY (or --all), then optionally PATH")
    return words[0], words[1] if len(words) == 2 else None


def _asked(question: str) -> bool:
    """`question` on stderr (stdout keeps the report), answered on the terminal: yes, or anything else.
    Ctrl+C stops the command at once (`workbench.command`): asked inside `asyncio.run`, whose own handler
    only cancels its task, the read went on until Enter."""
    import signal

    asyncio_handler = signal.signal(signal.SIGINT, signal.default_int_handler)  # before the question shows
    try:
        print(f"{question}\nForget? [y/N] ", end="", file=sys.stderr, flush=True)
        return sys.stdin.readline().strip().lower() in ("y", "yes")
    finally:
        signal.signal(signal.SIGINT, asyncio_handler)


def main(argv: list[str] | None = None, *, agents: Sequence[object] = ()) -> int:
    """Every command; the TUI's window settles the collector `workbench.command` held, the others
    release it before they run. `agents`: the user's agents handed in from Python (`workbench.serve`).
    What the libraries log is said once per line (`workbench.notes`): a command's on stderr as its own
    lines are, the TUI's in its window (kept until it opens), anything left after it on stderr."""
    args = parse(argv)
    logged = library_log()
    logged.send_to(None if args.command is None else partial(_say, args.command))
    try:
        return _main(args, agents, logged)
    finally:
        for line in logged.send_to(None):
            print(f"workbench: {line}", file=sys.stderr)


def _main(args: argparse.Namespace, agents: Sequence[object], logged: LibraryLog) -> int:
    if args.command == "forget":
        try:
            words = getattr(args, "words", [])
            args.key, args.path = forget_words(words, everything=getattr(args, "all", False))
        except ValueError as exc:
            _say("forget", f"{exc} (see --help)")
            return 2
    try:
        found = load(args, agents)
    except LoadFailed as exc:
        for failed in exc.skipped:
            print(f"workbench: not loaded: {failed}", file=sys.stderr)
        print(f"workbench: {exc}", file=sys.stderr)
        return 2
    for failed in found.skipped:  # the folder's other entries load: each one that did not, in one line
        print(f"workbench: not loaded: {failed}", file=sys.stderr)
    loaded, workflows = found.agents, found.workflows
    from workbench.contract_file import ContractFileError

    try:
        contract_config(args)  # checked here, so a bad one stops every command before it runs
    except ContractFileError as exc:
        print(f"workbench: {exc}", file=sys.stderr)
        return 2
    try:
        config = model_config(args)
        recall_config(args, config)
        agent_memory_config(args, config)
        traces = TelemetrySettings.from_options(otel=args.otel, sensitive=args.otel_sensitive, environ=os.environ)
        start_telemetry(traces)
    except (ConfigError, TelemetryError) as exc:
        print(f"workbench: {exc}", file=sys.stderr)
        return 2
    if args.command is not None:
        release_collections()
    if args.command == "drift":
        for flow in workflows:
            _say("drift", f"workflow {flow.label} ({flow.source}) left out: the drift lab runs agents, not workflows")
        return run_drift_command(args, config, loaded)
    if args.command == "qualify":
        return run_qualify_command(args, config)
    if args.command in ("remembered", "forget"):
        return run_script_command(args, config, loaded, workflows, found.skipped)
    if problem := unfinished_forget(args, config):
        print(f"workbench: {problem}", file=sys.stderr)
        return 1
    from workbench.opening import StartFailed

    try:
        app = build_app(args, config, found, logged=logged)
    except StartFailed as exc:
        print(f"workbench: {exc}", file=sys.stderr)
        return 1
    app.run()
    if app.not_saved is not None:  # the user chose to quit without it, or the window closed
        from contextlib import suppress

        with suppress(OSError):  # the terminal went with the window
            print(f"workbench: NOT saved: {app.not_saved}", file=sys.stderr)
    # Textual's code after an error that ended the app (or a quit that left something unsaved); 1 too
    # when the agents never started.
    return app.return_code or int(app.start_failed)


def stores_on_disk(args: argparse.Namespace, config: ModelConfig) -> tuple[str, ...]:
    """The stores a forget of this start reaches beyond the process, as the options that open them:
    what its journal records (`workbench.persist.journal`). Names no password."""
    stores = [_persist_store(args)] if args.persist else []
    recall = recall_config(args, config)
    if (conninfo := recall.postgres) is not None:
        from workbench.recall.postgres_store import display_location

        stores.append(f"--recall-store {display_location(conninfo)}")
    elif (path := recall.store_path) is not None and (recall.enabled or path.exists()):
        stores.append(f"--recall-store {path.resolve()}")
    memory = agent_memory_config(args, config)
    if memory.kind is not None:
        stores.append(f"--agent-memory {memory.kind} --agent-memory-dir {memory.root}")
    # Your agents' memories may be on disk, where only loading them again reaches.
    if (path := getattr(args, "path", None)) is not None:
        from pathlib import Path

        stores.append(str(Path(path).resolve()))
    stores += [f"--agents {reference}" for reference in getattr(args, "agents", None) or []]
    return tuple(stores)


def stores_left_out(args: argparse.Namespace, config: ModelConfig) -> list[tuple[str, str]]:
    """What the data directory holds that these options would not open, each as (what and where it is,
    the options that open it): the persisted state (`--persist`) and each agent memory's folder
    (`--agent-memory KIND`). The recall file is reached with recall off too, and a pending forget's
    record is checked by `unfinished_forget`."""
    from pathlib import Path

    from workbench.agentmem.config import default_directory
    from workbench.files import data_dir
    from workbench.opening import LOCK_FILE, OTHERS_LOCK_FILE

    def holds_files(folder: Path) -> bool:
        ignored = (LOCK_FILE, OTHERS_LOCK_FILE)
        return folder.is_dir() and any(p.is_file() and p.name not in ignored for p in folder.rglob("*"))

    left: list[tuple[str, str]] = []
    from workbench.persist.sessions import DIRECTORY

    sessions = data_dir() / DIRECTORY
    if not args.persist and holds_files(sessions):
        left.append((f"saved state ({sessions})", "--persist"))
    chosen = agent_memory_config(args, config).folder
    for kind in AgentMemoryKind:
        folder = default_directory() / kind.value
        if (chosen is None or chosen != folder.resolve()) and holds_files(folder):
            left.append((f"{kind} agent memory ({folder})", f"--agent-memory {kind}"))
    return left


def open_left_out(args: argparse.Namespace, config: ModelConfig) -> tuple[list[str], str | None]:
    """A script reaches every store the data directory holds, whatever options it was given: each one
    these options leave out is opened as its own option would open it (the options are set on `args`),
    and said; or, when it cannot be (Mem0 needs its models; one agent memory runs at a time), the one
    line refusing the start, naming the options it needs. Returns what was opened too, and the refusal."""
    opened: list[str] = []
    for what, options in stores_left_out(args, config):
        kind = options.removeprefix("--agent-memory ")
        if options == "--persist":
            args.persist = True
        elif kind != options and kind != AgentMemoryKind.MEM0 and args.agent_memory is None:
            args.agent_memory = kind
        else:
            runs = args.agent_memory
            given = f" (one agent memory at a time: --agent-memory {runs} runs)" if runs else ""
            need = f"{options} --model ... --embedding-model ..." if kind == AgentMemoryKind.MEM0 else options
            return opened, (
                f"the data directory holds {what}, which this start cannot open{given}: run again with {need} to "
                "reach it (nothing was done)"
            )
        opened.append(f"{what}, as {options} does")
    return opened, None


def _persist_store(args: argparse.Namespace) -> str:
    if (url := redis_persist(args)) is None:
        return "--persist"
    from workbench.agentmem.redis_server import display_url

    return f"--persist {display_url(url)}"


def forget_journal(args: argparse.Namespace, config: ModelConfig) -> ForgetJournal | None:
    """The journal of this start's forgets, when a forget reaches anything on disk."""
    from workbench.files import data_dir
    from workbench.persist.journal import FILE_NAME, ForgetJournal

    stores = stores_on_disk(args, config)
    return ForgetJournal(data_dir() / FILE_NAME, stores) if stores else None


def unfinished_forget(args: argparse.Namespace, config: ModelConfig) -> str | None:
    """Why this start cannot go on because of a forget a crash cut short, in one line: its record
    cannot be read, or this start does not open every store it was to reach. None when the start can go
    on (the runtime completes a pending forget before anything else)."""
    from workbench.files import data_dir
    from workbench.persist.journal import FILE_NAME, SavedFileError, read_pending
    from workbench.text import visible

    try:
        pending = read_pending(data_dir() / FILE_NAME)
    except SavedFileError as exc:
        return visible(str(exc))
    if pending is None or not (missing := pending.missing(stores_on_disk(args, config))):
        return None
    return visible(
        f"a forget of {pending.what} asked at {pending.asked_at:%Y-%m-%d %H:%M} UTC was cut short; start with "
        f"the options it ran with to complete it: {' '.join(pending.stores)} (missing now: {' '.join(missing)})"
    )


def agent_memory_config(args: argparse.Namespace, chat: ModelConfig) -> AgentMemoryConfig:
    """--agent-memory's choice and folder, checked (mem0: a live model and --embedding-model)."""
    return AgentMemoryConfig.from_options(
        args.agent_memory,
        args.agent_memory_dir,
        chat=chat,
        embedding_model=args.embedding_model,
        embedding_base_url=args.embedding_base_url,
    )


def build_app(
    args: argparse.Namespace,
    config: ModelConfig,
    found: Sequence[LoadedAgent] | Loaded = (),
    *,
    logged: LibraryLog | None = None,
) -> WorkbenchApp:
    """The TUI as `workbench` opens it: what the options ask it to keep or reach is opened first
    (StartFailed, one line, when it cannot be: `workbench.opening`), then the window, then the agent
    runtime right after its first frame, over what `found` loaded (its agents, workflows, and the
    entries not loaded, which the window says once it opens). `logged`: what the libraries log, said
    in the window while it is open."""
    from workbench.ui.app import WorkbenchApp

    if not isinstance(found, Loaded):
        found = Loaded(tuple(found))
    loaded, workflows, not_loaded = found.agents, found.workflows, found.skipped

    names = [*(item.name for item in loaded), *(flow.name for flow in workflows)]
    labels = {item.name: item.label for item in loaded if item.named_by}
    labels |= {flow.name: f"{flow.label} · workflow" for flow in workflows}
    hints = {
        flow.name: f"{flow.name}: {flow.cannot_run}"
        if flow.cannot_run
        else f"{flow.name}: your workflow as you built it: your message goes in, its agents' outputs stream out. "
        "Declare facts as key=value; every pane shares them. F1 shows help."
        for flow in workflows
    }
    return WorkbenchApp(
        start=session_start(args, config, loaded, workflows, not_loaded),
        agents=names or None,
        notice="\n".join(line for line in (found.notice(), on_your_model(config, found)) if line) or None,
        labels=labels,
        hints=hints,
        workflows=[flow.name for flow in workflows],
        logged=logged,
    )


def on_your_model(config: ModelConfig, found: Loaded) -> str | None:
    """What --model does to the user's agents, in a line of the window's notice: they answer on it
    instead of their own clients, as the drift lab runs them (the header names each pane's model); a
    workflow's agents keep theirs. None without --model or agents of the user's."""
    if not config.is_live or not found.agents:
        return None
    flows = "; your workflows' agents answer on their own" if found.workflows else ""
    return (
        f"--model {config.model}: your agents answer on it instead of their own clients, as workbench drift runs "
        f"them{flows}; without --model each answers on its own (the header names what each answers on)"
    )


def session_start(
    args: argparse.Namespace,
    config: ModelConfig,
    loaded: Sequence[LoadedAgent] = (),
    workflows: Sequence[LoadedWorkflow] = (),
    not_loaded: Sequence[LoadFailed] = (),
) -> Callable[[], SessionController]:
    """The one start path of the TUI and the scripts (`workbench remembered`, `workbench forget`): what
    the options ask to keep or reach, opened and locked now (StartFailed, one line, when it cannot be),
    and the function that assembles the session over it (`workbench.session.assemble`), over the user's
    agents when `loaded` holds any."""
    from workbench.opening import open_for_start

    contract = contract_config(args)
    recall = recall_config(args, config)
    agent_memory = agent_memory_config(args, config)
    opened = open_for_start(
        persisted=(lambda: open_persisted(contract)) if args.persist else None,
        agent_memory=agent_memory,
        recall=recall,
        redis=redis_persist(args),
        agents=[item.agent for item in (*loaded, *(a for flow in workflows for a in flow.agents))],
    )

    def start() -> SessionController:
        from workbench.memory import WorkingMemory
        from workbench.runtime import CallLog, build_models
        from workbench.session.assemble import assemble

        built = agent_memory.build()
        calls = CallLog()  # recall's embeddings requests are logged beside the model calls
        session = assemble(
            # Your agents on --model bring their tools (memory files, their own): the model calls them.
            build_models(
                config,
                function_calls=recall.on_demand or (config.is_live and (agent_memory.calls_functions or bool(loaded))),
            ),
            memory=None if opened.persisted is not None else WorkingMemory(contract),
            mode=mode(args, [*loaded, *workflows]),
            writer=writer(args, config, [*loaded, *workflows]),
            timeout=config.timeout,
            calls=calls,
            recall=recall.memory(calls, store=opened.recall_store),
            recall_on=recall.enabled,
            memories=[built] if built is not None else [],
            persisted=opened.persisted,
            journal=forget_journal(args, config),
            agents=[item.agent for item in loaded],
            workflows=[(flow.name, flow.workflow, flow.cannot_run) for flow in workflows],
            not_loaded=[(failed.where, failed.problem) for failed in not_loaded],
            redis=redis_histories(args, opened.persisted),
        )
        session.on_close(opened.close)  # the state file written whole, the folders let go
        return session

    return start


def mode(args: argparse.Namespace, loaded: Sequence[LoadedAgent | LoadedWorkflow]) -> Mode:
    """--mode, else a context provider for the user's agents and manual injection for the built-in ones."""
    chosen = getattr(args, "mode", None)
    return Mode(chosen) if chosen else Mode.PROVIDER if loaded else Mode.MANUAL


def writer(args: argparse.Namespace, config: ModelConfig, loaded: Sequence[LoadedAgent | LoadedWorkflow]) -> WriterKind:
    """--writer, else the writer model; for the user's agents, the host's parse unless --writer-model
    names a model (their model is theirs: the workbench does not send it its writer's prompts)."""
    if chosen := getattr(args, "writer", None):
        return WriterKind(chosen)
    return WriterKind.HOST if loaded and not config.writer_model else WriterKind.MODEL


def open_persisted(contract: Contract) -> PersistedSessions:
    """The persisted sessions in the user's data directory, under `contract`; SavedFileError when a file
    there cannot be read or was saved under a contract this one does not widen, InUse when another
    workbench holds them, OSError when the folder cannot be opened (start-up stops with the reason in one
    line and the files are left as they are)."""
    from workbench.files import data_dir
    from workbench.persist.sessions import DIRECTORY, PersistedSessions

    return PersistedSessions(data_dir() / DIRECTORY, contract=contract)


def redis_histories(args: argparse.Namespace, persisted: PersistedSessions | None) -> RedisHistories | None:
    """The agents' histories on the server `--persist redis://…` names (checked reachable at opening)."""
    if (url := redis_persist(args)) is None or persisted is None:
        return None
    from workbench.persist.redis_histories import RedisHistories

    return RedisHistories(persisted, url)
