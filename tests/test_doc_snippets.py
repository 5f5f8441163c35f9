"""Every ```python block in docs/ runs as written: each is saved as a module and imported in a fresh interpreter (a
tool server's registry is built, so a tool the server would refuse, one with no description, fails here). A block
that continues an earlier one (it uses names the page defined above it) gets them from an HTML comment just before
its fence, invisible on the page:

    <!-- snippet prelude
    from toolwire_server import Registry, ToolContext
    registry = Registry("bookings")
    -->
    ```python
    @registry.tool(description=...)
    ...
"""

import re
import subprocess
import sys
from pathlib import Path

import pytest

from helpers.cli import REPO

BLOCK = re.compile(r"(?:<!-- snippet prelude\n(?P<prelude>.*?)-->\n)?```python\n(?P<code>.*?)```", re.S)


def snippets() -> list[tuple[str, str]]:
    """(page#n, the module: prelude then code) for every python block of docs/*.md."""
    found = []
    for page in sorted((REPO / "docs").glob("*.md")):
        for n, block in enumerate(BLOCK.finditer(page.read_text(encoding="utf-8")), 1):
            found.append((f"{page.name}#{n}", (block["prelude"] or "") + block["code"]))
    return found


def test_the_docs_have_python_blocks_to_check() -> None:
    assert len(snippets()) >= 6


@pytest.mark.parametrize(("where", "code"), snippets(), ids=[where for where, _ in snippets()])
def test_a_doc_snippet_runs_as_written(where: str, code: str, tmp_path: Path) -> None:
    (tmp_path / "snippet.py").write_text(code, encoding="utf-8")
    done = subprocess.run(
        [sys.executable, "-c", "import snippet"], cwd=tmp_path, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, f"{where} fails as written:\n{code}\n{done.stderr[-2000:]}"


def test_the_tools_page_lists_every_registry_tool_option() -> None:
    from typing import get_type_hints

    from toolwire_server.tools.registry import ToolOptions

    page = (REPO / "docs" / "tools.md").read_text(encoding="utf-8")
    rows = {row.split("|")[1].strip().split()[0].strip("`") for row in page.splitlines() if row.startswith("| `")}
    assert rows == {"name", *get_type_hints(ToolOptions)}
