"""The tokens file both the tool server (`toolwire serve --tokens`) and the run console (`toolwire ui --tokens`) read:
a TOML or JSON file, or the same JSON in $TOOLWIRE_TOKENS, whose `[agents.NAME]` tables hold a bearer `token` (or
`token_env`, the variable holding it). The server adds grants and OAuth on top (toolwire_server.auth.access); the
console reads the file's people (toolwire_client.ui.people), and the agents' tokens only to refuse them to a person.
Tokens are compared in constant time, against every known token."""

import hmac
import json
import os
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any, TypeVar

TOKENS_ENV = "TOOLWIRE_TOKENS"
EXAMPLE = '[agents.support]\ntoken = "..."\ntools = ["get_order", "search_*"]'

T = TypeVar("T")


class AccessConfigError(ValueError):
    """The access config is malformed; the message says where and what a correct entry looks like."""


def read_config(path: str | Path) -> tuple[dict[str, Any], str]:
    """The file's data and its name, for messages."""
    file = Path(path)
    text = file.read_text(encoding="utf-8")
    try:
        data = json.loads(text) if file.suffix == ".json" else tomllib.loads(text)
    except (json.JSONDecodeError, tomllib.TOMLDecodeError) as exc:
        raise AccessConfigError(f"{file}: not valid {'JSON' if file.suffix == '.json' else 'TOML'}: {exc}") from exc
    return data, str(file)


def config_from_env() -> tuple[dict[str, Any], str] | None:
    """$TOOLWIRE_TOKENS's data and its name, or None when it is unset."""
    raw = os.environ.get(TOKENS_ENV)
    if not raw:
        return None
    try:
        data = json.loads(raw)
    except json.JSONDecodeError as exc:
        raise AccessConfigError(f"${TOKENS_ENV}: not valid JSON: {exc}") from exc
    if not isinstance(data, dict):
        raise AccessConfigError(f"${TOKENS_ENV}: expected a JSON object with a table 'agents'")
    return data, f"${TOKENS_ENV}"


def agent_entries(data: Mapping[str, Any], origin: str) -> dict[str, dict[str, Any]]:
    """The `agents` table, each entry a table."""
    agents = data.get("agents")
    if not isinstance(agents, dict) or not agents:
        raise AccessConfigError(f"{origin}: expected a table 'agents'. A correct entry looks like:\n{EXAMPLE}")
    for agent, entry in agents.items():
        if not isinstance(entry, dict):
            raise AccessConfigError(f"{origin}: agents.{agent} must be a table. Example:\n{EXAMPLE}")
    return agents


def agent_token(agent: str, entry: Mapping[str, Any], origin: str) -> Any:
    """The agent's token as written (`token`, or the value of its `token_env` variable), unchecked: None if it has
    none (an OAuth-only agent)."""
    token = entry.get("token")
    if token is None and "token_env" in entry:
        token = os.environ.get(str(entry["token_env"]))
        if not token:
            raise AccessConfigError(f"{origin}: agents.{agent}: env var {entry['token_env']} is unset or empty")
    return token


def find_token(known: Mapping[str, T], token: str) -> T | None:
    """What `token` maps to, compared against every known token (no early exit to time)."""
    found = None
    for candidate, value in known.items():
        if hmac.compare_digest(candidate.encode(), token.encode()):
            found = value
    return found
