"""Modal screens: what the model saw, help (the forget question is in confirm.py)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

from workbench.session.views import MAX_MESSAGE_CHARS, describe_usage, estimate_tokens, joined, literal
from workbench.ui.context_bar import ContextBar
from workbench.ui.keys_footer import KeysFooter

if TYPE_CHECKING:
    from workbench.session.controller import SessionController
    from workbench.session.views import CallRecord, ContextSplit, Contract, RecalledMessage, RuntimeStatus


def render_calls(agent: str, calls: Sequence[CallRecord], unrecorded: str | None = None) -> Text:
    """Every call of one turn, as sent: instructions, messages, reported usage and an estimate; with none,
    why (`unrecorded`: the pane's calls are not recorded at all, as a workflow's)."""
    if not calls and unrecorded is not None:
        return Text(f"No call of the {agent} pane to show: {unrecorded}.", "dim")
    if not calls:
        return Text(f"No call of the {agent} agent to show: none since the start or the last forget.", "dim")
    text = Text()
    for call in calls:
        chars = call.request_chars
        text.append(f"{call.purpose} call #{call.seq}", style="bold")
        text.append(f" · turn {call.turn} · model: ")
        text.append_text(literal(call.model))
        text.append("\nreported usage: ")
        text.append(describe_usage(call.usage), style="bold" if call.usage else "bold yellow")
        text.append(f"\nrequest size: {chars:,} characters · estimate: ~{estimate_tokens(chars):,} tokens ")
        text.append("(characters/4, an estimate, not a bill)", style="dim")
        if call.error:
            text.append("\nfailed: ", style="bold red")
            text.append_text(literal(call.error))
        text.append("\n\ninstructions\n", style="underline")
        text.append_text(literal(call.instructions or "(none)"))
        for index, message in enumerate(call.messages, 1):
            text.append(f"\n\nmessage {index} · {message.role}\n", style="underline")
            text.append_text(literal(message.text))
        text.append("\n\n" + "-" * 40 + "\n\n", style="dim")
    return text


def render_recalled(recalled: Sequence[RecalledMessage]) -> Text:
    """What recall put into the turn: each message with its distance, scope and turn, literally."""
    text = Text(f"recalled {len(recalled)} earlier message(s) into this turn", style="bold")
    text.append(" (cosine distance: lower is closer; quoted to the model as data, never as instructions)\n", "dim")
    for item in recalled:
        text.append(f"\ndistance {item.distance:.3f}", style="bold")
        text.append(f" · {item.role} · {item.agent} agent · {item.agent_session} · turn {item.turn}\n")
        text.append_text(literal(item.text))
        text.append("\n")
    text.append("\n" + "-" * 40 + "\n\n", style="dim")
    return text


class CallsScreen(ModalScreen[None]):
    """What the model saw in the last turn of one pane, and what recall put into it."""

    BINDINGS = [Binding("escape,q,f2", "dismiss", "Close")]
    AUTO_FOCUS = "#calls"  # the app's own (its support input) matches nothing here: keys would scroll nothing

    def __init__(
        self,
        agent: str,
        calls: Sequence[CallRecord],
        *,
        splits: Sequence[ContextSplit] = (),
        recalled: Sequence[RecalledMessage] = (),
        unrecorded: str | None = None,
    ) -> None:
        super().__init__(classes="modal")
        self.agent = agent
        self.calls = calls
        self.unrecorded = unrecorded
        self.splits = splits
        self.recalled = recalled

    @classmethod
    def of(cls, session: SessionController, agent: str) -> CallsScreen:
        """What the model saw in `agent`'s pane, as the session recorded its last turn."""
        pane = session.pane(agent)
        return cls(agent, pane.calls, splits=pane.splits, recalled=pane.recalled, unrecorded=pane.unrecorded)

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog", classes="wide"):
            yield Static(Text(f"What the model saw: last turn of the {self.agent} pane", "bold"), id="question")
            with VerticalScroll(id="calls"):
                if self.splits:  # else the calls below say there is no call to show
                    yield ContextBar(self.splits)
                if self.recalled:
                    yield Static(render_recalled(self.recalled), markup=False, id="recalled")
                yield Static(render_calls(self.agent, self.calls, self.unrecorded), markup=False)
            yield Static("Esc closes", classes="hint")
        yield KeysFooter()


def help_text(contract: Contract | None, agents: Sequence[str] = ()) -> str:
    """The help, with the contract's keys and limits (None: the runtime is not running yet) and the panes'
    agents when they are the user's (`agents`; empty: the built-in pair, said as "both"). Paragraphs, one
    line each, wrapped by the screen at its width; only the indented examples are laid out here."""
    panes = "either pane" if not agents else "a pane" if len(agents) > 1 else "the pane"
    histories = "both agents' histories" if not agents else f"the histories of {joined(agents)}"
    return f"""workbench: see and control what your agents remember.

Type in {panes} to talk to that agent. Enter sends; Ctrl+J starts a new line (Shift+Enter too, where the \
terminal tells it from Enter); a pasted text keeps its lines.

Facts enter memory only as key=value declarations in your message, separated by ; or new lines, for example:
{_contract_help(contract)}

A message holds at most {MAX_MESSAGE_CHARS:,} characters. A longer one is not sent and stays in the input: F7 \
selects the whole draft, and Delete then clears it.

Memory is updated after the answer: the agent reads your declarations in your message, and the panel on the \
right changes once the reply is done (the writer proposes the facts, the host verifies each against your exact \
words, and admits the batch whole or not at all). When the batch is refused, the pane says so under the reply. \
While you type in the other pane, a finished answer and its facts wait for a pause in your typing (a quarter \
of a second), so your keys never wait on them.

Commands typed into a pane:
    mem           show the facts and their quotations
    forget KEY    forget one fact
    forget        forget every fact
Either forget also replaces {histories} with new, empty sessions.

Tab moves between the inputs, the fact table, the latest change and the ledger; the arrow keys scroll the last \
two. Enter or Delete on a fact forgets it (click works too; letters typed there go to your message). F2 shows \
what the model saw, F3 what is remembered, F4 the next agents' panes when more agents run than panes fit (it is \
in the footer only then), F5 opens the drift lab, F7 selects the whole draft, F8 forgets all, Esc \
cancels a running turn, F9 sends again the message of a turn that failed or was cancelled, Ctrl+P opens the \
command palette and Ctrl+Q quits. The footer shows the keys of the screen in front.

What is remembered (F3) lists every memory the agents run (the facts and the ledger, {histories} or \
the persisted files, the recall store, memory files, extracted memory, Mem0), where each lives, its size on disk \
and what it holds now, read again after every turn and every forget; an item that still holds a value you \
corrected is marked. Enter or a click on an item (or on a memory's own line) asks to forget the keys whose \
values it holds, through the same forget as everywhere; its first line forgets everything.

A fact is an unverified user assertion. It authorizes nothing."""


def _contract_help(contract: Contract | None) -> str:
    if contract is None:
        return "    key=value\nThe keys and how many facts memory holds are shown here once the runtime is running."
    example = (
        "module=Billing; database=SQL Server 2022"
        if contract.is_seed
        else "; ".join(f"{key}=..." for key in contract.keys[:2])
    )
    whose, values = (
        ("", "")
        if contract.is_seed
        else (
            " (the contract declared for this run: workbench.toml or --keys)",
            f" A value holds at most {contract.max_value_chars:,} characters.",
        )
    )
    return (
        f"    {example}\nKeys{whose}: {', '.join(contract.keys)}. At most {contract.max_facts} facts; a new key "
        f"evicts the oldest fact.{values}"
    )


class HelpScreen(ModalScreen[None]):
    BINDINGS = [Binding("escape,q,f1", "dismiss", "Close")]
    AUTO_FOCUS = "#help-body"  # as in CallsScreen

    def __init__(self, status: RuntimeStatus | None = None) -> None:
        super().__init__(classes="modal")
        self.status = status

    def compose(self) -> ComposeResult:
        header = "The header: " + (self.status.explained() if self.status else "the runtime is not running yet.")
        with Vertical(id="dialog", classes="wide"):
            with VerticalScroll(id="help-body"):
                status = self.status
                yield Static(
                    help_text(status.contract if status else None, status.agents if status else ()), markup=False
                )
                yield Static(header, markup=False, id="header-explained")
            yield Static("Esc closes", classes="hint")
        yield KeysFooter()
