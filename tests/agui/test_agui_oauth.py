"""`agent serve --ag-ui` as an OAuth resource server: the tokens file's [oauth] table (the tool server's), a person
named by their access tokens' `subject`, the test issuer on 127.0.0.1. A valid token runs the agent and streams it
to the end (every event an ag-ui-protocol event); hostile tokens and none are refused with the challenge pointing at
the RFC 9728 metadata; a person who may not see the run's agent reads no such run."""

from collections.abc import Iterator
from functools import partial

import httpx2
import pytest
from agui_procs import Model, agent_server, run_input, stream

from helpers.fake_providers import FakeProvider
from helpers.issuer import Issuer, hostile_cases, hostile_token
from helpers.servers import free_port

SCOPE = "agent:runs"
THREAD = "thread-oauth-1"


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Issuer, str]]:
    folder = tmp_path_factory.mktemp("agui-oauth")
    port = free_port()
    url = f"http://127.0.0.1:{port}/ag-ui"
    with Issuer() as issuer:
        tokens = folder / "people.toml"
        tokens.write_text(
            f'[oauth]\nissuer = "{issuer.url}"\nresource = "{url}"\nrequired_scopes = ["{SCOPE}"]\n'
            '[people.alice]\nsubject = "alice@example.com"\nagents = ["support*"]\n'
            '[people.bob]\nsubject = "bob@example.com"\nagents = ["billing*"]\n'
        )
        with (
            FakeProvider(responder=Model(gated=False)) as fake,
            agent_server(folder, fake.anthropic_url, "--tokens", str(tokens), port=port) as served_url,
        ):
            assert served_url == url
            yield issuer, url


def token(issuer: Issuer, url: str, sub: str = "alice@example.com", **changes: object) -> str:
    claims: dict[str, object] = {"sub": sub, "aud": url, "scope": SCOPE}
    claims.update(changes)
    return issuer.mint(**claims)  # type: ignore[arg-type]


def test_a_valid_access_token_runs_the_agent_and_another_person_reads_no_such_run(
    served: tuple[Issuer, str],
) -> None:
    issuer, url = served
    with httpx2.Client(timeout=60) as client:
        with stream(client, url, run_input(THREAD, "r1", "Refund A123"), token(issuer, url)) as run:
            events = run.to_end()
        assert events[0].type.value == "RUN_STARTED" and events[-1].type.value == "RUN_FINISHED"
        assert events[-1].outcome.type == "interrupt"  # the refund waits for a person: the run went that far
        bob = {"authorization": f"Bearer {token(issuer, url, sub='bob@example.com')}"}
        assert client.post(url, json=run_input(THREAD, "r2"), headers=bob).status_code == 404


@pytest.mark.parametrize(
    ("case", "status", "said"), hostile_cases(SCOPE, "no_such_person", "is no person of this server")
)
def test_a_hostile_token_is_refused_with_the_challenge(
    served: tuple[Issuer, str], case: str, status: int, said: str
) -> None:
    issuer, url = served
    hostile = hostile_token(case, partial(token, issuer, url), "http://127.0.0.1:1/ag-ui", "mallory@example.com")
    headers = {"authorization": f"Bearer {hostile}"} if hostile else {}
    response = httpx2.post(url, json=run_input("thread-hostile", "r1", "Refund A123"), headers=headers, timeout=30)
    assert response.status_code == status
    assert said in response.json()["error"]
    metadata = url.replace("/ag-ui", "/.well-known/oauth-protected-resource/ag-ui")
    assert response.headers["www-authenticate"].startswith(f'Bearer resource_metadata="{metadata}"')
    document = httpx2.get(metadata, timeout=30).json()  # never behind a token
    assert document["resource"] == url and document["authorization_servers"] == [issuer.url]


def test_nothing_was_started_by_a_refused_request(served: tuple[Issuer, str]) -> None:
    issuer, url = served
    alice = {"authorization": f"Bearer {token(issuer, url)}"}
    followed = httpx2.post(url, json=run_input("thread-hostile", "r9"), headers=alice, timeout=30)
    assert followed.status_code == 400  # no such thread: a follow without a message starts nothing
