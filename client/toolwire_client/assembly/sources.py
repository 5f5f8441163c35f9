"""From server specs to tool sources: the one place a stdio server's command and environment, an HTTP server's
token or OAuth client, and a shared connection's lease are put together."""

import os
import shlex

from toolwire_client.config import OAuthClientSpec, ServerSpec
from toolwire_client.tools.mcp_source import McpSource
from toolwire_client.tools.oauth_auth import ClientCredentials
from toolwire_client.tools.roots import RootMissing, resolved_roots
from toolwire_client.tools.server_env import described, server_environment
from toolwire_client.tools.server_stderr import LineSink, ServerStderr
from toolwire_client.tools.shared_connections import active_pool
from toolwire_client.tools.source import ToolServerFailed, ToolSource


def build_sources(servers: list[ServerSpec], stderr_sink: LineSink | None = None) -> list[ToolSource]:
    """One MCP client source per server. A stdio server starts with a minimal environment (tools/server_env.py:
    never toolwire's secrets nor provider keys) plus what its spec passes, and says which variables it got (names
    only) to `stderr_sink`; an HTTP server gets the bearer token from its token_env variable, or from
    its OAuth client credentials. A stdio server's stderr goes to `stderr_sink` (default: this process's stderr)."""
    sources: list[ToolSource] = []
    for i, server in enumerate(servers):
        if server.is_reference:
            raise ValueError(
                f"tool server '{server.name}' is only a name: a server of a servers file (`toolwire worker --servers "
                "FILE`, `toolwire resume RUN --servers FILE`) starts it"
            )
        token = os.environ.get(server.token_env) if server.token_env else None
        name = source_name(i, server)
        stderr = ServerStderr(name, stderr_sink) if stderr_sink else None
        env = None
        if server.command:
            env, missing = server_environment(server.env, server.pass_env)
            if stderr_sink is not None:
                stderr_sink(name, described(env, missing))
        auth = _client_credentials(server.oauth, server.url) if server.oauth else None
        source = McpSource(
            name,
            command=server.command,
            url=server.url,
            token=token,
            auth=auth,
            env=env,
            cwd=server.cwd,
            stderr=stderr,
            trusted=server.trust,
            use_instructions=server.instructions,
            sampling=server.sampling,
            roots=_roots(name, server),
        )
        pool = active_pool()  # runs sharing connections (tools/shared_connections.py)
        sources.append(pool.lease(source) if pool is not None and pool.shares(source) else source)
    return sources


def source_name(i: int, server: ServerSpec) -> str:
    """The name of the source of the `i`th server of a run: its own, or server1, server2, ..."""
    return server.name or f"server{i + 1}"


def risky_marks(servers: list[ServerSpec]) -> dict[str, frozenset[str]]:
    """Source name -> the tools its spec says always wait for approval (ServerSpec.risky), for the ToolBox."""
    return {source_name(i, server): frozenset(server.risky) for i, server in enumerate(servers) if server.risky}


def _roots(name: str, server: ServerSpec) -> list[str]:
    """The server's roots, each an existing folder (else the run does not start: one line naming it)."""
    try:
        return resolved_roots(server.roots)
    except RootMissing as exc:
        raise ToolServerFailed(name, server.url or shlex.join(server.command or []), "failed", str(exc)) from exc


def _client_credentials(spec: OAuthClientSpec, url: str | None) -> ClientCredentials:
    """An unset secret is reported when the token is first needed: the run's start fails with that one line."""

    return ClientCredentials(
        spec.token_url,
        spec.client_id,
        os.environ.get(spec.client_secret_env),
        scope=spec.scope,
        resource=spec.resource or url,
        audience=spec.audience,
        secret_name=f"env var {spec.client_secret_env} (the OAuth client secret)",
    )
