"""The A2A server's ASGI app: the Agent Card at /.well-known/agent-card.json (public, as A2A wants it), JSON-RPC at
/ (the A2A 1.0 method names and the 0.3 ones, message/send ...) behind the bearer tokens of the tool server's tokens
file and its OAuth access tokens (toolwire_shared.oauth.callers), and the run store and this process's drivers for
as long as it serves."""

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from urllib.parse import urlsplit, urlunsplit

import anyio
from a2a.server.routes import create_agent_card_routes, create_jsonrpc_routes
from a2a.types import (
    AgentCapabilities,
    AgentCard,
    AgentInterface,
    AgentSkill,
    ClientCredentialsOAuthFlow,
    HTTPAuthSecurityScheme,
    OAuth2SecurityScheme,
    OAuthFlows,
    SecurityRequirement,
    SecurityScheme,
    StringList,
)
from a2a.utils.constants import AGENT_CARD_WELL_KNOWN_PATH
from starlette.applications import Starlette
from starlette.authentication import AuthCredentials, SimpleUser
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Receive, Scope, Send

from toolwire_client._version import __version__
from toolwire_client.a2a.door import RunDoor
from toolwire_client.a2a.drivers import Drivers
from toolwire_client.a2a.fleet_drivers import FleetDrivers
from toolwire_client.a2a.tasks import RUN_PREFIX
from toolwire_client.assembly.trusted_servers import ServerTrust
from toolwire_client.config import RunConfig
from toolwire_client.fleet.door import FleetDoor
from toolwire_client.store import RunAlreadyClaimed, SqlRunStore, claim_owner, open_store
from toolwire_client.store.claims import LEASE_S
from toolwire_shared.host_origin import HostOriginRule, request_headers
from toolwire_shared.oauth.callers import CallerAuth, Callers
from toolwire_shared.oauth.resource import metadata_url
from toolwire_shared.oauth.settings import OAuthSettings

BEARER, OAUTH = "bearer", "oauth2"
OAUTH_SERVER_METADATA = "/.well-known/oauth-authorization-server"


@dataclass(frozen=True)
class Served:
    """What `agent serve --a2a` serves: the agent's config, where its runs are, who may call, how it is named."""

    config: RunConfig
    db: str | None
    url: str
    """Where clients reach it (the card's interface URL)."""
    callers: Callers[str] | None
    """The tokens file's agents by bearer token (and OAuth subject, with its [oauth] table); None: no login
    (loopback only)."""
    trust: ServerTrust
    description: str
    host: str = "127.0.0.1"
    port: int = 8410
    """Where it listens: the Host/Origin rule's (toolwire_shared/host_origin.py)."""
    fleet: bool = False
    """Runs driven by the worker fleet (`--fleet`): the door submits, wakes and cancels, and only reads the store."""


def agent_card(served: Served) -> AgentCard:
    """One skill, the agent's task: what it is for, and that a task may pause for a person (input-required)."""
    config = served.config
    card = AgentCard(
        name=config.name,
        description=served.description,
        version=__version__,
        supported_interfaces=[AgentInterface(url=served.url, protocol_binding="JSONRPC", protocol_version="1.0")],
        capabilities=AgentCapabilities(streaming=True),
        default_input_modes=["text/plain", "application/json"],
        default_output_modes=["text/plain"],
        skills=[
            AgentSkill(
                id="run",
                name=config.name,
                description=served.description + " A task may wait for a person (input-required): reply on it.",
                tags=["toolwire"],
            )
        ],
    )
    if served.callers is not None:
        card.security_schemes[BEARER].CopyFrom(
            SecurityScheme(http_auth_security_scheme=HTTPAuthSecurityScheme(scheme="Bearer"))
        )
        card.security_requirements.append(SecurityRequirement(schemes={BEARER: StringList()}))
        if served.callers.oauth is not None:
            oauth_scheme(card, served.callers.oauth)
    return card


def oauth_scheme(card: AgentCard, settings: OAuthSettings) -> None:
    """The [oauth] table on the card: an OAuth 2.0 scheme whose tokens come from the issuer (its `token_url`, which
    the A2A card's client-credentials flow requires: set it in [oauth]; the issuer's RFC 8414 metadata names it too)
    for this door's resource, with the required scopes; either scheme lets a caller in."""
    scopes = {scope: "required by this agent" for scope in settings.required_scopes}
    said = (
        f"An access token from {settings.issuer} for the resource {settings.resource} (the token endpoint is in the "
        f"issuer's metadata; this agent's is at {metadata_url(settings.resource)})."
    )
    flow = ClientCredentialsOAuthFlow(scopes=scopes, token_url=settings.token_url or "")
    flows = OAuthFlows(client_credentials=flow)
    scheme = OAuth2SecurityScheme(description=said, flows=flows, oauth2_metadata_url=issuer_metadata(settings.issuer))
    card.security_schemes[OAUTH].CopyFrom(SecurityScheme(oauth2_security_scheme=scheme))
    card.security_requirements.append(SecurityRequirement(schemes={OAUTH: StringList(list=list(scopes))}))


def issuer_metadata(issuer: str) -> str:
    """Where RFC 8414 §3.1 puts an authorization server's metadata: the well-known path before the issuer's path."""
    parts = urlsplit(issuer)
    return urlunsplit((parts.scheme, parts.netloc, OAUTH_SERVER_METADATA + parts.path.rstrip("/"), "", ""))


class CallerGate:
    """Every request first passes the tool server's Host/Origin rule (against DNS rebinding: 421/403); the card and
    the OAuth metadata are public; every other request carries a bearer token of the tokens file or an OAuth access
    token of one of its agents (else 401/403, as the tool server answers), whose agent is the caller."""

    def __init__(self, app: ASGIApp, callers: Callers[str] | None, name: str, rule: HostOriginRule) -> None:
        self.app, self.rule = app, rule
        self.auth = CallerAuth(callers, name, "agent") if callers is not None else None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            refusal = self.rule.check(*request_headers(scope))
            if refusal is not None:
                await JSONResponse({"error": refusal.message}, refusal.status)(scope, receive, send)
                return
        if scope["type"] != "http" or self.auth is None or scope["path"] == AGENT_CARD_WELL_KNOWN_PATH:
            await self.app(scope, receive, send)
            return
        if await self.auth.metadata(scope, send):
            return
        agent = await self.auth.identify(scope, receive, send)
        if agent is None:
            return
        scope["user"], scope["auth"] = SimpleUser(agent), AuthCredentials(["authenticated"])
        await self.app(scope, receive, send)


def build_app(served: Served) -> ASGIApp:
    card = agent_card(served)
    door = RunDoor(card)

    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        store = await open_store(served.db)
        fleet = await FleetDoor(served.db, store, served.config).open() if served.fleet else None
        try:
            async with anyio.create_task_group() as group:
                if fleet is not None:  # the workers drive, recover and take over every run
                    door.open(store, FleetDrivers(store, fleet, group), served.db)
                else:
                    door.open(store, Drivers(store, served.config, served.trust, group), served.db)
                    group.start_soon(pick_up, store, door)
                yield
                group.cancel_scope.cancel()  # runs driven here stay as last saved (`running`): picked up next start
        finally:
            if fleet is not None:
                fleet.close()
            await store.aclose()

    routes = [*create_agent_card_routes(card), *create_jsonrpc_routes(door, "/", enable_v0_3_compat=True)]
    rule = HostOriginRule(served.host, served.port)
    app = Starlette(routes=routes, lifespan=lifespan)
    gate = CallerGate(app, served.callers, served.config.name, rule)
    if gate.auth is not None:
        gate.auth.refresh_keys_while(app)
    return gate


async def pick_up(store: SqlRunStore, door: RunDoor) -> None:
    """Runs of this door a killed server left `running`, driven on here once no live lease holds them (at the start,
    then every half lease): one never driven (no step, no call) starts afresh; another is resumed, settling a call the
    kill cut off as `toolwire resume` does."""
    while True:
        for summary in await store.list_runs(limit=500):
            run_id = summary.run_id
            mine = run_id.startswith(RUN_PREFIX) and summary.status == "running"
            if mine and not door.drivers.driving(run_id) and await _unheld(store, run_id):
                state = await store.load(run_id)
                if not state.steps and not state.pending:
                    door.drivers.start(state)
                else:
                    door.drivers.resume(run_id)
        await anyio.sleep(LEASE_S / 2)


async def _unheld(store: SqlRunStore, run_id: str) -> bool:
    """No live lease holds the run (free, run out, or its holder's process is gone): probed by taking it and letting
    it go at once (the driver that then takes it decides, as ever)."""
    owner = claim_owner()
    try:
        await store.claim(run_id, owner)
    except RunAlreadyClaimed:
        return False
    await store.release(run_id, owner)
    return True
