"""The forget flow: one question at a time (`ConfirmForget`), then one forget through the session, and
each pane's note of who starts anew. Asked by a `ForgetRequested` that reached the app, a console
command or F8. However many keys it names, a forget is one plan: the question shows its preview and
the answer Forget applies that same plan; when memory changed meanwhile, it is asked again."""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING

from textual import events

from workbench.session.views import PlanChanged, joined
from workbench.ui.chat import ChatPane
from workbench.ui.confirm import ConfirmForget

if TYPE_CHECKING:
    from textual.app import App

    from workbench.session.controller import SessionController
    from workbench.session.views import ForgetPreview
    from workbench.ui.composer import Composer


def in_pair(panes: Iterable[ChatPane]) -> bool:
    """Two agents run (the built-in pair, or two of the user's): messages say "both"."""
    return len(list(panes)) == 2


async def replace_histories(panes: Iterable[ChatPane], reason: Callable[[str], str]) -> None:
    """Each pane's history replaced, with the note `reason` gives for its agent."""
    for pane in panes:
        await pane.replace_history(reason(pane.agent))


class ForgetFlow:
    """Asks before a forget and runs it. `workflows`: the panes a workflow answers in, or each with the
    names of the agents its executors run (the note names them)."""

    def __init__(self, app: App[None], workflows: Collection[str] | Mapping[str, Sequence[str]]) -> None:
        self.app = app
        self.workflows = frozenset(workflows)
        self.workflow_agents = (
            {name: tuple(names) for name, names in workflows.items()} if isinstance(workflows, Mapping) else {}
        )

    def held_back(self, event: events.Event, draft: Callable[[], Composer]) -> bool:
        """True for an input event that came before the forget question on top was drawn: it answers
        nothing and goes no further (a printable key goes to the `draft` instead)."""
        question = self.app.screen_stack[-1] if self.app.screen_stack else None
        early = isinstance(question, ConfirmForget) and not question.answers(event)
        if early and isinstance(event, events.Key | events.MouseDown | events.MouseUp) and not event.is_forwarded:
            if isinstance(event, events.Key) and event.is_printable and event.character:
                draft().insert(event.character)
            return True
        return False

    def asking(self) -> bool:
        return any(isinstance(s, ConfirmForget) for s in self.app.screen_stack)

    async def ask(
        self, session: SessionController, keys: Sequence[str] | None, held: Mapping[str, Sequence[str]] | None = None
    ) -> None:
        """Ask before forgetting `keys` (None: everything), one question at a time; forget only on the
        answer Forget. Without `held` the keys are facts' (the fact panel's), named with their values; a
        key no longer stored then asks nothing."""
        if self.asking():
            return
        facts, given = {f.key: f for f in session.state().memory.facts}, held  # asked again as given (`_forget`)
        if held is None:
            if keys is not None and not all(key in facts for key in keys):
                return
            held = {key: (facts[key].value,) for key in keys or ()}

        preview = await session.forget_preview(keys)  # the forget's one plan: the holders' texts are read
        if self.asking():
            return  # another question came first meanwhile

        async def confirmed(answer: bool | None) -> None:
            if answer:
                await self._forget(session, preview, given)

        question = ConfirmForget(
            keys,
            held,
            agents=preview.agents,
            kept=preview.kept,
            also=preview.also,
            reaches=preview.reaches,
            unreached=preview.unreached,
            holding=preview.holding,
            value_chars=session.state().status.contract.max_value_chars,
        )
        self.app.push_screen(question, callback=confirmed)

    async def _forget(
        self, session: SessionController, preview: ForgetPreview, held: Mapping[str, Sequence[str]] | None
    ) -> None:
        """Apply the plan the question showed, through the one forget (memory and every registered holder,
        every key at once), then clear the panes. Memory changed since the question (a turn admitted or
        replaced a fact): nothing is forgotten, and the question is asked again with the plan as it is now."""
        keys = preview.keys
        try:
            await session.forget(preview)
        except PlanChanged as changed:
            self.app.notify(f"{changed}; asked again.", severity="warning", markup=False)
            await self.ask(session, keys, held)
            return
        also = list(preview.also)  # their values held a forgotten one
        what = f"forget {', '.join(keys)}" if keys else "forget (every fact)"
        await replace_histories(
            self.app.query(ChatPane),
            lambda agent: (
                f"History replaced by {what}: {self.starting_anew(agent)} and no longer "
                f"{'see' if agent in self.workflows else 'sees'} the messages that were here."
            ),
        )
        went = f" and {', '.join(also)} ({'its value' if len(also) == 1 else 'their values'} held one)" if also else ""
        forgot = "Forgot " + ", ".join(keys) + went if keys else "Forgot every fact"
        self.app.notify(
            f"{forgot}; {'both histories' if in_pair(self.app.query(ChatPane)) else 'every agent history'} replaced."
        )

    def starting_anew(self, pane: str) -> str:
        """Who starts a new session when a forget replaces the histories: the pane's agent, or a
        workflow's agents, each in its executor (named as F1 names agents, where the start gave them). A
        switch of mode or recall says the same (`workbench.ui.palette`)."""
        if pane not in self.workflows:
            return f"the {pane} agent starts a new session"
        names = self.workflow_agents.get(pane)
        return f"the agents of {pane}{f' ({joined(names)})' if names else ''} each start a new session"
