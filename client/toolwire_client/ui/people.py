"""Who may log in to the console: people, never agents. The tokens file's `[people.NAME]` tables name them, each with
their own token and what they may see and decide:

    [people.alice]
    token_env = "ALICE_TOKEN"      # or token = "..."; never an agent's token
    agents = ["support*"]          # the runs she sees and decides: those of agents matching one of these globs
    tools = ["*"]                  # the calls she may decide (default every tool)
    # subject = "alice@example.com"  # with an [oauth] table: her OAuth access tokens' subject (`agent serve
    #                                # --ag-ui` only; the console logs people in by token)

An agent's tool token (`[agents.NAME]`) is a credential for the tool server; it does not log in here. A file with no
people is refused, saying so (console_refusal)."""

import os
from collections.abc import Mapping
from dataclasses import dataclass
from fnmatch import fnmatchcase
from typing import TYPE_CHECKING, Any

from toolwire_shared.tokens import AccessConfigError, agent_entries, agent_token

if TYPE_CHECKING:
    from toolwire_shared.oauth.callers import Callers

EXAMPLE = '[people.alice]\ntoken_env = "ALICE_TOKEN"\nagents = ["support*"]\ntools = ["*"]'
NO_PEOPLE = (
    "names no people, and the console logs in only people (an agent's tool token no longer opens it): add a "
    "[people.NAME] table for each person who may decide, e.g.\n" + EXAMPLE
)
_KEYS = {"token", "token_env", "subject", "agents", "tools"}


@dataclass(frozen=True)
class Person:
    """A person logged in to the console: the name recorded with their decisions, and the globs of the agents whose
    runs they see and decide and of the tools whose calls they may decide. EVERYONE stands for the OS user on a
    loopback console without a login."""

    name: str | None
    agents: tuple[str, ...]
    tools: tuple[str, ...] = ("*",)

    def sees(self, agent: str) -> bool:
        return any(fnmatchcase(agent, pattern) for pattern in self.agents)

    def decides(self, agent: str, tool: str) -> bool:
        return self.sees(agent) and any(fnmatchcase(tool, pattern) for pattern in self.tools)


EVERYONE = Person(name=None, agents=("*",))


def people_tokens(data: Mapping[str, Any], origin: str) -> dict[str, Person]:
    """token -> Person, for every `[people.NAME]` table with a token; refused with one readable line when there are
    none, when a table is malformed, or when a person's token is an agent's (or another person's)."""
    return {token: person for token, _, person in _people(data, origin) if token is not None}


def people_callers(data: Mapping[str, Any], origin: str) -> "Callers[Person]":
    """The people as callers of an AG-UI door: by token, and with the file's [oauth] table by `subject`, the
    agent_claim of their OAuth access tokens (the tool server's table, read as it reads it)."""
    from toolwire_shared.oauth.callers import Callers, oauth_of

    found = _people(data, origin)
    subjects = {subject: person for _, subject, person in found if subject is not None}
    tokens = {token: person for token, _, person in found if token is not None}
    return Callers(tokens, oauth_of(data, origin, subjects), subjects)


def _people(data: Mapping[str, Any], origin: str) -> list[tuple[str | None, str | None, Person]]:
    """(token, OAuth subject, Person) of every `[people.NAME]` table, checked."""
    people = data.get("people")
    if not isinstance(people, dict) or not people:
        raise AccessConfigError(f"{origin} {NO_PEOPLE}")
    agents = data.get("agents")
    agent_tokens = set()
    if isinstance(agents, dict) and agents:
        agent_tokens = {agent_token(a, e, origin) for a, e in agent_entries(data, origin).items()}
    found: list[tuple[str | None, str | None, Person]] = []
    for name, entry in people.items():
        where = f"{origin}: people.{name}"
        if not isinstance(entry, dict):
            raise AccessConfigError(f"{where} must be a table. Example:\n{EXAMPLE}")
        unknown = sorted(set(entry) - _KEYS)
        if unknown:
            raise AccessConfigError(f"{where}: unknown key(s) {', '.join(unknown)}; known: {', '.join(sorted(_KEYS))}")
        token = entry.get("token")
        if token is None and "token_env" in entry:
            token = os.environ.get(str(entry["token_env"]))
            if not token:
                raise AccessConfigError(f"{where}: env var {entry['token_env']} is unset or empty")
        subject = entry.get("subject")
        if subject is not None and (not isinstance(subject, str) or not subject):
            raise AccessConfigError(f"{where}.subject must be a non-empty string (their OAuth tokens' subject)")
        if subject is None and (not isinstance(token, str) or not token):
            raise AccessConfigError(f"{where} needs a non-empty 'token' or 'token_env'. Example:\n{EXAMPLE}")
        if token is not None and (not isinstance(token, str) or not token):
            raise AccessConfigError(f"{where}.token must be a non-empty string")
        if token is not None and token in agent_tokens:
            raise AccessConfigError(f"{where} has an agent's token; a person logs in with a token of their own")
        for other_token, other_subject, other in found:
            if token is not None and token == other_token:
                raise AccessConfigError(f"{where} reuses the token of person '{other.name}'")
            if subject is not None and subject == other_subject:
                raise AccessConfigError(f"{where} reuses the subject of person '{other.name}'")
        person = Person(name, _globs(entry, "agents", None, where), _globs(entry, "tools", ("*",), where))
        found.append((token, subject, person))
    return found


def _globs(entry: Mapping[str, Any], key: str, default: tuple[str, ...] | None, where: str) -> tuple[str, ...]:
    value = entry.get(key)
    if value is None and default is not None:
        return default
    if not isinstance(value, list) or not value or not all(isinstance(v, str) and v for v in value):
        said = "needs" if value is None else "must be"
        raise AccessConfigError(f"{where}.{key} {said} a non-empty list of glob patterns. Example:\n{EXAMPLE}")
    return tuple(value)
