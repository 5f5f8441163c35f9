"""Resources over a directory for the grant tests (not an example): what a file server written the obvious way looks
like, so a URI that escapes its grant would really read the private file. The directory is $TOOLWIRE_TEST_FILES."""

import os
from pathlib import Path

from toolwire_server import Registry

registry = Registry("toolwire-test-files")
ROOT = Path(os.environ.get("TOOLWIRE_TEST_FILES", "."))


@registry.tool(description="Echo the text back.")
async def echo(text: str) -> str:
    return text


@registry.resource_template("files://{+path}", mime_type="text/plain")
def file(path: str) -> str:
    """A file under the root by its path, e.g. files://public/readme.txt."""
    return (ROOT / path).read_text()


@registry.resource_template("docs://public/{name}", mime_type="text/plain")
def public_doc(name: str) -> str:
    """A file of the public folder by its name (one segment), e.g. docs://public/readme.txt."""
    return (ROOT / "public" / name).read_text()
