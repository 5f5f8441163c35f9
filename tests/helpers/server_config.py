"""A tool server's config file (`toolwire serve --config`, `toolwire check`) as the tests write it, from Python
values: the tables spelled in one place, each value written as JSON (TOML reads it as the same string, number or
list). `server_toml(tools=POLICY_TOOLS, agents={"ops": ("tok-ops", ["*"])}, limits=[{"agent": "ops", ...}])`."""

import json
from collections.abc import Mapping, Sequence

from .cli import REPO

POLICY_TOOLS = f"{REPO}/tests/server/policy_tools.py:registry"
"""The tools most server config tests grant: echo, get_order and two more (tests/server/policy_tools.py)."""

Fields = Mapping[str, object]


def server_toml(
    *,
    tools: str | None = None,
    agents: Mapping[str, tuple[str, Sequence[str]]] | None = None,
    upstreams: Mapping[str, Sequence[str]] | None = None,
    limits: Sequence[Fields] = (),
    request_limits: Sequence[Fields] = (),
    tables: Mapping[str, Fields] | None = None,
) -> str:
    """`tools`: the registry to serve; `agents`: name -> (token, the tools granted); `upstreams`: name -> its command
    and arguments; `limits`, `request_limits`: one `[[...]]` table each; `tables`: more tables by name (store,
    audit)."""
    out = [f"tools = {json.dumps(tools)}\n"] if tools else []
    for name, (token, granted) in (agents or {}).items():
        out.append(table(f"agents.{name}", {"token": token, "tools": list(granted)}))
    for name, (command, *args) in (upstreams or {}).items():
        out.append(table(f"upstreams.{name}", {"command": command, "args": args}))
    out += [table("limits", fields, many=True) for fields in limits]
    out += [table("request_limits", fields, many=True) for fields in request_limits]
    out += [table(name, fields) for name, fields in (tables or {}).items()]
    return "".join(out)


def table(name: str, fields: Fields, many: bool = False) -> str:
    """One TOML table; `many`: an array of tables' entry (`[[name]]`)."""
    head = f"[[{name}]]" if many else f"[{name}]"
    return head + "\n" + "".join(f"{key} = {json.dumps(value)}\n" for key, value in fields.items())
