"""The persisted-history policy: both agents' histories kept as `workbench --persist` keeps them (one
SQLite database of the sessions' `AgentSession.to_dict` and their messages, through
`workbench.persist`), in a temporary directory of the lab's own. Before every probe, and after every
forget, the workbench restarts: the directory is opened again and each agent resumes its session from
the files, so a cell shows exactly what a restart brings back. Between restarts it runs as the app runs,
saving every turn (a restart reads every message back: one before every step made a 1,000-turn lab read
a million, for cells scored at the probes only). Its commits are not flushed to the disk: the directory
is deleted with the lab, and a restart reads back the same. A forget is the product's: as in the app,
both sessions are replaced by new ones, their files erased, and every file scanned for the forgotten
values."""

from __future__ import annotations

import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from agent_framework import Message

from workbench.build.builder import lab_forget
from workbench.drift.agentmem_policy import AgentFactory
from workbench.drift.policies import Policy, PolicyInfo, folder_size
from workbench.memory import Contract
from workbench.persist.sessions import DIRECTORY, PersistedSessions
from workbench.runtime.agents import AGENT_NAMES, INSTRUCTIONS
from workbench.runtime.holders import agent_sessions

SHAPE = "drift lab, full history"  # what shaped the histories: the same at every restart, so each resumes


class PersistedHistoryPolicy(Policy):
    """Both agents over the product's persisted sessions, reopened at every step."""

    def __init__(self, info: PolicyInfo, agent: AgentFactory, contract: Contract) -> None:
        super().__init__(info, {})
        self._agent = agent
        self._contract = contract
        self._folder = tempfile.TemporaryDirectory(prefix="workbench-drift-persisted-")  # deleted with the policy
        self.directory = Path(self._folder.name) / DIRECTORY
        self._running: PersistedSessions | None = None  # the workbench started on the directory, until it quits

    def _start(self) -> PersistedSessions:
        """A workbench started on the directory, as `workbench --persist` starts: both agents resume their
        saved sessions (`self.agents`, `self.agent_sessions`)."""
        persisted = PersistedSessions(self.directory, contract=self._contract, flushed=False)
        try:
            self.agents = {
                role: self._agent(self.info.name, [persisted.provider(role)], INSTRUCTIONS[role])
                for role in AGENT_NAMES
            }
            self.agent_sessions = {role: persisted.first_session(role, a, SHAPE) for role, a in self.agents.items()}
            persisted.current(self.agent_sessions, SHAPE)
        except BaseException:
            persisted.close()
            raise
        return persisted

    def _quit(self) -> None:
        if self._running is not None:
            self._running.close()
            self._running = None

    @contextmanager
    def _restarted(self) -> Iterator[PersistedSessions]:
        """The workbench quits if it runs, and starts again for the block; it quits at the end of it."""
        self._quit()
        persisted = self._start()
        try:
            yield persisted
        finally:
            persisted.close()

    async def before_probe(self) -> None:
        """The probe's step starts the workbench afresh."""
        self._quit()

    async def answer(self, turn: int, agent: str, text: str) -> str:
        if self._running is None:
            self._running = self._start()
        reply = await super().answer(turn, agent, text)
        self._running.current(self.agent_sessions, SHAPE)  # what the runtime does after every turn
        return reply

    async def forget(self, key: str | None) -> None:
        """The product's forget on the persisted sessions, on a workbench started for it: its memory (empty
        here: this policy keeps no facts), the agents' sessions replaced, then the files rewritten and
        scanned."""
        with self._restarted() as persisted:
            sessions = agent_sessions(lambda: self._texts(persisted), lambda _: self._new(persisted))
            report = await lab_forget(persisted.memory, agent_sessions=[sessions], persisted=persisted).forget(key)
        if report.failures:
            raise RuntimeError(report.describe())

    def _texts(self, persisted: PersistedSessions) -> Iterator[str]:
        for role, session in self.agent_sessions.items():
            yield from (m.text or "" for m in persisted.messages(role, session))

    def _new(self, persisted: PersistedSessions) -> int:
        """New sessions for both agents; the files of the old ones are erased. Returns the messages dropped."""
        dropped = sum(1 for _ in self._texts(persisted))
        self.agent_sessions = {role: a.create_session() for role, a in self.agents.items()}
        persisted.current(self.agent_sessions, SHAPE)
        return dropped

    def retained(self) -> list[Message]:
        """Every message the files hold for the agents' sessions, as the next start would resume them."""
        with self._restarted() as persisted:
            return [m for role, session in self.agent_sessions.items() for m in persisted.messages(role, session)]

    def on_disk(self) -> int | None:
        return folder_size(self.directory)

    async def close(self) -> None:
        self._quit()
        self._folder.cleanup()
