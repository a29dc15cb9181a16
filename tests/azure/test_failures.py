"""Each Azure OpenAI failure is one line naming what to set or check; facts and histories stay as
they were, and neither the key nor a token shows. Against the loopback server's Azure answers."""

import pytest

from tests.azure.helpers import azure_runtime
from tests.live.helpers import is_writer
from tests.support.azure_server import API_KEY, content_filtered
from tests.support.openai_server import Canned
from workbench.memory import EventKind, ReasonCode
from workbench.runtime.failures import CONTENT_FILTERED

FIRST = "module=Reporting"


def state(runtime):
    return (
        runtime.memory.facts(),
        [m.text for m in runtime.history("support")],
        [m.text for m in runtime.history("logs")],
    )


def wrong_token() -> str:
    return "eyJ0eXAiOiJKV1QifQ.eyJ3cm9uZyI6InRlbmFudCJ9.c2lnbmF0dXJl"


async def _assert_one_line_and_nothing_changed(runtime, expected, secret=API_KEY):
    before = state(runtime)
    result = await runtime.ask("support", "module=Billing")
    assert not result.ok
    assert result.error == expected
    assert state(runtime) == before
    event = runtime.memory.ledger.latest(1)[0]
    assert event.kind is EventKind.ABANDONED and expected in event.describe()
    shown = result.error + event.describe() + " ".join(c.error for c in runtime.calls.records())
    assert secret not in shown
    return result


async def test_a_key_of_another_resource(azure):
    runtime = azure_runtime(azure.endpoint, key="0123456789abcdef0123456789abcdef")
    await _assert_one_line_and_nothing_changed(
        runtime,
        f"Azure OpenAI at {azure.endpoint} refused the key (HTTP 401): check that AZURE_OPENAI_API_KEY is a key "
        "of this resource",
        secret="0123456789abcdef0123456789abcdef",
    )


async def test_a_token_for_another_tenant(azure):
    token = wrong_token()

    async def credential() -> str:
        return token

    runtime = azure_runtime(azure.endpoint, key=None, credential=credential)
    await _assert_one_line_and_nothing_changed(
        runtime,
        f"Azure OpenAI at {azure.endpoint} refused the Entra ID token (HTTP 401): sign in to the resource's tenant "
        "(az login --tenant ...), or set AZURE_OPENAI_API_KEY",
        secret=token,
    )


async def test_an_identity_without_the_role(azure):
    azure.role_assigned = False

    async def credential() -> str:
        return azure.token

    runtime = azure_runtime(azure.endpoint, key=None, credential=credential)
    await _assert_one_line_and_nothing_changed(
        runtime,
        f"Azure OpenAI at {azure.endpoint} denied your Entra ID identity (HTTP 403): it needs the "
        "'Cognitive Services OpenAI User' role on the resource, and the resource's network rules must let you in",
        secret=azure.token,
    )


async def test_a_key_behind_the_resource_firewall(azure):
    runtime = azure_runtime(azure.endpoint)
    azure.enqueue(
        Canned(
            status=403,
            body={"error": {"code": "403", "message": "Access denied due to Virtual Network/Firewall rules."}},
        )
    )
    await _assert_one_line_and_nothing_changed(
        runtime,
        f"Azure OpenAI at {azure.endpoint} denied access (HTTP 403): check the resource's network rules "
        "(firewall, private endpoint) and AZURE_OPENAI_API_KEY",
    )


async def test_a_deployment_that_does_not_exist(azure):
    runtime = azure_runtime(azure.endpoint, deployment="gpt-4o-mini-typo")
    await _assert_one_line_and_nothing_changed(
        runtime,
        f"Azure OpenAI at {azure.endpoint} has no deployment 'gpt-4o-mini-typo' (HTTP 404): check --model / "
        "--writer-model / AZURE_OPENAI_DEPLOYMENT_NAME (the deployment's name, not the model's)",
    )


async def test_an_api_version_the_resource_does_not_serve(azure):
    runtime = azure_runtime(azure.endpoint, version="2023-01-01-nope")
    await _assert_one_line_and_nothing_changed(
        runtime,
        f"Azure OpenAI at {azure.endpoint} does not know this path (HTTP 404): check --azure-endpoint and "
        "--api-version (2023-01-01-nope)",
    )


async def test_a_prompt_the_content_filter_refuses(azure):
    runtime = azure_runtime(azure.endpoint)
    azure.enqueue(content_filtered("jailbreak"))
    await _assert_one_line_and_nothing_changed(
        runtime,
        "Azure OpenAI's content filter refused the prompt (HTTP 400, filtered: jailbreak): nothing was kept; "
        "rephrase the message, or check the deployment's content filter",
    )


async def test_a_reply_the_content_filter_stops(azure):
    runtime = azure_runtime(azure.endpoint)
    azure.enqueue(Canned(text="Here is how to", finish_reason="content_filter"))
    await _assert_one_line_and_nothing_changed(runtime, CONTENT_FILTERED)


async def test_rate_limiting_names_the_quota(azure):
    runtime = azure_runtime(azure.endpoint)
    azure.enqueue(
        Canned(
            status=429,
            body={
                "error": {
                    "code": "429",
                    "message": "Requests to the ChatCompletions_Create Operation have exceeded token rate limit",
                }
            },
            headers={"retry-after": "1"},
        )
    )
    await _assert_one_line_and_nothing_changed(
        runtime,
        f"Azure OpenAI at {azure.endpoint} is rate limiting (HTTP 429) after the client's retries: wait, or raise "
        "the deployment's tokens-per-minute quota",
    )


async def test_an_endpoint_nothing_listens_on():
    runtime = azure_runtime("http://127.0.0.1:9")
    result = await runtime.ask("support", "module=Billing")
    assert result.error == "cannot reach http://127.0.0.1:9: check --azure-endpoint / AZURE_OPENAI_ENDPOINT"
    assert state(runtime) == ((), [], [])


@pytest.mark.parametrize(
    "canned", [content_filtered("violence"), Canned(text="", finish_reason="content_filter")], ids=["prompt", "reply"]
)
async def test_a_filtered_writer_call_is_a_rejected_batch(azure, canned):
    runtime = azure_runtime(azure.endpoint, writer_format="json_schema")
    azure.state.responder = lambda body: canned if is_writer(body) else None
    result = await runtime.ask("support", "module=Billing")
    assert result.ok and runtime.memory.facts() == ()
    event = runtime.memory.ledger.latest(1)[0]
    assert "content filter" in event.describe() and "\n" not in event.describe()
    if canned.status == 200:
        assert event.kind is EventKind.REJECTED and event.reasons[0].code is ReasonCode.MALFORMED_OUTPUT
