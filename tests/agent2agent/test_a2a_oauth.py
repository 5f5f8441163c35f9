"""`agent serve --a2a` as an OAuth resource server, as `toolwire serve` is: the tokens file's [oauth] table, the
test issuer on 127.0.0.1 (tests/helpers/issuer.py). A valid access token sends, gets and cancels a task through
a2a-sdk's own client; hostile tokens (expired, another resource's, another issuer's, without the scope, of no agent)
and no token are refused as /mcp refuses them, with the challenge pointing at the RFC 9728 metadata; another
subject's task is no task of yours."""

import json
from collections.abc import Iterator
from functools import partial
from pathlib import Path

import anyio
import httpx
import pytest
from a2a.types import CancelTaskRequest, GetTaskRequest, TaskState

from agent2agent.a2a_model import tool_turns
from agent2agent.a2a_serve import ALICE, A2AServer
from agent2agent.test_a2a_server import a2a_client, said, send
from helpers.fake_providers import FakeProvider
from helpers.issuer import Issuer, hostile_cases, hostile_token
from helpers.polling import await_until
from helpers.servers import free_port

SCOPE = "agent:tasks"
JSONRPC = {"jsonrpc": "2.0", "id": 1, "method": "GetTask", "params": {"id": "run-a2a-x"}}
A2A_HEADERS = {"A2A-Version": "1.0", "Content-Type": "application/json"}


@pytest.fixture(scope="module")
def issuer() -> Iterator[Issuer]:
    with Issuer() as running:
        yield running


@pytest.fixture
def door(issuer: Issuer, tmp_path: Path) -> Iterator[A2AServer]:
    port = free_port()
    tokens = tmp_path / "tokens.toml"
    tokens.write_text(
        f'[oauth]\nissuer = "{issuer.url}"\nresource = "http://127.0.0.1:{port}/"\nrequired_scopes = ["{SCOPE}"]\n'
        f'token_url = "{issuer.token_url}"\n'
        f'[agents.alice]\ntoken = "{ALICE}"\nsubject = "client-alice"\ntools = ["*"]\n'
        '[agents.carol]\nsubject = "client-carol"\ntools = ["*"]\n'
    )
    with FakeProvider(tool_turns) as model:
        server = A2AServer(model.openai_url, tmp_path / "runs.db", tokens, tmp_path / "a2a.log").start(port)
        try:
            yield server
        finally:
            server.stop()


def metadata_url(door: A2AServer) -> str:
    return door.url + ".well-known/oauth-protected-resource"


def token(issuer: Issuer, door: A2AServer, sub: str = "client-alice", **changes: object) -> str:
    claims: dict[str, object] = {"sub": sub, "aud": door.url, "scope": f"openid {SCOPE}"}
    claims.update(changes)
    return issuer.mint(**claims)  # type: ignore[arg-type]


async def test_a_valid_access_token_sends_gets_and_cancels_with_the_a2a_sdk(
    issuer: Issuer, door: A2AServer, tmp_path: Path
) -> None:
    alice = token(issuer, door)
    async with a2a_client(door.url, alice) as client:
        task = await send(client, 'call shout {"text": "oauth"}')
        assert task.status.state == TaskState.TASK_STATE_COMPLETED, said(task)
        got = await client.get_task(GetTaskRequest(id=task.id))
        assert said(got) == "done: OAUTH"
        hold = tmp_path / "hold"
        held = await send(client, f"call hold {json.dumps({'path': str(hold)})}", now=True)
        await await_until(anyio.Path(f"{hold}.started").exists, "the hold tool to start", proc=door.proc)
        canceled = await client.cancel_task(CancelTaskRequest(id=held.id))
        assert canceled.status.state == TaskState.TASK_STATE_CANCELED
    async with a2a_client(door.url, ALICE) as client:  # the same agent's static token: the same caller, its tasks
        assert said(await client.get_task(GetTaskRequest(id=task.id))) == "done: OAUTH"
    carol = token(issuer, door, sub="client-carol")
    async with a2a_client(door.url, carol) as client:  # another subject, valid token: none of its tasks
        for call in (client.get_task(GetTaskRequest(id=task.id)), client.cancel_task(CancelTaskRequest(id=task.id))):
            with pytest.raises(Exception, match="of yours"):
                await call


async def test_the_card_and_the_metadata_say_how_to_get_a_token(issuer: Issuer, door: A2AServer) -> None:
    async with httpx.AsyncClient(timeout=30) as http:
        card = (await http.get(door.url + ".well-known/agent-card.json")).json()
        document = (await http.get(metadata_url(door))).json()  # never behind a token
    assert document["resource"] == door.url and document["authorization_servers"] == [issuer.url]
    assert document["scopes_supported"] == [SCOPE]
    oauth = card["securitySchemes"]["oauth2"]["oauth2SecurityScheme"]
    assert oauth["oauth2MetadataUrl"] == issuer.url + "/.well-known/oauth-authorization-server"
    assert oauth["flows"]["clientCredentials"]["scopes"] == {SCOPE: "required by this agent"}
    assert oauth["flows"]["clientCredentials"]["tokenUrl"] == issuer.token_url  # A2A requires it on the flow
    assert {"schemes": {"oauth2": {"list": [SCOPE]}}} in card["securityRequirements"]
    assert card["securitySchemes"]["bearer"]["httpAuthSecurityScheme"]["scheme"] == "Bearer"


@pytest.mark.parametrize(
    ("case", "status", "said"),
    [
        *hostile_cases(SCOPE, "no_such_agent", "is no agent of this server"),
        ("garbage", 401, "the bearer token is neither a token from the access config nor a well-formed JWT"),
    ],
)
async def test_a_hostile_token_is_refused_with_the_challenge(
    issuer: Issuer, door: A2AServer, case: str, status: int, said: str
) -> None:
    mint = partial(token, issuer, door)
    other = "http://127.0.0.1:1/other-agent/"
    hostile = "not-a-jwt" if case == "garbage" else hostile_token(case, mint, other, "client-mallory")
    headers = {**A2A_HEADERS, **({"Authorization": f"Bearer {hostile}"} if hostile else {})}
    async with httpx.AsyncClient(timeout=30) as http:
        response = await http.post(door.url, json=JSONRPC, headers=headers)
    assert response.status_code == status
    assert said in response.json()["error"]
    challenge = response.headers["www-authenticate"]
    assert challenge.startswith(f'Bearer resource_metadata="{metadata_url(door)}"')
    if case == "missing_scope":
        assert 'error="insufficient_scope"' in challenge and f'scope="{SCOPE}"' in challenge
    elif case in ("expired", "wrong_audience", "wrong_issuer", "garbage"):
        assert 'error="invalid_token"' in challenge
