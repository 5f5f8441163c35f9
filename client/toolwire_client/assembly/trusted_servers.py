"""Which tool servers a process starts for a run it did not start itself, and where it lets the run's secrets go.

A saved run is data: anybody who can write the run store (on a fleet, every submitter) could have written its
server specs, and a spec is a command to run, a URL to send a bearer token or an OAuth secret to, and the names of
variables to read. So a process rebuilding a saved run trusts only its own configuration:

- a fleet worker starts only the servers of its own servers file (`toolwire worker --servers FILE`), looked up by
  the names the run gives; a submitted run brings no command, URL, token variable, environment or base URL;
- `toolwire resume` (and the console's) rebuilds a configuration this user's toolwire saved and sealed (seal.py) as
  it is, and otherwise starts the servers of a servers file it is given (`--servers FILE`) in place of the saved
  ones, by name.

The same rule covers what waives a person's decision: trusting a server's annotations, lending it the model
(sampling), its roots, and which tools wait for approval. Whatever widens what runs without a person comes only
from a sealed configuration or the process's own servers file; what narrows comes from anywhere (a server's risky
tools are the saved ones and the file's, united; the saved `--risky` list and allow-list can only narrow). A run
that names anything else stops with a reason that says what was refused and what would be accepted."""

import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pydantic
from pydantic import BaseModel, ConfigDict

from toolwire_client.config import RunConfig, ServerSpec
from toolwire_client.store import seal

RUN_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.@-]{0,199}$")
"""A run id that may be put into a servers file's {run_id} (a path, a command's argument): no separator, no `..`."""


class Untrusted(ValueError):
    """A saved run's configuration asks for what this process will not do; the text says what and why."""


class ServersFile(BaseModel):
    """`[servers.NAME]` tables: each a stdio command or an HTTP URL, with its token variable or OAuth client, its
    env and pass_env, its cwd, and what the user grants it (trust, sampling, roots) or holds back (`risky`, tools
    that wait for approval); `{run_id}` in a command, env value or cwd is the run the server is started for."""

    model_config = ConfigDict(extra="forbid")

    servers: dict[str, ServerSpec]


def load_servers_file(path: str | Path) -> dict[str, ServerSpec]:
    """The servers a file names, by name; a mistake is a ValueError of one line naming the file and the key."""
    try:
        raw = tomllib.loads(Path(path).read_text())
    except OSError as exc:
        raise ValueError(f"servers file {path}: {exc.strerror or exc}") from exc
    except tomllib.TOMLDecodeError as exc:
        raise ValueError(f"servers file {path} is not TOML: {exc}") from exc
    try:
        parsed = ServersFile.model_validate(raw)
    except pydantic.ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(map(str, first["loc"])) or "the file"
        raise ValueError(
            f"servers file {path}: {where}: {first['msg']} (e.g. [servers.support] command = [...] or url = ...)"
        ) from exc
    found = {}
    for name, spec in parsed.servers.items():
        if spec.is_reference:
            raise ValueError(f'servers file {path}: servers.{name} needs command = [...] or url = "..."')
        found[name] = spec.model_copy(update={"name": name})
    return found


@dataclass(frozen=True)
class ServerTrust:
    """A process's own configuration: its servers file (may be empty) and whether it takes this user's seal."""

    servers: dict[str, ServerSpec] = field(default_factory=dict)
    source: str = "no servers file"
    """Where `servers` came from, for the messages."""
    takes_seal: bool = True
    """`resume`: yes; a fleet worker: no (a submitter's config is never its own)."""

    def specs_for(self, run_id: str, saved: dict[str, Any], config: RunConfig) -> list[ServerSpec]:
        """The servers to start for `run_id`, whose saved configuration is `saved` (parsed as `config`); raises
        Untrusted for anything this process did not configure itself. Every resume (CLI, console, fleet worker)
        takes its servers from here: the one place the seal rule is applied."""
        if self.takes_seal and seal.holds(run_id, saved):
            return [self._resolved(run_id, spec) if spec.is_reference else spec for spec in config.servers]
        if self.takes_seal and not self.servers:
            raise Untrusted(
                f"run {run_id}'s saved configuration does not carry this user's seal (it was changed in the run "
                "store, or saved by another user, machine or an older toolwire), so its tool servers are not started "
                f"here; name servers you trust: `toolwire resume {run_id} --servers FILE` (docs/security.md)"
            )
        if config.a2a_agents:
            urls = ", ".join(agent.url for agent in config.a2a_agents)
            raise Untrusted(
                f"run {run_id} calls the A2A agents {urls}, which {self._whose}; a saved run reaches an A2A agent "
                "only from this user's own sealed configuration (docs/a2a.md)"
            )
        if config.base_url is not None:
            raise Untrusted(
                f"run {run_id} asks for the model at {config.base_url}, which {self._whose}; a provider's base URL "
                "comes from this process's own settings (OPENAI_BASE_URL), so its key never goes anywhere new"
            )
        return [self._resolved(run_id, spec) for spec in config.servers]

    @property
    def _whose(self) -> str:
        return "this worker did not configure" if not self.takes_seal else "this user's toolwire did not save"

    def _resolved(self, run_id: str, spec: ServerSpec) -> ServerSpec:
        """This process's own server of the name `spec` gives: whatever else a saved spec says is not used."""
        name = spec.name or "(unnamed)"
        own = self.servers.get(name)
        if own is None:
            known = ", ".join(sorted(self.servers)) or "none"
            what = "names tool server" if spec.is_reference else "saved its own tool server"
            raise Untrusted(
                f"run {run_id} {what} '{name}', which is not in {self.source} (servers it has: {known}); a process "
                "starts only the tool servers of its own configuration (docs/security.md)"
            )
        if not RUN_ID.match(run_id) or ".." in run_id:
            raise Untrusted(f"run id {run_id!r} cannot name a tool server's files; start runs with toolwire")
        # trust, sampling and roots are the file's alone: an unsealed config (a store writer's edit, a submitter's
        # run) never waives an approval this process asks, nor lends it the model; its risky tools only add
        return own.model_copy(update={"risky": _united(own.risky, spec.risky)}).expand({"run_id": run_id})


def _united(first: list[str], second: list[str]) -> list[str]:
    return [*first, *(name for name in second if name not in first)]


def worker_trust(path: str | None) -> ServerTrust:
    """A worker's: only its servers file (none: it drives runs that need no tool server)."""
    if path is None:
        return ServerTrust(
            source="this worker's servers file (it was started without --servers FILE)", takes_seal=False
        )
    return ServerTrust(load_servers_file(path), source=f"this worker's servers file {path}", takes_seal=False)


def resume_trust(path: str | None) -> ServerTrust:
    """`resume`'s: this user's seal, and the servers file it is given."""
    if path is None:
        return ServerTrust(source="a servers file (none given: `toolwire resume RUN --servers FILE`)")
    return ServerTrust(load_servers_file(path), source=f"the servers file {path}")
