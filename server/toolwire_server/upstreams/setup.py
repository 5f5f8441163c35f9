"""The mounts a configuration file's `[upstreams.NAME]` tables ask for, checked now (a command that is not there, a
variable that is not set: one line naming the key) so `serve --check` finds what `serve` would."""

import os
import shutil
from pathlib import Path

from toolwire_server.policy.config import ConfigError, LoadedConfig, UpstreamEntry
from toolwire_server.tools.registry import Registry
from toolwire_server.upstreams.connection import Endpoint
from toolwire_server.upstreams.mount import UpstreamMount


def mount_upstreams(registry: Registry, loaded: LoadedConfig) -> list[UpstreamMount]:
    mounts = [_mount(registry, loaded, name, entry) for name, entry in loaded.config.upstreams.items()]
    for mount in mounts:  # no upstream's tool can be named as another's: no prefix begins another (or is it)
        others = [m for m in mounts if m is not mount and m.prefix.startswith(mount.prefix)]
        if others:
            name, other = mount.upstream.endpoint.name, others[0]
            raise ConfigError(
                f"{loaded.path}: upstreams: prefix {mount.prefix!r} of {name} is the start of {other.prefix!r} of "
                f"{other.upstream.endpoint.name} (a tool of one could be named as the other's: give each its own)"
            )
        taken = [n for n in registry.names() if n.startswith(mount.prefix)]
        if taken:
            raise ConfigError(f"{loaded.path}: upstreams: prefix {mount.prefix!r} is the start of tool {taken[0]!r}")
        _check_namespace(registry, loaded, mount, mounts)
    registry.mounts.extend(mounts)
    registry.resources.sources.extend(m.resources for m in mounts)
    return mounts


def _check_namespace(
    registry: Registry, loaded: LoadedConfig, mount: UpstreamMount, mounts: list[UpstreamMount]
) -> None:
    """No two upstreams share a resource namespace (`a_b` and `a-b` would), nor does one hold the host's URIs."""
    namespace = mount.resources.namespace
    twins = [m.upstream.endpoint.name for m in mounts if m is not mount and m.resources.namespace == namespace]
    if twins:
        name = mount.upstream.endpoint.name
        raise ConfigError(f"{loaded.path}: upstreams {name} and {twins[0]} would share resource URIs {namespace}...")
    own = [*registry.resources.static, *(str(t.template) for t in registry.resources.templates)]
    taken = [uri for uri in own if uri.startswith(namespace)]
    if taken:
        name = mount.upstream.endpoint.name
        raise ConfigError(f"{loaded.path}: upstreams.{name}: its resources ({namespace}...) would hide {taken[0]!r}")


def _mount(registry: Registry, loaded: LoadedConfig, name: str, entry: UpstreamEntry) -> UpstreamMount:
    where = f"{loaded.path}: upstreams.{name}"
    if entry.url is not None:
        token = _variable(entry.token_env, f"{where}.token_env") if entry.token_env else None
        endpoint = Endpoint(name, url=entry.url, token=token, ping_s=entry.ping_s)
    else:
        env = dict(entry.env)
        for variable in entry.env_from:
            env[variable] = _variable(variable, f"{where}.env_from")
        command = _command(entry.command or "", loaded.path.parent, where)
        endpoint = Endpoint(name, command=command, args=tuple(entry.args), env=env, ping_s=entry.ping_s)
    prefix = entry.prefix if entry.prefix is not None else f"{name}__"
    return UpstreamMount(registry, endpoint, prefix=prefix, timeout_s=entry.timeout_s)


def _variable(variable: str | None, where: str) -> str:
    value = os.environ.get(variable or "")
    if not value:
        raise ConfigError(f"{where}: ${variable} is not set (the upstream needs it; set it where the server runs)")
    return value


def _command(command: str, folder: Path, where: str) -> str:
    """A bare name is looked up on PATH; a path is relative to the configuration file's folder."""
    found = shutil.which(command) if os.sep not in command else None
    path = Path(found) if found else (folder / command)
    if not (path.is_file() and os.access(path, os.X_OK)):
        raise ConfigError(f"{where}.command = {command!r}: no such executable (a name on PATH, or a path)")
    return str(path.absolute())
