"""Who may call what: bearer tokens map to an agent and the glob patterns of the tools it may use.

Config (TOML or JSON file, or the same JSON in the env var TOOLWIRE_TOKENS):

    [agents.support]
    token = "tok-support"            # or token_env = "SUPPORT_TOKEN" to keep the secret out of the file
    tools = ["get_order", "search_*"]
"""

import hmac
import json
import os
import tomllib
from dataclasses import dataclass
from fnmatch import fnmatchcase
from pathlib import Path
from typing import Any

TOKENS_ENV = "TOOLWIRE_TOKENS"


class AccessConfigError(ValueError):
    """The access config is malformed; the message says where and what a correct entry looks like."""


@dataclass(frozen=True)
class Grant:
    agent: str
    patterns: tuple[str, ...]

    def allows(self, tool: str) -> bool:
        return any(fnmatchcase(tool, pattern) for pattern in self.patterns)


ALL_TOOLS = Grant(agent="local", patterns=("*",))
"""The grant on stdio without `--agent`: the launching process is the trust boundary."""


@dataclass(frozen=True)
class Access:
    grants: dict[str, Grant]
    """token -> grant"""

    def grant_for_token(self, token: str) -> Grant | None:
        found = None
        for known, grant in self.grants.items():  # compare against every token: no early exit to time
            if hmac.compare_digest(known.encode(), token.encode()):
                found = grant
        return found

    def grant_for_agent(self, agent: str) -> Grant:
        for grant in self.grants.values():
            if grant.agent == agent:
                return grant
        known = ", ".join(sorted(g.agent for g in self.grants.values())) or "(none)"
        raise AccessConfigError(f"no agent named '{agent}' in the access config; agents: {known}")


_EXAMPLE = '[agents.support]\ntoken = "..."\ntools = ["get_order", "search_*"]'


def parse_access(data: dict[str, Any], origin: str) -> Access:
    agents = data.get("agents")
    if not isinstance(agents, dict) or not agents:
        raise AccessConfigError(f"{origin}: expected a table 'agents'. A correct entry looks like:\n{_EXAMPLE}")
    grants: dict[str, Grant] = {}
    for agent, entry in agents.items():
        if not isinstance(entry, dict):
            raise AccessConfigError(f"{origin}: agents.{agent} must be a table. Example:\n{_EXAMPLE}")
        token = entry.get("token")
        if token is None and "token_env" in entry:
            token = os.environ.get(str(entry["token_env"]))
            if not token:
                raise AccessConfigError(f"{origin}: agents.{agent}: env var {entry['token_env']} is unset or empty")
        tools = entry.get("tools")
        if not isinstance(token, str) or not token:
            raise AccessConfigError(f"{origin}: agents.{agent} needs a non-empty 'token'. Example:\n{_EXAMPLE}")
        if not isinstance(tools, list) or not all(isinstance(t, str) for t in tools):
            raise AccessConfigError(
                f"{origin}: agents.{agent}.tools must be a list of glob patterns. Example:\n{_EXAMPLE}"
            )
        if token in grants:
            raise AccessConfigError(f"{origin}: agents.{agent} reuses the token of agent '{grants[token].agent}'")
        grants[token] = Grant(agent=str(agent), patterns=tuple(tools))
    return Access(grants)


def load_access(path: str | Path) -> Access:
    file = Path(path)
    text = file.read_text(encoding="utf-8")
    try:
        data = json.loads(text) if file.suffix == ".json" else tomllib.loads(text)
    except (json.JSONDecodeError, tomllib.TOMLDecodeError) as exc:
        raise AccessConfigError(f"{file}: not valid {'JSON' if file.suffix == '.json' else 'TOML'}: {exc}") from exc
    return parse_access(data, str(file))


def access_from_env() -> Access | None:
    raw = os.environ.get(TOKENS_ENV)
    if not raw:
        return None
    try:
        data = json.loads(raw)
    except json.JSONDecodeError as exc:
        raise AccessConfigError(f"${TOKENS_ENV}: not valid JSON: {exc}") from exc
    return parse_access(data, f"${TOKENS_ENV}")
