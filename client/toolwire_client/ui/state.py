"""What the console's endpoints share while it runs, kept on `app.state.console`: its settings, the store, the
sessions, the fleet view and the runs resumed here."""

from dataclasses import dataclass, field

from starlette.requests import HTTPConnection

from toolwire_client.assembly.trusted_servers import ServerTrust, resume_trust
from toolwire_client.fleet.overview import FleetInfo, FleetView
from toolwire_client.store import SqlRunStore
from toolwire_client.ui.guard import Sessions
from toolwire_client.ui.people import Person
from toolwire_client.ui.resumes import LocalResumes


@dataclass(frozen=True)
class UiSettings:
    db: str | None
    host: str = "127.0.0.1"
    port: int = 8400
    people: dict[str, Person] | None = None
    """token -> Person, the tokens file's people (people.py); None: no login (loopback only)."""
    trust: ServerTrust = field(default_factory=lambda: resume_trust(None))
    """Which tool servers a run resumed here may start (as `toolwire resume --servers`)."""
    trace_url: str | None = None
    """A tracing backend's page of one trace, with `{trace_id}` in it."""
    allowed_hosts: tuple[str, ...] = ()
    allowed_origins: tuple[str, ...] = ()


class Console:
    """The console's state; `store` and `resumes` are set by the app's lifespan (app.py)."""

    store: SqlRunStore
    resumes: LocalResumes

    def __init__(self, settings: UiSettings) -> None:
        self.settings = settings
        self.sessions = Sessions(settings.people)
        self.fleet = FleetView(settings.db)

    async def fleet_info(self) -> FleetInfo | None:
        return await self.fleet.read(self.store)


def console_of(conn: HTTPConnection) -> Console:
    console: Console = conn.app.state.console
    return console
