"""The command line's words: the parser of `workbench` and its commands, each option's checks, and
`parse`. What the words ask for is read into typed configurations by `workbench.cli.configs`."""

from __future__ import annotations

import argparse
import math
import sys
from collections.abc import Sequence
from typing import Any, NoReturn

from workbench.agentmem.config import AGENT_MEMORIES
from workbench.runtime.config import DEFAULT_AZURE_API_VERSION, DEFAULT_MAX_TOKENS, Mode, WriterFormat, WriterKind

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


# Mirrors the names of workbench.drift.POLICIES for --policies' help, before the lab is loaded: the lab's own,
# then the agent memories' rows, from their table; tests/drift/test_cli.py checks that the two agree.
POLICY_NAMES = (
    *("full", "window", "summary", "facts", "compaction", "recall", "recall_purged", "persisted"),
    *(choice.lab.name for choice in AGENT_MEMORIES.values() if choice.lab is not None),
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


def _quoted(text: str) -> str:
    from workbench.memory.shown import quoted

    return quoted(text, 40)


# The commands besides the TUI. A first word that names none of them is the TUI's PATH.
COMMANDS = ("drift", "qualify", "remembered", "forget")


PATH_HELP = (
    "a folder laid out as for the framework's DevUI: subfolders whose __init__.py exports agent (or workflow), or "
    ".py files exporting agent, agents or workflow; every entry that loads is run, each one that does not is "
    "said in one line"
)


def add_model_options(parser: argparse.ArgumentParser, *, with_defaults: bool = True) -> None:
    group = parser.add_argument_group("model (default: the built-in scripted model, no network)")
    # No default (None) where workbench.toml's [start] may give one: the start configuration applies the
    # file's, else the default (`workbench.build.config`). Subcommands leave the default out, so an option
    # given before the subcommand is not overwritten.
    timeout_default: dict[str, Any] = {"default": None} if with_defaults else {}
    tokens_default: dict[str, Any] = {"default": None} if with_defaults else {}
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


def add_recall_options(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("recall: retrieved chat-history memory (seed 004), off by default")
    # Not given: None, then workbench.toml's [start] recall, else off (a command's parser gives nothing, so
    # that the option given before the command stays).
    unset: dict[str, Any] = {} if parser.argument_default == argparse.SUPPRESS else {"default": None}
    group.add_argument(
        "--recall",
        action="store_true",
        **unset,
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


def add_agent_memory_options(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("Agent Framework's own memories, off by default")
    group.add_argument(
        "--agent-memory",
        choices=list(AGENT_MEMORIES),
        help="; ".join(f"{choice.name}: {choice.help}" for choice in AGENT_MEMORIES.values()),
    )
    group.add_argument(
        "--agent-memory-dir",
        metavar="DIR",
        help="where that memory keeps its files (default: agent-memory in the user's data directory)",
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
        help="keep the agents' sessions, the facts and the ledger in the user's data directory (files readable "
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


def add_drift_command(commands: Any) -> None:
    """`workbench drift` and its options."""
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


def add_qualify_command(commands: Any) -> None:
    """`workbench qualify` and its options."""
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
    add_drift_command(commands)
    add_qualify_command(commands)
    add_script_commands(commands)
    return parser


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
        "memory's facts and ledger, the agents' histories, recall and the other memories, each item with the "
        "keys a forget of which reaches it. Text is shown as typed, control and invisible characters as "
        "escapes; --json prints it whole (the format is in docs/forget.md). A memory that cannot be read says "
        f"why in its place. Exit status: 0, or {cannot_start}.",
        **common,
    )
    forget = commands.add_parser(
        "forget",
        help="forget a key, or everything, through the one forget, and print what each holder removed",
        description="Forget KEY (or --all: every key) through the one forget the TUI runs: working memory, "
        "the agents' sessions and every memory they run, in one plan. Without --yes it shows what the forget "
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
