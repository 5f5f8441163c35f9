"""An MCP server of the tests' own, on the SDK's MCPServer (not toolwire's): tools marked only with MCP tool
annotations, none of toolwire's `_meta` policy. Each call appends a line to $NOTES_FILE, so a test sees what ran.

    python tests/loop/annotated_server.py   # stdio
"""

import os
from pathlib import Path

from mcp.server.mcpserver import MCPServer
from mcp_types import ToolAnnotations

server = MCPServer("annotated", log_level="WARNING")


def _record(line: str) -> None:
    with Path(os.environ["NOTES_FILE"]).open("a") as out:
        out.write(line + "\n")


@server.tool(description="Overwrite the note.", annotations=ToolAnnotations(destructive_hint=True))
def write_note(text: str) -> str:
    _record(f"write_note {text}")
    return "written"


@server.tool(description="Read the note.", annotations=ToolAnnotations(read_only_hint=True))
def read_note() -> str:
    _record("read_note")
    return "the note"


@server.tool(
    description="Set the flag (the same call twice has no more effect).",
    annotations=ToolAnnotations(read_only_hint=False, destructive_hint=False, idempotent_hint=True),
)
def retry_me(flag: str) -> str:
    _record(f"retry_me {flag}")
    return f"flag {flag} set"


if __name__ == "__main__":
    server.run()
