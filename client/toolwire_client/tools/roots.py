"""MCP roots: the folders a tool server is told it may work in (`toolwire run --root PATH`, `ServerSpec.roots`).
Each is a folder that exists when the server starts, sent as its `file://` URI; with none given the client does not
advertise the capability at all."""

from pathlib import Path

import mcp_types as types


class RootMissing(ValueError):
    """A root that is not an existing folder: one line naming it, at the start of the run."""


def resolved_roots(paths: list[str]) -> list[str]:
    """Absolute, resolved paths of `paths` (so a run resumed from another folder names the same ones); RootMissing
    for one that is not an existing folder."""
    found = []
    for path in paths:
        folder = Path(path).expanduser().resolve()
        if not folder.is_dir():
            what = "is not a folder" if folder.exists() else "does not exist"
            raise RootMissing(f"--root {path}: {folder} {what}; a root is a folder the tool servers may work in")
        found.append(str(folder))
    return found


def roots_result(folders: list[str]) -> types.ListRootsResult:
    """The answer to `roots/list`: each folder as a `file://` URI, named by its last part."""
    roots = [types.Root(uri=Path(folder).as_uri(), name=Path(folder).name or folder) for folder in folders]
    return types.ListRootsResult(roots=roots)
