"""`toolwire serve --http --workers N`: one port served by N processes.

uvicorn's own supervisor does it: the parent binds the socket once and hands it to N spawned workers, which accept
from its one queue. Not SO_REUSEPORT sockets: there a worker that dies takes the connections queued on its socket
with it, and any program of the same user can bind the port beside them. Spawned, not forked: each worker imports
the registry afresh and builds the same app from the `ServeSpec` (a fork of a process that has loaded tools may
copy their threads and locks). The parent pings every worker; one that died or stopped answering is killed,
reported (a warning with its exit code) and replaced; one that fails before it serves stops them all, since a
replacement would fail the same way. SIGTERM or SIGINT stops every worker (each finishes its requests in flight),
then the parent. A worker whose parent is gone stops by itself, so a killed parent leaves nothing holding the port.

The kernel gives each connection to any worker, so a legacy session cannot find its process again: with N > 1 the
workers serve only stateless 2026-07-28 requests (replica_sessions.NoSessions)."""

import logging
import os
import signal
import sys
import threading
import time
from dataclasses import dataclass, field
from functools import partial

import uvicorn
from starlette.applications import Starlette
from uvicorn.config import STARTUP_FAILURE
from uvicorn.supervisors.multiprocess import Multiprocess

from toolwire_server.auth.access import Access, access_from_env, check_grants, load_access
from toolwire_server.limits import ServerLimits
from toolwire_server.policy.config import ConfigError, load_config
from toolwire_server.policy.setup import build_policy
from toolwire_server.tools.loading import load_registry
from toolwire_server.tools.registry import Registry
from toolwire_server.transports.http import http_app
from toolwire_server.transports.slow_clients import with_header_timeout
from toolwire_server.upstreams.setup import mount_upstreams

log = logging.getLogger("toolwire.server")

PARENT_CHECK_S = 1.0
"""How often a worker looks whether its parent is still there."""


@dataclass(frozen=True)
class ServeSpec:
    """What `toolwire serve --http` was asked to serve: enough for a fresh process to build the same app."""

    target: str
    tokens_file: str | None = None
    limits: ServerLimits = field(default_factory=ServerLimits)
    host: str = "127.0.0.1"
    port: int = 8000
    allowed_hosts: tuple[str, ...] = ()
    allowed_origins: tuple[str, ...] = ()
    isolate: bool = False
    isolate_workers: int | None = None
    replica: str | None = None
    workers: int = 1
    log_level: str = "WARNING"
    config_file: str | None = None
    """`serve --config FILE`: tools, agents, limits and audit from one file (policy/config.py)."""
    agent_tokens: bool = True
    """False on stdio, which takes no tokens: an agent's `token_env` may then be unset (policy/config.py)."""

    def load(self) -> tuple[Registry, Access | None]:
        """The registry (isolation applied, policy set) and the access config; raises the loaders' readable
        errors."""
        if self.config_file is not None:
            return self._load_config(self.config_file)
        registry = load_registry(self.target)
        access = load_access(self.tokens_file) if self.tokens_file else access_from_env()
        return self._prepare(registry, access), access

    def _load_config(self, path: str) -> tuple[Registry, Access | None]:
        loaded = load_config(path)
        target = loaded.target() or self.target
        if not target:
            raise ConfigError(f"{path}: tools: required (MODULE:ATTR of the registry), or give MODULE:ATTR to serve")
        access = loaded.access(tokens=self.agent_tokens)
        registry = load_registry(target)
        mount_upstreams(registry, loaded)
        registry = self._prepare(registry, access)
        loaded.check_globs(registry.names(), registry.prefixes())
        registry.policy = build_policy(loaded, processes=self.workers, replica=self.replica)
        registry.discovery = loaded.config.discovery.mode
        return registry, access

    def _prepare(self, registry: Registry, access: Access | None) -> Registry:
        if self.isolate:
            registry.isolate_all()
        if self.isolate_workers is not None:
            registry.workers.size = self.isolate_workers
        if access is not None:
            resources = registry.resources
            others = [*registry.prompts, *resources.static, *(str(t.template) for t in resources.templates)]
            namespaces = [source.namespace for source in resources.sources]  # an upstream's URIs, listed later
            check_grants(access, registry.names(), others, [*registry.prefixes(), *namespaces])
        return registry

    def app(self, registry: Registry, access: Access | None) -> Starlette:
        return http_app(
            registry,
            access=access,
            limits=self.limits,
            host=self.host,
            port=self.port,
            allowed_hosts=list(self.allowed_hosts) or None,
            allowed_origins=list(self.allowed_origins) or None,
            replica=self.replica,
            one_port_workers=self.workers,
        )


def serve_workers(spec: ServeSpec) -> bool:
    """Serve `spec` from `spec.workers` processes until SIGTERM/SIGINT; False if a worker failed to start."""
    config = _WorkerConfig(spec)
    supervisor = _Supervisor(config, sockets=[config.bind_socket()])
    supervisor.run()
    return not supervisor.failed_start


class _WorkerConfig(uvicorn.Config):
    """uvicorn's config as its supervisor pickles it to each worker. It carries the spec; the app and the protocol
    class (a class made at run time, which does not pickle) are made in the worker, when uvicorn loads them."""

    def __init__(self, spec: ServeSpec) -> None:
        super().__init__(
            partial(_worker_app, spec),
            factory=True,
            host=spec.host,
            port=spec.port,
            workers=spec.workers,
            log_level="warning",
            access_log=False,
        )
        self.spec = spec

    def load(self) -> None:
        self.http = with_header_timeout(self.spec.limits.header_timeout_s)
        super().load()


class _Supervisor(Multiprocess):
    """uvicorn's supervisor, saying at warning level which worker it replaced, and whether one failed to start."""

    failed_start = False

    def keep_subprocess_alive(self) -> None:
        before = list(self.processes)
        super().keep_subprocess_alive()  # kills, reaps and replaces the dead or unresponsive (or stops, see below)
        for old, new in zip(before, self.processes, strict=True):
            if new is not old:
                log.warning(
                    "worker process %s ended or stopped answering (%s); started %s in its place",
                    old.pid,
                    _how(old.exitcode),
                    new.pid,
                )
        if any(old.exitcode == STARTUP_FAILURE for old in before):
            self.failed_start = True  # uvicorn stops them all: a replacement would fail the same way


def _how(code: int | None) -> str:
    if code is None:
        return "still running"
    return f"killed by signal {-code}" if code < 0 else f"exit code {code}"


def _worker_app(spec: ServeSpec) -> Starlette:
    """In a worker: logging, tracing and the app, as the single-process `serve` sets them up."""
    from toolwire_otel.setup import configure_server_tracing

    logging.basicConfig(
        stream=sys.stderr, level=spec.log_level.upper(), format="%(asctime)s %(name)s %(levelname)s %(message)s"
    )
    _stop_with_parent()
    configure_server_tracing()
    try:
        registry, access = spec.load()
        return spec.app(registry, access)
    except Exception as exc:  # the parent loaded the same spec a moment ago; the files changed since
        log.error("worker process %d cannot start: %s", os.getpid(), exc)
        sys.exit(STARTUP_FAILURE)


def _stop_with_parent() -> None:
    """SIGTERM this worker (a clean stop) once the supervisor that started it is gone."""
    parent = os.getppid()

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(PARENT_CHECK_S)
        log.warning("worker process %d: its supervisor %d is gone; stopping", os.getpid(), parent)
        os.kill(os.getpid(), signal.SIGTERM)

    threading.Thread(target=watch, name="toolwire-parent-watch", daemon=True).start()
