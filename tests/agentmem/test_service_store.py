"""What a model service keeps of a user's agent's conversation (`workbench.runtime.service_store`): an Agent
Framework `OpenAIChatClient` agent, loaded as a user's module is, on a loopback server speaking the
Responses API (`tests/support/responses_server.py`), which keeps every response it is not told not to keep.

The ids are the ones the server returned; F3, `workbench remembered`, the forget's question and its report
name them; the forget deletes them with the agent's own client and key and asks for each again; a service
that refuses deletion or does not offer it is said so, and `workbench forget` exits 3 on a refusal."""

from __future__ import annotations

import asyncio
import io
import json
import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.support.residue import residue
from tests.support.responses_server import KEY, Deletion, LoopbackResponses
from tests.test_startup import HANG
from workbench import scripts
from workbench.loading import from_reference
from workbench.memory.holder_kinds import STILL_HOLDS
from workbench.runtime import build_models
from workbench.runtime.config import Mode, ModelConfig, WriterKind
from workbench.runtime.service_store import STATE_KEY, ServiceStore
from workbench.session.assemble import assemble

VALUE = "Contoso Ltd 7731"
NAME = "accounts: the service's store (OpenAIChatClient)"

# A user's module, as the framework's samples build an agent on OpenAI's Responses API: `store` left unset.
MODULE = """
import os

from agent_framework import Agent
from agent_framework_openai import OpenAIChatClient

agent = Agent(
    client=OpenAIChatClient(
        model="gpt-loopback", base_url=os.environ["LOOPBACK_RESPONSES_URL"], api_key=os.environ["LOOPBACK_RESPONSES_KEY"]
    ),
    name="accounts",
    instructions="You help with accounts.",
)
"""


@pytest.fixture
def module(tmp_path, monkeypatch) -> Iterator[Path]:
    (tmp_path / "service_agent.py").write_text(MODULE)
    monkeypatch.syspath_prepend(str(tmp_path))
    before = set(sys.modules)
    yield tmp_path
    for name in set(sys.modules) - before:
        del sys.modules[name]


def served(deletion: Deletion, monkeypatch) -> LoopbackResponses:
    service = LoopbackResponses(deletion)
    monkeypatch.setenv("LOOPBACK_RESPONSES_URL", service.base_url)
    monkeypatch.setenv("LOOPBACK_RESPONSES_KEY", KEY)
    return service


def session_of():
    agents = [loaded.agent for loaded in from_reference("service_agent:agent")]
    return assemble(build_models(ModelConfig()), agents=agents, mode=Mode.PROVIDER, writer=WriterKind.HOST)


def posts(service: LoopbackResponses) -> list[dict[str, Any]]:
    return [body or {} for method, path, body in service.requests if method == "POST" and path.endswith("/responses")]


async def system(runtime, name=NAME):
    return next(s for s in (await runtime.remembered()).systems if s.name == name)


async def two_turns(runtime) -> None:
    assert (await runtime.ask("accounts", f"customer={VALUE}")).ok
    assert (await runtime.ask("accounts", "who is the customer?")).ok


def test_the_ids_the_service_returned_are_named_and_a_forget_deletes_each_and_checks_it_is_gone(module, monkeypatch):
    with served("offered", monkeypatch) as service:
        session = session_of()
        runtime = session.runtime
        [store] = [m for m in runtime.memories if isinstance(m, ServiceStore)]
        assert store.name == NAME

        async def story() -> None:
            await two_turns(runtime)
            first, second = posts(service)
            # What went over the wire: `store` unset, then a continuation of the first response only, with no
            # history of the workbench's sent again beside it (the framework gives such an agent none).
            assert "store" not in first and "previous_response_id" not in first
            kept = list(service.state.responses)
            assert second["previous_response_id"] == kept[0] and len(kept) == 2
            said = [i["content"][0]["text"] for i in second["input"]]
            assert said[-1] == "who is the customer?" and f"customer={VALUE}" not in said  # the facts block and it

            listed = await system(runtime)
            assert listed.location == f"{service.base_url}/ (the model service)"
            assert "leaves store unset (the Responses API)" in listed.description
            stored = [i for i in listed.items if i.kind == "stored"]
            assert [i.name for i in stored] == kept  # the ids the service returned, as it returned them
            assert all(i.keys == ("customer",) and not i.unknown for i in stored)  # what was sent there holds it
            [looked] = [i for i in listed.items if i.kind == "looked"]
            assert "2 request(s), 2 with store unset,\n1 continuing" in looked.content
            assert listed.keys == ("customer",)
            names = {s.name for s in (await runtime.remembered()).systems}
            assert "agent sessions" in names

            preview = await session.forget_preview(["customer"])
            [said] = [r for r in preview.reaches if r.startswith(NAME)]
            assert (
                f"deletes 2 id(s) there with the agent's own client and key, then asks for each again: {kept[0]}"
                in said
            )

            report = await runtime.forget("customer")
            assert report.failures == {} and report.unreached == {}, report
            assert report.removed[NAME] == 2
            assert report.outcomes[NAME] == dict.fromkeys(kept, "deleted, verified gone (asked again: 404)")
            assert service.state.responses == {} and not any(VALUE in t for t in service.state.texts())
            asked = [(m, p.rsplit("/", 1)[-1]) for m, p, _ in service.requests if m in ("DELETE", "GET")]
            assert asked == [(m, i) for i in kept for m in ("DELETE", "GET")]  # each deleted, then asked for again
            assert residue([VALUE], runtime, store) == {}
            assert KEY not in report.describe() and KEY not in json.dumps(report.outcomes)
            after = await system(runtime)
            assert [i.kind for i in after.items] == ["outside", "looked"]
            assert STATE_KEY not in runtime.agent_sessions()["accounts"].state

            # The agent starts a new conversation on the service: nothing continues what was deleted.
            assert (await runtime.ask("accounts", "hello again")).ok
            assert "previous_response_id" not in posts(service)[-1]

        asyncio.run(story())


def test_a_refused_deletion_is_said_with_the_services_reason_and_workbench_forget_exits_3(module, monkeypatch, capsys):
    with served("refused", monkeypatch) as service:
        session = session_of()

        async def story() -> int:
            await two_turns(session.runtime)
            return await scripts.forget(lambda: session, "customer", ask=None, as_json=True, say=print)

        assert asyncio.run(story()) == scripts.NOT_REACHED
        out = json.loads(capsys.readouterr().out)
        kept = list(service.state.responses)
        assert len(kept) == 2  # the service still keeps both
        refused = "refused: HTTP 403 (This project's key may not delete stored responses.)"
        assert out["outcomes"][NAME] == dict.fromkeys(kept, refused)
        assert out["failures"][NAME].startswith(f"{STILL_HOLDS}: on the service at {service.base_url}/")
        assert "outside this process" in out["failures"][NAME] and kept[0] in out["failures"][NAME]
        # This process keeps no copy of the value; F3 says what the service keeps is not known here.
        assert residue([VALUE], session.runtime) == {}
        listed = asyncio.run(system(session.runtime))
        stored = [i for i in listed.items if i.kind == "stored"]
        assert [i.name for i in stored] == kept and all(i.unknown for i in stored)
        assert all("the last forget could not delete it: refused: HTTP 403" in i.description for i in stored)
        # They are kept with the agent's new session (a later run with --persist names them), and tried again.
        assert [e["id"] for e in session.runtime.agent_sessions()["accounts"].state[STATE_KEY]] == kept


def test_a_service_that_offers_no_deletion_is_named_outside_and_the_forget_exits_0(module, monkeypatch, capsys):
    with served("not offered", monkeypatch) as service:
        session = session_of()

        async def story() -> int:
            await two_turns(session.runtime)
            return await scripts.forget(lambda: session, "customer", ask=None, as_json=False, say=print)

        assert asyncio.run(story()) == 0
        lines = capsys.readouterr().out.splitlines()
        kept = list(service.state.responses)
        assert len(kept) == 2
        assert f"  {NAME}, each id on the service:" in lines
        said = "not offered: DELETE answered HTTP 405 (Method Not Allowed); asked again, the service still returns it"
        assert f"    {kept[0]}: {said}" in lines
        outside = lines.index("outside what the workbench can see (not known; what it holds there stays):")
        assert lines[outside + 1].startswith(f"  {NAME}: 0 id(s) deleted and verified gone; on the service at")
        assert "deletion not offered for" in lines[outside + 1]


def test_f3_draws_the_ids_and_says_when_what_one_holds_is_not_known(module, monkeypatch):
    from rich.console import Console

    from workbench.ui.remembered_screen import _item, _system

    def drawn(renderable: Any) -> str:
        console = Console(width=140, record=True, file=io.StringIO())
        console.print(renderable)
        return console.export_text()

    with served("refused", monkeypatch) as service:
        runtime = session_of().runtime

        async def story() -> None:
            await two_turns(runtime)
            listed = await system(runtime)
            first = next(iter(service.state.responses))
            assert f"stored {first} · holds customer" in drawn(_item(listed.items[0], 256))
            await runtime.forget("customer")
            after = await system(runtime)
            assert "what some of it holds is not known" in drawn(_system(after))
            assert f"stored {first} · what it holds is not known" in drawn(_item(after.items[0], 256))

        asyncio.run(story())


@pytest.mark.parametrize("barrier", [True, False], ids=["barrier", "without-it"])
def test_a_turn_running_through_the_forget_leaves_nothing_on_the_service_once_it_ends(module, monkeypatch, barrier):
    """The service creates the turn's response, which continues the old conversation, while the forget runs:
    once the turn ends, the forget deletes it too."""
    with served("offered", monkeypatch) as service:
        runtime = session_of().runtime
        if not barrier:  # what the test would see without it: the turn's response left on the service
            monkeypatch.setattr(type(runtime.forgetting), "turn_ended", lambda self, turn: [])

        async def story() -> None:
            assert (await runtime.ask("accounts", f"customer={VALUE}")).ok
            service.state.created.clear()
            service.state.hold = threading.Event()  # the next answer waits
            turn = asyncio.create_task(runtime.ask("accounts", "who is the customer?"))
            await asyncio.to_thread(service.state.created.wait)  # the service keeps the turn's response now
            report = await runtime.forget("customer")
            assert report.failures == {} and len(report.outcomes[NAME]) == 1  # the first turn's: the only id known
            assert service.state.hold is not None
            service.state.hold.set()
            assert (await turn).ok
            assert (service.state.responses == {}) is barrier

        asyncio.run(story())


def test_a_conversation_the_agents_options_name_is_deleted_with_its_responses_and_the_question_says_so(
    tmp_path, monkeypatch
):
    """An agent whose options name a conversation (`conv_…`): the service keeps every item given to it; the
    forget deletes it with the responses, and the question says the agent's next request then fails."""
    from openai import OpenAI

    with served("offered", monkeypatch) as service:
        conversation = OpenAI(base_url=service.base_url, api_key=KEY).conversations.create().id
        (tmp_path / "conversing.py").write_text(
            MODULE.replace(
                'name="accounts",', f'name="accounts", default_options={{"conversation_id": "{conversation}"}},'
            )
        )
        monkeypatch.syspath_prepend(str(tmp_path))
        agents = [loaded.agent for loaded in from_reference("conversing:agent")]
        session = assemble(build_models(ModelConfig()), agents=agents, mode=Mode.PROVIDER, writer=WriterKind.HOST)
        runtime = session.runtime

        async def story() -> None:
            await two_turns(runtime)
            assert all(body.get("conversation") == conversation for body in posts(service))
            held = [i.name for i in (await system(runtime)).items if i.kind == "stored"]
            responses = list(service.state.responses)
            assert held == [responses[0], conversation, responses[1]]  # as the service returned them
            [said] = [r for r in (await session.forget_preview(None)).reaches if r.startswith(NAME)]
            assert f"the options of accounts name the conversation {conversation}: once it is deleted" in said
            report = await runtime.forget(None)
            assert report.failures == {} and report.removed[NAME] == 3
            assert report.outcomes[NAME][conversation].startswith("deleted, verified gone (asked again: 404); ")
            assert service.state.responses == {} and service.state.conversations == {}
            assert not any(VALUE in t for t in service.state.texts())

        asyncio.run(story())
        sys.modules.pop("conversing", None)


def test_on_the_runs_model_nothing_goes_to_the_agents_service_and_it_keeps_the_runtimes_history(module, monkeypatch):
    """With --model the agent answers on that model, not on its own client: its service receives nothing,
    F3 says so, and the runtime's history keeps its conversation (the service keeps none of it)."""
    from tests.support.openai_server import LoopbackOpenAI
    from workbench.runtime.config import ModelConfig

    with served("offered", monkeypatch) as service, LoopbackOpenAI() as model:
        agents = [loaded.agent for loaded in from_reference("service_agent:agent")]
        models = build_models(ModelConfig(model="smollm2", base_url=model.base_url))
        runtime = assemble(models, agents=agents, mode=Mode.PROVIDER, writer=WriterKind.HOST).runtime

        async def story() -> None:
            await two_turns(runtime)
            listed = await system(runtime)
            assert [i.kind for i in listed.items] == ["outside", "looked"]
            assert "answers on the run's model (--model), not on OpenAIChatClient" in listed.items[1].content
            assert len(runtime.history("accounts")) == 4  # the runtime's history keeps the conversation

        asyncio.run(story())
        assert service.requests == [] and len(model.requests) == 2


SCRIPT = """
import asyncio, sys
from workbench.cli.configs import model_config
from workbench.cli.parser import parse
from workbench.cli.start import load_agents, session_start
args = parse(sys.argv[1:])
session = session_start(args, model_config(args), load_agents(args))()
async def turns():
    assert (await session.runtime.ask("accounts", "customer=Contoso Ltd 7731")).ok
    assert (await session.runtime.ask("accounts", "who is it?")).ok
asyncio.run(turns())
session.close()
"""


def test_with_persist_a_later_process_names_the_ids_and_its_forget_deletes_them(module, monkeypatch):
    """The ids are kept with the agent's saved session: `workbench remembered` and `workbench forget` in
    processes of their own name them and delete them, and exit 0."""
    with served("offered", monkeypatch) as service:
        env = {**os.environ, "WORKBENCH_DATA_DIR": str(module / "data"), "PYTHONPATH": str(module)}

        def run(*words: str, script: str = "") -> subprocess.CompletedProcess[str]:
            command = [sys.executable, *(["-c", script] if script else ["-m", "workbench"]), *words]
            return subprocess.run(
                command, env=env, cwd=module, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=HANG
            )

        options = ("--persist", "--agents", "service_agent:agent")
        turns = run(*options, script=SCRIPT)
        assert turns.returncode == 0, turns.stderr
        kept = list(service.state.responses)
        listed = run("remembered", *options, "--json")
        assert listed.returncode == 0, listed.stderr
        [store] = [s for s in json.loads(listed.stdout)["systems"] if s["name"] == NAME]
        assert [i["name"] for i in store["items"] if i["kind"] == "stored"] == kept
        assert all("not seen by this process" in i["unknown"] for i in store["items"] if i["kind"] == "stored")

        forgot = run("forget", "customer", *options, "--yes", "--json")
        assert forgot.returncode == 0, forgot.stdout + forgot.stderr
        out = json.loads(forgot.stdout)
        assert out["outcomes"][NAME] == dict.fromkeys(kept, "deleted, verified gone (asked again: 404)")
        assert service.state.responses == {} and KEY not in forgot.stdout + forgot.stderr
        again = json.loads(run("remembered", *options, "--json").stdout)
        [store] = [s for s in again["systems"] if s["name"] == NAME]
        assert [i["kind"] for i in store["items"]] == ["outside", "looked"]


def test_a_fresh_process_without_persist_names_the_earlier_runs_responses_as_outside_its_reach(module, monkeypatch):
    """A run without --persist keeps its responses' ids only while it lasts: a later process's forget
    cannot delete what it stored, exits 0 over what it could see, and says in the question, the report
    and its outside list that the service keeps them and why this process cannot reach them."""
    with served("offered", monkeypatch) as service:
        env = {**os.environ, "WORKBENCH_DATA_DIR": str(module / "data"), "PYTHONPATH": str(module)}

        def run(*words: str, script: str = "") -> subprocess.CompletedProcess[str]:
            command = [sys.executable, *(["-c", script] if script else ["-m", "workbench"]), *words]
            return subprocess.run(
                command, env=env, cwd=module, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=HANG
            )

        options = ("--agents", "service_agent:agent")
        turns = run(*options, script=SCRIPT)
        assert turns.returncode == 0, turns.stderr
        kept = list(service.state.responses)
        assert len(kept) == 2
        unseen = (
            "OpenAIChatClient of accounts stores its responses on the service; those of earlier runs are kept there, "
            "and this process does not know their ids (without --persist a run keeps them only while it lasts)"
        )

        listed = run("remembered", *options)
        assert listed.returncode == 0, listed.stderr
        lines = listed.stdout.splitlines()
        assert '  - outside "responses of earlier runs" [what it holds is not known]' in lines
        assert not any(i in listed.stdout for i in kept)  # this process names no id it does not know

        forgot = run("forget", "customer", *options, "--yes")
        assert forgot.returncode == 0, forgot.stdout + forgot.stderr
        lines = forgot.stdout.splitlines()
        outside = lines.index("outside what the workbench can see (not known; what it holds there stays):")
        [said] = [line for line in lines[outside + 1 :] if line.startswith(f"  {NAME}: ")]
        assert said.startswith(f"  {NAME}: {unseen} (OpenAIChatClient leaves store unset (the Responses API)")
        assert "outside its reach. To reach them: run with --persist" in said
        assert "delete them in the provider's dashboard or with its API (DELETE /v1/responses/{id})" in said
        assert list(service.state.responses) == kept  # the service still keeps them: nothing said otherwise
        assert not any(i in forgot.stdout for i in kept) and KEY not in forgot.stdout + forgot.stderr

    # The question, as the TUI and `workbench forget` without --yes ask it, in a process that saw no id.
    with served("offered", monkeypatch):
        session = session_of()
        preview = asyncio.run(session.forget_preview(["customer"]))
        asked = scripts.question(preview, {})
        assert (
            f"{NAME} (on the model service, outside this process: no id known to this process, nothing to delete; "
            f"not known, outside its reach: {unseen})" in asked
        )
        report = asyncio.run(session.runtime.forget("customer"))
        assert report.failures == {} and report.outside[NAME].startswith(unseen)
        shown = asyncio.run(system(session.runtime))
        [earlier] = [i for i in shown.items if i.kind == "outside"]
        assert earlier.unknown == unseen and earlier.keys == ()


# A workflow of two agents on the Responses API, as a user's module builds one.
FLOW = """
import os

from agent_framework import Agent, WorkflowBuilder
from agent_framework_openai import OpenAIChatClient

def client():
    return OpenAIChatClient(
        model="gpt-loopback", base_url=os.environ["LOOPBACK_RESPONSES_URL"], api_key=os.environ["LOOPBACK_RESPONSES_KEY"]
    )

drafter = Agent(client=client(), name="drafter", instructions="You draft.")
checker = Agent(client=client(), name="checker", instructions="You check.")
workflow = WorkflowBuilder(start_executor=drafter).add_edge(drafter, checker).build()
"""


def test_a_workflows_agents_ids_are_recorded_and_the_forget_deletes_them(module, tmp_path, monkeypatch):
    """Agents inside a workflow, on a client whose service keeps each response: the ids the service returned
    to each are listed under its store, the question names them, and the forget deletes and checks each."""
    from workbench.loading import load_folder

    folder = tmp_path / "agents"
    folder.mkdir()
    (folder / "responses_flow.py").write_text(FLOW)
    with served("offered", monkeypatch) as service:
        loaded = load_folder(folder)
        flows = [(flow.name, flow.workflow, flow.cannot_run) for flow in loaded.workflows]
        session = assemble(build_models(ModelConfig()), agents=[], workflows=flows, writer=WriterKind.HOST)
        runtime = session.runtime

        async def story() -> None:
            assert (await runtime.ask("responses_flow", f"customer={VALUE}")).ok
            assert (await runtime.ask("responses_flow", "who is the customer?")).ok
            kept = list(service.state.responses)
            assert len(kept) == 4 and any(VALUE in t for t in service.state.texts())
            named: list[str] = []
            for agent in ("drafter", "checker"):
                listed = await system(runtime, f"{agent}: the service's store (OpenAIChatClient)")
                stored = [i for i in listed.items if i.kind == "stored"]
                assert len(stored) == 2 and all(i.keys == ("customer",) and not i.unknown for i in stored)
                [looked] = [i for i in listed.items if i.kind == "looked"]
                assert looked.content.startswith(
                    f"recorded in this process from {agent}'s calls (in the workflow responses_flow): 2 request(s)"
                )
                named += [i.name for i in stored]
            assert sorted(named) == sorted(kept)  # every id the service returned, each under its agent

            preview = await session.forget_preview(["customer"])
            assert any(r.startswith("drafter: the service's store") and "deletes 2 id(s)" in r for r in preview.reaches)
            report = await runtime.forget("customer")
            assert report.failures == {}, report
            done = {i: what for outcomes in report.outcomes.values() for i, what in outcomes.items()}
            assert done == dict.fromkeys(kept, "deleted, verified gone (asked again: 404)")
            assert service.state.responses == {} and not any(VALUE in t for t in service.state.texts())

            # The executors start anew: the next run continues nothing that was deleted.
            before = len(posts(service))
            assert (await runtime.ask("responses_flow", "hello again")).ok
            assert not any("previous_response_id" in body for body in posts(service)[before:])

        asyncio.run(story())


def test_the_drift_lab_runs_an_agent_whose_service_keeps_its_responses_with_store_false(module, monkeypatch):
    """The lab never writes into the user's stores: an agent on the Responses API runs with `store=False`
    for the lab, so its service keeps none of the story; the lab's history sends the conversation itself
    (no previous_response_id), and the report says so. A conversation its options name would keep every
    item whatever `store` says: its rows do not run without the option, and say why."""
    from workbench.drift import run_drift
    from workbench.drift.copies import ALLOW_OPTION
    from workbench.drift.report_json import to_json

    rows = ["yours:accounts", "yours:accounts+facts"]
    with served("offered", monkeypatch) as service:
        agents = from_reference("service_agent:agent")
        drift = asyncio.run(run_drift(build_models(ModelConfig()), agents=agents, policies=rows))
        assert all(name in drift.scores for name in rows), drift.unavailable
        sent = posts(service)
        assert sent and all(body.get("store") is False and "previous_response_id" not in body for body in sent)
        assert service.state.responses == {}  # the service keeps nothing of the lab's
        assert any(len(body["input"]) > 2 for body in sent)  # a later turn sends the conversation before it
        said = json.dumps(to_json(drift))
        assert "the service's store (OpenAIChatClient): run with store=False for the lab" in said

        conversation = "conv_" + "0" * 24
        agent = agents[0].agent
        agent.default_options["conversation_id"] = conversation
        refused = asyncio.run(run_drift(build_models(ModelConfig()), agents=agents, policies=rows))
        for name in rows:
            why = refused.unavailable[name]
            assert f"accounts's the service's store: its options name the conversation {conversation}" in why
            assert ALLOW_OPTION in why
        assert len(posts(service)) == len(sent)  # nothing more was sent
