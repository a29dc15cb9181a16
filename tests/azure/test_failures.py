"""Each Azure OpenAI failure is one line naming what to set or check; facts and histories stay as
they were, and neither the key nor a token shows. Against the loopback server's Azure answers."""

import httpx2 as httpx  # the HTTP client the openai SDK 3.x is built on
import openai
import pytest

from tests.azure.helpers import azure_runtime
from tests.live.helpers import is_writer
from tests.support.azure_server import API_KEY, TOKEN, content_filtered
from tests.support.openai_server import Canned
from workbench.memory import EventKind, ReasonCode
from workbench.runtime.azure import SignIn
from workbench.runtime.failures import CONTENT_FILTERED, explain_failure

OTHER_KEY = "0123456789abcdef0123456789abcdef"
OTHER_TENANT_TOKEN = "eyJ0eXAiOiJKV1QifQ.eyJ3cm9uZyI6InRlbmFudCJ9.c2lnbmF0dXJl"
FIREWALL = Canned(
    status=403, body={"error": {"code": "403", "message": "Access denied due to Virtual Network/Firewall rules."}}
)
RATE_LIMITED = Canned(
    status=429,
    body={
        "error": {
            "code": "429",
            "message": "Requests to the ChatCompletions_Create Operation have exceeded token rate limit",
        }
    },
    headers={"retry-after": "1"},
)

# (name, how the runtime signs in and what it asks for, the server's answer, the one line)
FAILURES = [
    (
        "a key of another resource",
        {"key": OTHER_KEY},
        None,
        "Azure OpenAI at {endpoint} refused the key (HTTP 401): check that AZURE_OPENAI_API_KEY is a key of this resource",
    ),
    (
        "a token for another tenant",
        {"key": None, "token": OTHER_TENANT_TOKEN},
        None,
        "Azure OpenAI at {endpoint} refused the Entra ID token (HTTP 401): sign in to the resource's tenant "
        "(az login --tenant ...), or set AZURE_OPENAI_API_KEY",
    ),
    (
        "an identity without the role",
        {"key": None, "token": TOKEN, "role_assigned": False},
        None,
        "Azure OpenAI at {endpoint} denied your Entra ID identity (HTTP 403): it needs the 'Cognitive Services "
        "OpenAI User' role on the resource, and the resource's network rules must let you in",
    ),
    (
        "a key behind the resource firewall",
        {},
        FIREWALL,
        "Azure OpenAI at {endpoint} denied access (HTTP 403): check the resource's network rules (firewall, private "
        "endpoint) and AZURE_OPENAI_API_KEY",
    ),
    (
        "a deployment that does not exist",
        {"deployment": "gpt-4o-mini-typo"},
        None,
        'Azure OpenAI at {endpoint} has no deployment "gpt-4o-mini-typo" (HTTP 404): check --model / --writer-model '
        "/ AZURE_OPENAI_DEPLOYMENT_NAME (the deployment's name, not the model's)",
    ),
    (
        "an api version the resource does not serve",
        {"version": "2023-01-01-nope"},
        None,
        "Azure OpenAI at {endpoint} does not know this path (HTTP 404): check --azure-endpoint and --api-version "
        "(2023-01-01-nope)",
    ),
    (
        "a prompt the content filter refuses",
        {},
        content_filtered("jailbreak"),
        "Azure OpenAI's content filter refused the prompt (HTTP 400, filtered: jailbreak): nothing was kept; "
        "rephrase the message, or check the deployment's content filter",
    ),
    (
        "a reply the content filter stops",
        {},
        Canned(text="Here is how to", finish_reason="content_filter"),
        CONTENT_FILTERED,
    ),
    (
        "rate limiting",
        {},
        RATE_LIMITED,
        "Azure OpenAI at {endpoint} is rate limiting (HTTP 429) after the client's retries: wait, or raise the "
        "deployment's tokens-per-minute quota",
    ),
]


def state(runtime):
    return (
        runtime.memory.facts(),
        [m.text for m in runtime.history("support")],
        [m.text for m in runtime.history("logs")],
    )


@pytest.mark.parametrize(("name", "setup", "answer", "line"), FAILURES, ids=[f[0] for f in FAILURES])
async def test_each_failure_is_one_line_and_changes_nothing(azure, name, setup, answer, line):
    setup = dict(setup)
    token = setup.pop("token", None)
    azure.role_assigned = setup.pop("role_assigned", True)

    async def credential() -> str:
        return token

    runtime = azure_runtime(azure.endpoint, credential=credential if token else None, **setup)
    if answer is not None:  # a working call first, so there is something to keep
        assert (await runtime.ask("logs", "module=Reporting")).ok
        azure.enqueue(answer)
    before = state(runtime)
    result = await runtime.ask("support", "module=Billing")
    assert not result.ok and result.error == line.format(endpoint=azure.endpoint)
    assert state(runtime) == before
    event = runtime.memory.ledger.latest(1)[0]
    assert event.kind is EventKind.ABANDONED and result.error in event.describe()
    shown = result.error + event.describe() + " ".join(c.error for c in runtime.calls.records())
    assert not any(secret in shown for secret in (API_KEY, OTHER_KEY, TOKEN, OTHER_TENANT_TOKEN))
    if answer is not None:
        assert (await runtime.ask("support", "module=Billing")).ok  # and the next turn works


async def test_an_endpoint_nothing_listens_on():
    runtime = azure_runtime("http://127.0.0.1:9")
    result = await runtime.ask("support", "module=Billing")
    assert result.error == "cannot reach http://127.0.0.1:9: check --azure-endpoint / AZURE_OPENAI_ENDPOINT"
    assert state(runtime) == ((), [], [])


@pytest.mark.parametrize(
    "answer", [content_filtered("violence"), Canned(text="", finish_reason="content_filter")], ids=["prompt", "reply"]
)
async def test_a_filtered_writer_call_is_a_batch_that_changes_nothing(azure, answer):
    runtime = azure_runtime(azure.endpoint, writer_format="json_schema")
    azure.state.responder = lambda body: answer if is_writer(body) else None
    result = await runtime.ask("support", "module=Billing")
    assert result.ok and runtime.memory.facts() == ()
    event = runtime.memory.ledger.latest(1)[0]
    assert "content filter" in event.describe() and "\n" not in event.describe()
    if answer.status == 200:
        assert event.kind is EventKind.REJECTED and event.reasons[0].code is ReasonCode.MALFORMED_OUTPUT


@pytest.mark.parametrize("token", [None, TOKEN], ids=["key", "Entra ID"])
async def test_a_refused_writer_call_names_the_credential_the_runtime_was_built_with(azure, token):
    async def credential() -> str:
        return TOKEN

    runtime = azure_runtime(azure.endpoint, key=None if token else API_KEY, credential=credential if token else None)
    azure.state.responder = lambda body: FIREWALL if is_writer(body) else None
    result = await runtime.ask("support", "module=Billing")
    assert result.ok and runtime.memory.facts() == ()
    event = runtime.memory.ledger.latest(1)[0]
    refusal = FAILURES[2 if token else 3][3].format(endpoint=azure.endpoint)
    assert event.kind is EventKind.ABANDONED and f"the writer call failed: {refusal}" in event.describe()


async def test_an_error_that_echoes_the_key_or_a_token_shows_neither(azure):
    runtime = azure_runtime(azure.endpoint)
    echo = f"header api-key {API_KEY} and Authorization: Bearer {TOKEN} are not accepted by this gateway"
    azure.enqueue(Canned(status=400, body={"error": {"code": "BadRequest", "message": echo}}))
    result = await runtime.ask("support", "module=Billing")
    assert result.error.startswith(f"{azure.endpoint} rejected the request (HTTP 400): ")
    assert "[key hidden]" in result.error and API_KEY not in result.error and TOKEN not in result.error


RESOURCE = "https://contoso.openai.azure.com"
REFUSED = {
    (401, SignIn.KEY): FAILURES[0][3],
    (401, SignIn.ENTRA_ID): FAILURES[1][3],
    (403, SignIn.ENTRA_ID): FAILURES[2][3],
    (403, SignIn.KEY): FAILURES[3][3],
    (401, None): "Azure OpenAI at {endpoint} refused the credential (HTTP 401): check that AZURE_OPENAI_API_KEY is a "
    "key of this resource, or without a key, sign in to the resource's tenant (az login --tenant ...)",
    (403, None): "Azure OpenAI at {endpoint} denied access (HTTP 403): check the resource's network rules (firewall, "
    "private endpoint), and AZURE_OPENAI_API_KEY, or without a key, the 'Cognitive Services OpenAI User' role of "
    "your Entra ID identity",
}
# What a failed request may carry: openai 3.60 and later leave no credential on it; earlier ones left the
# one sent, which may be either kind whatever the configuration says (a proxy's, a default header).
HEADERS = {"none": {}, "api-key": {"api-key": API_KEY}, "bearer": {"Authorization": f"Bearer {TOKEN}"}}


@pytest.mark.parametrize("headers", HEADERS.values(), ids=HEADERS.keys())
@pytest.mark.parametrize(("status", "sign_in"), REFUSED.keys(), ids=[f"{s}-{k}" for s, k in REFUSED])
def test_a_refusal_is_read_by_the_configured_credential_not_the_request(status, sign_in, headers):
    url = f"{RESOURCE}/openai/deployments/gpt-4o-mini/chat/completions?api-version=2024-10-21"
    response = httpx.Response(status, request=httpx.Request("POST", url, headers=headers))
    error = (openai.AuthenticationError if status == 401 else openai.PermissionDeniedError)(
        f"Error code: {status}", response=response, body={"code": str(status), "message": "refused"}
    )
    line = explain_failure(error, base_url=RESOURCE, secrets=(API_KEY,), sign_in=sign_in)
    assert line == REFUSED[status, sign_in].format(endpoint=RESOURCE)
    assert API_KEY not in line and TOKEN not in line
