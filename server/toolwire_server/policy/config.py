"""The server's one configuration file (`toolwire serve --config FILE`, checked by `serve --check FILE`): the tools
module, the agents and their grants (a static token, an OAuth subject, or both: one agent either way), the limits
and quotas, the shared store the limits count in, and the audit trail. Validated with pydantic; a mistake is one
line naming the key and what it allows. An example is in docs/hosting.md.

    tools = "examples.support_tools:registry"      # MODULE:ATTR, or path/to/file.py:ATTR (relative to this file)

    [agents.support-bot]
    token_env = "SUPPORT_TOKEN"                    # or token = "...", and/or subject = "<OAuth agent_claim>"
    tools = ["get_order", "issue_*"]

    [[limits]]                                     # every rule whose globs match a call applies to it
    agent = "support-bot"                          # glob over agent names [default: "*"]
    tool = "issue_*"                               # glob over tool names  [default: "*"]
    per_minute = 10                                # token bucket: refills per_minute/60 per second ...
    burst = 3                                      # ... holding at most this many [default: per_minute]
    in_flight = 2                                  # calls running at once
    per_day = 200                                  # calls per UTC day

    [[request_limits]]                             # HTTP: every POST of an agent, refused whole: 429, Retry-After
    agent = "*"
    per_minute = 600                               # burst = ... as above

    [store]                                        # where limits count; absent: in this process only
    postgres_env = "TOOLWIRE_LIMITS_DB"            # or postgres = "postgresql://..."

    [audit]
    sqlite = "audit.db"                            # relative to this file; or postgres / postgres_env
    arguments = true                               # keep the arguments (else their hash only) ...
    secret_fields = ["card_number", "password"]    # ... with these keys, at any depth, redacted
    retention_days = 30

    [discovery]                                    # what an MCP client is listed [default: every tool it may call]
    mode = "search"                                # search_tools and call_tool instead (discovery.py)

    [upstreams.time]                               # another MCP server's tools, re-served as time__<tool>
    command = "mcp-server-time"                    # stdio: the command, its args, and ...
    args = ["--local-timezone", "UTC"]
    env = { TZ = "UTC" }                           # ... the only variables it gets (beside PATH, HOME and the like)
    env_from = ["TIME_API_KEY"]                    # ... and these, copied from the host's environment

    [upstreams.search]
    url = "https://search.example.com/mcp"         # Streamable HTTP
    token_env = "SEARCH_TOKEN"                     # the host's credential, sent as a bearer token; never an agent's
    prefix = "web_"                                # the tools' names here: web_<tool> [default: "<NAME>__"]
    ping_s = 30                                    # pinged when silent this long; no answer: restarted [30]
"""

import os
import tomllib
from fnmatch import fnmatchcase
from pathlib import Path
from typing import Annotated, Any, Literal, Self, get_args, get_origin

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from toolwire_server.auth.access import Access, AccessConfigError, parse_access


class ConfigError(ValueError):
    """The configuration file is wrong; the message is one line saying where and what is allowed."""


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class AgentEntry(_Strict):
    token: Annotated[str, Field(min_length=1)] | None = None
    token_env: Annotated[str, Field(min_length=1)] | None = None
    subject: Annotated[str, Field(min_length=1)] | None = None
    tools: list[Annotated[str, Field(min_length=1)]]

    @model_validator(mode="after")
    def _one_token(self) -> Self:
        if self.token is not None and self.token_env is not None:
            raise ValueError("give token or token_env, not both")
        return self


class LimitRule(_Strict):
    agent: Annotated[str, Field(min_length=1)] = "*"
    tool: Annotated[str, Field(min_length=1)] = "*"
    per_minute: Annotated[float, Field(gt=0, le=1_000_000)] | None = None
    burst: Annotated[int, Field(ge=1, le=1_000_000)] | None = None
    in_flight: Annotated[int, Field(ge=1, le=100_000)] | None = None
    per_day: Annotated[int, Field(ge=1)] | None = None

    @model_validator(mode="after")
    def _limits_something(self) -> Self:
        if self.per_minute is None and self.in_flight is None and self.per_day is None:
            raise ValueError("a rule needs at least one of per_minute, in_flight, per_day")
        if self.burst is not None and self.per_minute is None:
            raise ValueError("burst is the bucket size of per_minute: set per_minute too")
        return self

    @property
    def bucket(self) -> float:
        """The token bucket's size: `burst`, else a minute's worth (at least 1)."""
        return float(self.burst) if self.burst is not None else max(1.0, float(self.per_minute or 1))

    def matches(self, agent: str, tool: str) -> bool:
        return fnmatchcase(agent, self.agent) and fnmatchcase(tool, self.tool)


class RequestLimit(_Strict):
    """HTTP: every POST an agent sends, whatever it asks; over the limit it is answered 429 with Retry-After."""

    agent: Annotated[str, Field(min_length=1)] = "*"
    per_minute: Annotated[float, Field(gt=0, le=1_000_000)]
    burst: Annotated[int, Field(ge=1, le=1_000_000)] | None = None

    def as_rule(self) -> LimitRule:
        return LimitRule(agent=self.agent, tool="*", per_minute=self.per_minute, burst=self.burst)


class StoreEntry(_Strict):
    postgres: Annotated[str, Field(pattern=r"^postgres(ql)?://")] | None = None
    postgres_env: Annotated[str, Field(min_length=1)] | None = None

    def url(self, where: str) -> str:
        return _database_url(self.postgres, self.postgres_env, where)


class AuditEntry(_Strict):
    sqlite: Annotated[str, Field(min_length=1)] | None = None
    postgres: Annotated[str, Field(pattern=r"^postgres(ql)?://")] | None = None
    postgres_env: Annotated[str, Field(min_length=1)] | None = None
    arguments: bool = False
    secret_fields: list[Annotated[str, Field(min_length=1)]] = []
    retention_days: Annotated[float, Field(gt=0)] = 30.0
    flush_s: Annotated[float, Field(gt=0, le=60)] = 0.5
    batch: Annotated[int, Field(ge=1, le=100_000)] = 500
    replica: Annotated[str, Field(min_length=1, max_length=64)] | None = None

    @model_validator(mode="after")
    def _one_database(self) -> Self:
        if sum(x is not None for x in (self.sqlite, self.postgres, self.postgres_env)) > 1:
            raise ValueError("give one of sqlite, postgres, postgres_env")
        return self


UPSTREAM_NAME = r"^[A-Za-z0-9][A-Za-z0-9_-]{0,31}$"
"""An upstream's name, and so its default prefix: tool-name characters every provider accepts."""


class UpstreamEntry(_Strict):
    """Another MCP server whose tools this one re-serves (upstreams/): a stdio command or an HTTP URL."""

    command: Annotated[str, Field(min_length=1)] | None = None
    args: list[str] = []
    env: dict[Annotated[str, Field(pattern=r"^[A-Za-z_][A-Za-z0-9_]*$")], str] = {}
    env_from: list[Annotated[str, Field(pattern=r"^[A-Za-z_][A-Za-z0-9_]*$")]] = []
    url: Annotated[str, Field(pattern=r"^https?://[^\s]+$")] | None = None
    token_env: Annotated[str, Field(pattern=r"^[A-Za-z_][A-Za-z0-9_]*$")] | None = None
    prefix: Annotated[str, Field(pattern=r"^[A-Za-z0-9_-]{1,32}$")] | None = None
    timeout_s: Annotated[float, Field(gt=0, le=3600)] = 30.0
    ping_s: Annotated[float, Field(ge=0.1, le=3600)] = 30.0
    """Silent this long, it is pinged; unanswered, it is restarted (upstreams/connection.py)."""

    @model_validator(mode="after")
    def _one_transport(self) -> Self:
        if (self.command is None) == (self.url is None):
            raise ValueError('give command = "..." (stdio) or url = "https://..." (HTTP), one of them')
        if self.url is not None and (self.args or self.env or self.env_from):
            raise ValueError("args, env and env_from are for a command; an HTTP upstream takes url and token_env")
        if self.command is not None and self.token_env is not None:
            raise ValueError("token_env is for an HTTP upstream (url); a command gets variables through env_from")
        return self


class DiscoveryEntry(_Strict):
    """How clients find the tools: listed ("list"), or by `search_tools` and `call_tool` ("search")."""

    mode: Literal["list", "search"] = "list"


class ServerConfig(_Strict):
    tools: Annotated[str, Field(pattern=r"^[^:\s]+:[A-Za-z_][A-Za-z0-9_]*$")] | None = None
    agents: dict[str, AgentEntry] = {}
    oauth: dict[str, Any] | None = None
    limits: list[LimitRule] = []
    request_limits: list[RequestLimit] = []
    store: StoreEntry | None = None
    audit: AuditEntry | None = None
    upstreams: dict[Annotated[str, Field(pattern=UPSTREAM_NAME)], UpstreamEntry] = {}
    discovery: DiscoveryEntry = DiscoveryEntry()


class LoadedConfig:
    """A checked configuration file and what it builds."""

    def __init__(self, config: ServerConfig, path: Path) -> None:
        self.config, self.path = config, path

    def target(self) -> str | None:
        """`tools`, a .py path made absolute against the file's folder."""
        tools = self.config.tools
        if tools is None:
            return None
        module, _, attr = tools.partition(":")
        return f"{(self.path.parent / module).resolve()}:{attr}" if module.endswith(".py") else tools

    def access(self, tokens: bool = True) -> Access | None:
        """The agents and their grants; with `tokens=False` (stdio, where no token is ever sent) an agent whose
        `token_env` variable is unset gets a placeholder no client can present, instead of an error."""
        if not self.config.agents:
            return None
        agents = {n: a.model_dump(exclude_none=True) for n, a in self.config.agents.items()}
        for name, entry in agents.items():
            if not tokens and "token_env" in entry and not os.environ.get(entry["token_env"]):
                entry["token"] = f"${entry.pop('token_env')} unset: {name} (stdio takes no tokens)"
        data: dict[str, Any] = {"agents": agents}
        if self.config.oauth is not None:
            data["oauth"] = self.config.oauth
        try:
            return parse_access(data, str(self.path))
        except AccessConfigError as exc:
            raise ConfigError(str(exc).splitlines()[0]) from exc

    def store_url(self) -> str | None:
        store = self.config.store
        return None if store is None else store.url(f"{self.path}: store")

    def audit_database(self) -> str | None:
        """The audit trail's SQLite path or PostgreSQL URL; None when there is no [audit] table."""
        audit = self.config.audit
        if audit is None:
            return None
        if audit.postgres is not None or audit.postgres_env is not None:
            return _database_url(audit.postgres, audit.postgres_env, f"{self.path}: audit")
        return str((self.path.parent / (audit.sqlite or "toolwire-audit.db")).resolve())

    def check_globs(self, tools: list[str], prefixes: list[str] = []) -> None:  # noqa: B006 (never changed)
        """Every limit rule must match an agent of the file (when it has agents) and a tool of the registry (or one
        under an upstream's `prefixes`, which come later): a rule that matches nothing limits nothing, and is a
        typo to say now."""
        agents = sorted(self.config.agents)
        named: list[tuple[str, int, str]] = [("limits", i, r.agent) for i, r in enumerate(self.config.limits)]
        named += [("request_limits", i, r.agent) for i, r in enumerate(self.config.request_limits)]
        for table, index, pattern in named:
            if agents and not any(fnmatchcase(a, pattern) for a in agents):
                where = f"{self.path}: {table}[{index}].agent = {pattern!r}"
                raise ConfigError(f"{where} matches no agent (agents: {', '.join(agents)})")
        for index, rule in enumerate(self.config.limits):
            where = f"{self.path}: limits[{index}]"
            later = any(rule.tool.startswith(p) or fnmatchcase(p, rule.tool) for p in prefixes)
            if not later and not any(fnmatchcase(t, rule.tool) for t in tools):
                listed = ", ".join(sorted(tools)) or "none"
                raise ConfigError(f"{where}.tool = {rule.tool!r} matches no tool of this server (its tools: {listed})")


def load_config(path: str | Path) -> LoadedConfig:
    file = Path(path)
    try:
        data = tomllib.loads(file.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ConfigError(f"{file}: cannot read it: {exc.strerror or exc}") from exc
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{file}: not valid TOML: {exc}") from exc
    try:
        config = ServerConfig.model_validate(data)
    except ValidationError as exc:
        raise ConfigError(f"{file}: {describe(exc)}") from None
    return LoadedConfig(config, file.resolve())


def describe(exc: ValidationError) -> str:
    """The first problem as `key: what is allowed`, e.g. `limits[0].per_minute: must be above 0 (got -5)`."""
    problems = exc.errors()
    first = problems[0]
    loc = [p for p in first["loc"] if not (isinstance(p, str) and p.startswith(("function-after", "str-constrained")))]
    kind = first["type"]
    if kind == "extra_forbidden":
        allowed = ", ".join(_fields_at(loc[:-1])) or "none"
        text = f"{_key(loc)}: unknown key; allowed here: {allowed}"
    elif kind == "missing":
        text = f"{_key(loc)}: required, and missing"
    else:
        got = first.get("input")
        shown = "" if isinstance(got, dict | list) else f" (got {got!r})"
        text = f"{_key(loc) or '(top level)'}: {_plain(first['msg'])}{shown}"
    more = len(problems) - 1
    return text + (f" (and {more} more problem{'s' * (more > 1)})" if more else "")


def _database_url(url: str | None, env: str | None, where: str) -> str:
    if url is not None:
        return url
    value = os.environ.get(env or "")
    if not env or not value:
        raise ConfigError(
            f'{where}: needs postgres = "postgresql://...", or postgres_env naming a variable that is set'
        )
    if not value.startswith(("postgresql://", "postgres://")):
        raise ConfigError(f"{where}: ${env} must be a postgresql:// URL")
    return value


def _key(loc: list[int | str]) -> str:
    text = ""
    for part in loc:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else str(part))
    return text


def _plain(message: str) -> str:
    message = message.removeprefix("Value error, ")
    return message[0].lower() + message[1:] if message else message


def _fields_at(loc: list[int | str]) -> list[str]:
    """The keys the model at `loc` allows (for an unknown-key message)."""
    model: Any = ServerConfig
    for part in loc:
        if isinstance(model, type) and issubclass(model, BaseModel):
            field = model.model_fields.get(str(part))
            if field is None:
                return []
            model = field.annotation
        elif get_origin(model) in (list, dict):
            model = get_args(model)[-1]
        model = _unwrap(model)
    model = _unwrap(model)
    return sorted(model.model_fields) if isinstance(model, type) and issubclass(model, BaseModel) else []


def _unwrap(annotation: Any) -> Any:
    """`X | None` and `Annotated[X, ...]` -> X."""
    while True:
        args = [a for a in get_args(annotation) if a is not type(None)]
        origin = get_origin(annotation)
        if origin in (list, dict, Literal) or not args:
            return annotation
        if origin is Annotated or len(args) == 1:
            annotation = args[0]
            continue
        return annotation
