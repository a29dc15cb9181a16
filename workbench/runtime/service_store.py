"""What the model service keeps of a user's agent's conversation: the Responses API keeps every response
it creates unless a request says `store: false`, and a conversation (`conv_…`) keeps every item given to
it. Agent Framework's `OpenAIChatClient` leaves `store` unset (the client's `STORES_BY_DEFAULT`), so on
OpenAI each turn is kept by the service, and the framework continues it with `previous_response_id`.

Recognised by the framework's own rule (`kept_on_service`: the agent's `store` option, else its client's
`STORES_BY_DEFAULT`; a `conversation_id` in its options), a `ServiceStore` per agent records, from each
model call of the agent's run (a chat middleware: `Recorder`), the ids the service returned (each
streamed update's `response_id` and `conversation_id`, as soon as one arrives), what the call sent and
what came back (the text the service keeps there, as this process saw it), and how it was asked (`store`
unset or on, a continuation). The ids are also kept in the agent's session's state (`STATE_KEY`), so
sessions saved with `--persist` still name them at the next start; the framework's own record, the
session's `service_session_id`, is read too.

A forget deletes every id recorded (the agents' sessions are replaced at any forget: the service's copy of
their conversation is the last one), with the agent's own client and credential (the openai SDK client
its chat client holds), then asks for each again: gone (404) is verified. Each id's outcome is reported
(`outcomes`): deleted and verified, refused (the status and the service's reason: a failure, the value
is still held outside this process), or not offered (the service answers 404/405/501 to DELETE yet still
returns it; a client the workbench knows no deletion for): named, outside what the workbench can reach.

What earlier runs stored there is named apart (`outside`): their ids are not known to this process (a run
without `--persist` keeps them only while it lasts), so no forget reaches them, and F3, the question, the
report and its outside list say so, with what the user can do."""

from __future__ import annotations

import contextlib
from collections.abc import Awaitable, Callable, Iterable, Iterator, Mapping
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from agent_framework import ChatContext, ChatMiddleware, ChatResponse, ChatResponseUpdate, ResponseStream

from workbench.memory.forget import ForgetPlan, declared_in
from workbench.memory.holder_kinds import NotReached, StillHolds
from workbench.memory.turns import current_turn
from workbench.runtime.remembered import HeldItem
from workbench.runtime.service_delete import ServiceDeleter

if TYPE_CHECKING:
    from agent_framework import Agent, AgentSession, ContextProvider

    from workbench.runtime.view import RecalledMessage

STATE_KEY = "workbench.service_store"  # where the ids are kept in an agent's session state: [{"id", "kind"}]
_NAMED = 5  # ids named in one line of the question or a failure; the report lists every one

AgentSessionsOf = Callable[[], Mapping[str, "AgentSession"]]  # each agent's current AgentSession, by agent
# The agent session of the pane's turn running now (`AgentRuntime` sets it for the turn): a provider's own
# call carries no session of its own, and its ids belong to that turn's session.
turn_agent_session: ContextVar[AgentSession | None] = ContextVar("workbench_turn_agent_session", default=None)
CurrentOf = Callable[[], Awaitable[Iterable[str]]]  # the ids of the sessions a workflow's executors hold now


@contextlib.contextmanager
def in_agent_session(agent_session: AgentSession) -> Iterator[None]:
    """While a pane's turn runs on `agent_session`: a provider's own call made then is that session's."""
    token = turn_agent_session.set(agent_session)
    try:
        yield
    finally:
        turn_agent_session.reset(token)


def kept_on_service(agent: Agent) -> str | None:
    """Why `agent`'s client keeps its conversation on the model service, None when it does not: the
    framework's own rule (`Agent._prepare_run_context`): a conversation its options name, else its `store`
    option, else its client's `STORES_BY_DEFAULT` (True for the Responses API's clients)."""
    options = agent.default_options
    conversation = options.get("conversation_id")
    if isinstance(conversation, str) and conversation:
        return f"its options name the conversation {conversation}, which the service keeps"
    store = options.get("store")
    if store is True:
        return "its options set store=True: the service keeps each response"
    if store is None and getattr(agent.client, "STORES_BY_DEFAULT", False) is True:
        return (
            f"{type(agent.client).__name__} leaves store unset (the Responses API), and the service's default "
            "keeps each response"
        )
    return None


def _kind(identifier: str) -> str:
    """The framework's reading of an id (`RawOpenAIChatClient._prepare_options`): `conv_…` a conversation,
    anything else a response it continues with `previous_response_id`."""
    return "conversation" if identifier.startswith("conv_") else "response"


@dataclass
class StoredId:
    """One id the service returned for the agent, and what this process saw go there."""

    id: str
    kind: str
    session_id: str  # the id of the agent session whose call it answered
    turn: int | None = None
    how: str = ""  # how the call that created it was asked (store unset, a continuation)
    texts: list[str] = field(default_factory=list)  # what was sent and answered there, as this process saw it
    seen: bool = True  # False: named by an earlier run's session (its text was not seen by this process)
    refused: str = ""  # why the last forget could not delete it

    def text(self) -> str:
        return "\n".join(self.texts)

    @property
    def unknown(self) -> str:
        """Why what the service keeps there is not known here, or "" when this process saw all of it."""
        if not self.seen:
            return "named by an earlier run's session: what it holds was not seen by this process"
        if self.refused:
            return "the service still keeps it as it was sent; this process no longer keeps the values it forgot"
        return ""


@dataclass
class _Call:
    """One model call of the agent, while it runs: the ids it got back, and what it sent."""

    store: ServiceStore
    agent_session: AgentSession | None
    sent: list[str]
    how: str
    stored: bool  # False: the service keeps no response of it (`store: false`, or a client that keeps none)
    ids: list[str] = field(default_factory=list)

    def saw(self, *identifiers: str | None) -> None:
        for identifier in identifiers:
            if not isinstance(identifier, str) or not identifier or identifier in self.ids:
                continue
            if self.stored or _kind(identifier) == "conversation":
                self.ids.append(identifier)
                self.store.returned(identifier, self)

    def finished(self, response: ChatResponse[Any]) -> None:
        self.saw(response.response_id, response.conversation_id)
        reply = response.text or ""
        for identifier in self.ids:
            if reply:
                self.store.add_text(identifier, f"assistant: {reply}")


def _sent(context: ChatContext) -> list[str]:
    """What a call sends that the service keeps with its response: the instructions and each message."""
    instructions = context.options.get("instructions") if context.options else None
    texts = [f"instructions: {instructions}"] if isinstance(instructions, str) and instructions else []
    return texts + [f"{message.role}: {message.text or ''}" for message in context.messages]


class Recorder(ChatMiddleware):
    """Records each model call of one agent's run: the ids the service returns, and what went there."""

    def __init__(self, store: ServiceStore) -> None:
        self._store = store

    async def process(self, context: ChatContext, call_next: Callable[[], Awaitable[None]]) -> None:
        call = self._begin(context)
        await call_next()
        self._watch(context, call)

    def ended(self, context: ChatContext) -> None:
        """Record a call already made (`context`, answered): a context provider's own call on a client of
        the user's, which no recorder of the agent's was around (`ClientCalls` hands it over)."""
        self._store.aside += 1
        self._watch(context, self._begin(context))

    def _begin(self, context: ChatContext) -> _Call:
        options = context.options or {}
        continued = options.get("conversation_id")
        store = options.get("store")
        how = "store unset (the service's default)" if store is None else f"store={store}"
        if isinstance(continued, str) and continued:
            how += f", continuing {_kind(continued)} {continued}"
        self._store.asked(store, continued if isinstance(continued, str) else None)
        # The client this call went to keeps its response (a run on another client keeps none: `--model`).
        stored = store is True or (store is None and getattr(context.client, "STORES_BY_DEFAULT", False) is True)
        agent_session = context.session or turn_agent_session.get()  # a provider's own call: its turn's session
        return _Call(self._store, agent_session, _sent(context), how, stored=stored)

    def _watch(self, context: ChatContext, call: _Call) -> None:
        if isinstance(context.result, ResponseStream):

            def seen(update: ChatResponseUpdate) -> ChatResponseUpdate:
                call.saw(update.response_id, update.conversation_id)  # at the first update that names it
                return update

            def finished(response: ChatResponse[Any]) -> ChatResponse[Any]:
                call.finished(response)
                return response

            context.stream_transform_hooks.append(seen)
            context.stream_result_hooks.append(finished)
        elif isinstance(context.result, ChatResponse):
            call.finished(context.result)


class ServiceStore:
    """What the model service keeps of one user's agent's conversation, as "What is remembered" lists it
    and the one forget reaches it (see the module). The runtime that runs the agent adds its `recorder`
    to the agent and gives it the agents' sessions (`attach`); a workflow that runs it watches its calls
    with the same recorder (`runs_inside`). An agent whose calls no recorder can watch (inside a workflow,
    on a client without the framework's middleware layer) is listed, its calls not recorded."""

    unit = "id(s) deleted on the service, each verified gone (asked again: 404)"

    def __init__(self, name: str, agent: Agent, why: str, *, client: object = None, holder: str = "") -> None:
        """The store of `agent`'s own client; or, with `client` and `holder`, of the client a context provider
        of `agent` (`holder`, its class) calls itself, when no store of the agent's own client records it."""
        self.name = name
        self.agent = agent.name or ""
        self.why = why
        self.holder = holder
        self.client = client if client is not None else agent.client  # the client whose calls it records
        self.client_kind = type(self.client).__name__
        self._sdk = getattr(self.client, "client", None)  # the openai SDK client the chat client holds
        self._deleter = ServiceDeleter(self._sdk, self.client_kind)
        named = None if holder else agent.default_options.get("conversation_id")
        self._options_name = named if isinstance(named, str) and named else None  # a conversation its options name
        # Where the ids are kept in the agent's session state: a provider's client's apart from the agent's.
        self.state_key = f"{STATE_KEY} {holder}" if holder else STATE_KEY
        self._ids: dict[str, StoredId] = {}
        self._agent_sessions: AgentSessionsOf = dict
        self._attached = False
        self._recorded = False
        self._persisted = False
        self.workflows: list[str] = []  # the workflows that run the agent (`runs_inside`)
        self._current: list[CurrentOf] = []
        self._planned: list[str] = []
        self._outcomes: dict[str, str] = {}
        self.requests = 0
        self.unset = 0  # requests sent with `store` unset
        self.continued = 0  # requests that continued a response or a conversation on the service
        self.aside = 0  # requests a context provider made itself on this client (`Recorder.ended`)

    def attach(self, agent_sessions: AgentSessionsOf, *, recorded: bool = True, persisted: bool = False) -> None:
        """The agents' current sessions (their state keeps the ids; their `service_session_id` is the
        framework's record); the agent's calls are recorded from here on (`recorder`), unless it answers
        on another client (`recorded` False: the run's `--model`); `persisted`: the sessions are saved
        (`--persist`), so the ids of earlier runs saved with them are known."""
        self._agent_sessions, self._attached, self._recorded = agent_sessions, True, recorded
        self._persisted = persisted

    def runs_inside(self, workflow: str, current: CurrentOf) -> None:
        """A workflow runs the agent and watches its calls with `recorder`; `current` names the sessions
        its executors hold now (a run that went on through a forget continued an older one)."""
        self.workflows.append(workflow)
        self._current.append(current)
        self._attached = self._recorded = True

    def recorder(self) -> Recorder:
        return Recorder(self)

    # -- what the recorder tells it ---------------------------------------------------------------
    def asked(self, store: object, continued: str | None) -> None:
        self.requests += 1
        self.unset += store is None
        self.continued += continued is not None

    def returned(self, identifier: str, call: _Call) -> None:
        if identifier not in self._ids:
            turn = current_turn.get()
            session_id = call.agent_session.session_id if call.agent_session is not None else "?"
            stored = StoredId(identifier, _kind(identifier), session_id, turn.number if turn else None, call.how)
            self._ids[identifier] = stored
            if call.agent_session is not None:
                kept = call.agent_session.state.setdefault(self.state_key, [])
                if isinstance(kept, list):
                    kept.append({"id": identifier, "kind": stored.kind})
        self._ids[identifier].texts += call.sent

    def add_text(self, identifier: str, text: str) -> None:
        if identifier in self._ids:
            self._ids[identifier].texts.append(text)

    # -- what the runtime asks of a memory on the user's agents ------------------------------------
    @property
    def location(self) -> str | None:
        base = getattr(self._sdk, "base_url", None)
        return f"{base} (the model service)" if base is not None else "the model service"

    def providers(self, agent: str) -> list[ContextProvider]:
        return []

    def turn_started(self, agent: str) -> None:
        return None

    def recalled(self, agent: str) -> list[RecalledMessage]:
        return []

    def describe(self) -> str:
        return f"{self.why}; {len(self._known()):,} id(s) recorded"

    def _known(self) -> list[StoredId]:
        """Every id known now: recorded in this process, kept in the agent's current session's state by an
        earlier run (`--persist`), and the session's `service_session_id` (the framework's record)."""
        session = self._agent_sessions().get(self.agent)
        if session is not None:
            kept = session.state.get(self.state_key)
            named = [e.get("id") for e in kept if isinstance(e, dict)] if isinstance(kept, list) else []
            framework = (
                [] if self.holder else [session.service_session_id]
            )  # the agent's conversation, not a provider's
            for identifier in [*named, *framework]:
                if isinstance(identifier, str) and identifier and identifier not in self._ids:
                    self._ids[identifier] = StoredId(identifier, _kind(identifier), session.session_id, seen=False)
        return list(self._ids.values())

    async def held(self) -> list[HeldItem]:
        """Each id, with what this process saw go there; what earlier runs stored, not known; then what
        was recorded and what was not."""
        items = [HeldItem("stored", s.id, self._described(s), s.text(), unknown=s.unknown) for s in self._known()]
        earlier = HeldItem("outside", "responses of earlier runs", self.outside, "", unknown=self._unseen)
        return [*items, earlier, HeldItem("looked", "what was recorded", "", self._looked())]

    @property
    def _unseen(self) -> str:
        """Which earlier runs' responses this process does not know the ids of, and why."""
        if self.holder:
            return self._unseen_of_provider
        if self._persisted:
            return (
                f"{self.client_kind} of {self.agent} stores its responses on the service; those of runs made "
                "without --persist are kept there, and this process does not know their ids"
            )
        return (
            f"{self.client_kind} of {self.agent} stores its responses on the service; those of earlier runs are "
            "kept there, and this process does not know their ids (without --persist a run keeps them only "
            "while it lasts)"
        )

    @property
    def _unseen_of_provider(self) -> str:
        whose = (
            f"{self.client_kind} that {self.holder} of {self.agent} calls itself stores its responses on the service"
        )
        if self._persisted:
            return (
                f"{whose}; those of runs made without --persist are kept there, and this process does not know "
                "their ids"
            )
        return (
            f"{whose}; those of earlier runs are kept there, and this process does not know their ids (without "
            "--persist a run keeps them only while it lasts)"
        )

    @property
    def outside(self) -> str:
        """What the service keeps that no forget of this process reaches, and what the user can do: said in
        the report's outside list whatever the forget did to the ids it knew."""
        return (
            f"{self._unseen} ({self.why}), so they are outside its reach. To reach them: run with --persist, "
            "so each id is kept with the agent's session and a later forget deletes it; or delete them in the "
            "provider's dashboard or with its API (DELETE /v1/responses/{id})"
        )

    def _described(self, stored: StoredId) -> str:
        what = f"a {stored.kind} the service keeps"
        when = f", from turn {stored.turn} of {self.agent}" if stored.turn is not None else ""
        how = f" ({stored.how})" if stored.how else ""
        refused = f"; the last forget could not delete it: {stored.refused}" if stored.refused else ""
        unknown = f"; {stored.unknown}" if stored.unknown else ""
        seen = "; as this process sent and received it" if stored.texts and not stored.refused else ""
        return f"{what}{when}{how}{refused}{unknown}{seen}; any forget deletes it (the agent's session is replaced)"

    def _looked(self) -> str:
        if self.holder:
            return (
                f"recorded in this process from the calls {self.holder} makes itself during {self.agent}'s turns: "
                f"{self.requests:,} request(s), {self.unset:,} with store unset.\nNot recorded, so not known: its "
                "calls outside a turn of the workbench's, and what the service kept before this run (unless --persist "
                "kept the agent's session)"
            )
        if not self._attached:
            return (
                f"{self.agent} runs inside a workflow on a client without Agent Framework's middleware layer: the\n"
                "workbench records none of its calls, and what the service keeps of them is not known"
            )
        inside = f" (in the workflow {', '.join(self.workflows)})" if self.workflows else ""
        aside = (
            f"{self.aside:,} of them a context provider's own call on the same client (recorded during the agent's "
            "turns),\n"
            if self.aside
            else ""
        )
        if not self._recorded:
            went = f"; {self.aside:,} call(s) its context providers made themselves on that client went there" * bool(
                self.aside
            )
            return (
                f"{self.agent} answers on the run's model (--model), not on {self.client_kind}: nothing of its own "
                f"answers goes to its service{went}.\nWhat it kept before this run is not known (unless --persist "
                "kept the agent's session)"
            )
        return (
            f"recorded in this process from {self.agent}'s calls{inside}: {self.requests:,} request(s), "
            f"{self.unset:,} with store unset,\n{aside}{self.continued:,} continuing a response or conversation on "
            "the service (previous_response_id, conversation).\nNot recorded, so not known: a call made outside the "
            "agent's turns,\nand what the service kept before this run (unless --persist kept the agent's session)"
        )

    async def declared(self, keys: frozenset[str]) -> set[str]:
        self._planned = [s.id for s in self._known()]  # the ids this plan was made over
        return declared_in((s.text() for s in self._ids.values()), keys)

    # -- forgetting -------------------------------------------------------------------------------
    def outcomes(self) -> Mapping[str, str]:
        """What the last forget did to each id."""
        return dict(self._outcomes)

    async def erase(self, plan: ForgetPlan) -> int:
        """Delete every id known (the ones the plan was made over too), then ask for each again; see the
        module for what each outcome means."""
        planned, self._planned = self._planned, []
        targets = list(dict.fromkeys([*planned, *(s.id for s in self._known())]))
        return await self._delete(targets, plan)

    async def again(self, plan: ForgetPlan) -> int:
        """A turn that ran through the forget continued its old session on the service: delete what it
        created there (the ids recorded since, of a session no longer current)."""
        current = {s.session_id for s in self._agent_sessions().values()}
        for held in self._current:
            current.update(await held())
        targets = [s.id for s in self._ids.values() if s.session_id not in current and s.seen and not s.refused]
        return await self._delete(targets, plan) if targets else 0

    async def _delete(self, targets: Iterable[str], plan: ForgetPlan) -> int:
        self._outcomes = {}
        held: list[str] = []
        outside: list[str] = []
        deleted = 0
        for identifier in targets:
            stored = self._ids.get(identifier) or StoredId(identifier, _kind(identifier), "?", seen=False)
            gone, line, refused = await self._deleter.delete(stored.id, stored.kind)
            if gone and identifier == self._options_name:
                line += f"; the options of {self.agent} still name it: its next request fails until you give it another"
            self._outcomes[identifier] = line
            if gone:
                deleted += 1
                self._ids.pop(identifier, None)
                continue
            # This process keeps no value, whatever the service does.
            stored.texts = [plan.scrub(t) for t in stored.texts]
            stored.refused = line
            self._ids[identifier] = stored
            (held if refused else outside).append(identifier)
        self._keep_in_sessions()
        where = f"on the service at {self.location}, outside this process"
        if held:
            raise StillHolds(f"{where}: {_named(held)}, not deleted (each id's outcome below)")
        if outside:
            raise NotReached(
                f"{deleted:,} id(s) deleted and verified gone; {where}, deletion not offered for {_named(outside)}: "
                "the service still keeps them; remove them with the service's own tools, if it has any"
            )
        return deleted

    def _keep_in_sessions(self) -> None:
        """The ids a forget could not delete, kept in the agent's current session's state, as the recorder
        keeps them: a later run (`--persist`) still names them, and the next forget tries them again."""
        session = self._agent_sessions().get(self.agent)
        if session is None:
            return
        left = [{"id": s.id, "kind": s.kind} for s in self._ids.values()]
        if left:
            session.state[self.state_key] = left
        else:
            session.state.pop(self.state_key, None)

    # -- the question, before a forget ------------------------------------------------------------
    @property
    def announced(self) -> str:
        """What a forget will do there, said in its question before it runs."""
        known = self._known()
        unseen = f"; not known, outside its reach: {self._unseen}"
        if not known:
            return f"on the model service, outside this process: no id known to this process, nothing to delete{unseen}"
        named = (
            f"; the options of {self.agent} name the conversation {self._options_name}: once it is deleted, its next "
            "request fails until you give it another"
            if any(s.id == self._options_name for s in known)
            else ""
        )
        return (
            f"on the model service, outside this process: deletes {len(known):,} id(s) there with the agent's own "
            f"client and key, then asks for each again: {_named([s.id for s in known])}{named}{unseen}"
        )


def _named(ids: list[str]) -> str:
    """The first ids, and how many more."""
    more = f" and {len(ids) - _NAMED:,} more" if len(ids) > _NAMED else ""
    return ", ".join(ids[:_NAMED]) + more
