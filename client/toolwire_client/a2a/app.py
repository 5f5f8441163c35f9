"""The A2A server's ASGI app: the Agent Card at /.well-known/agent-card.json (public, as A2A wants it), JSON-RPC at
/ (the A2A 1.0 method names and the 0.3 ones, message/send ...) behind the bearer tokens of the tool server's tokens
file, and the run store and this process's drivers for as long as it serves."""

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass

import anyio
from a2a.server.routes import create_agent_card_routes, create_jsonrpc_routes
from a2a.types import (
    AgentCapabilities,
    AgentCard,
    AgentInterface,
    AgentSkill,
    HTTPAuthSecurityScheme,
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
from toolwire_shared.tokens import find_token

BEARER = "bearer"


@dataclass(frozen=True)
class Served:
    """What `agent serve --a2a` serves: the agent's config, where its runs are, who may call, how it is named."""

    config: RunConfig
    db: str | None
    url: str
    """Where clients reach it (the card's interface URL)."""
    tokens: dict[str, str] | None
    """token -> agent name of the tokens file; None: no login (loopback only)."""
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
    if served.tokens is not None:
        card.security_schemes[BEARER].CopyFrom(
            SecurityScheme(http_auth_security_scheme=HTTPAuthSecurityScheme(scheme="Bearer"))
        )
        card.security_requirements.append(SecurityRequirement(schemes={BEARER: StringList()}))
    return card


class BearerGate:
    """Every request first passes the tool server's Host/Origin rule (against DNS rebinding: 421/403); every request
    but the card's carries a token of the tokens file (else 401), whose agent is the caller."""

    def __init__(self, app: ASGIApp, tokens: dict[str, str] | None, rule: HostOriginRule) -> None:
        self.app, self.tokens, self.rule = app, tokens, rule

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            refusal = self.rule.check(*request_headers(scope))
            if refusal is not None:
                await JSONResponse({"error": refusal.message}, refusal.status)(scope, receive, send)
                return
        if scope["type"] != "http" or self.tokens is None or scope["path"] == AGENT_CARD_WELL_KNOWN_PATH:
            await self.app(scope, receive, send)
            return
        header = dict(scope["headers"]).get(b"authorization", b"").decode("latin-1")
        scheme, _, token = header.partition(" ")
        agent = find_token(self.tokens, token.strip()) if scheme.lower() == "bearer" and token.strip() else None
        if agent is None:
            why = "a wrong bearer token" if header else "no bearer token"
            body = {"error": f"unauthorized: {why}; send Authorization: Bearer TOKEN (a token of the tokens file)"}
            await JSONResponse(body, 401, {"WWW-Authenticate": "Bearer"})(scope, receive, send)
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
    return BearerGate(Starlette(routes=routes, lifespan=lifespan), served.tokens, rule)


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
