"""Hole 5: a prefix grant on resources cannot be escaped. An agent granted `files://public/*` and `docs://public/*`
asks a real `toolwire serve --http` for the private file with dot segments, their encodings and encoded slashes; the
file server behind the templates is written the obvious way (`ROOT / path`), so a URI that got through would really
read the secret. Each is refused exactly as an ungranted URI is, and the legitimate spellings still read."""

from collections.abc import Iterator
from typing import Literal

import mcp_types as types
import pytest
from mcp import MCPError
from mcp.shared.exceptions import MCPDeprecationWarning

from helpers.servers import HttpServer, http_client
from toolwire_server import Registry

SURFACE = "tests/security/files_surface.py:registry"
READER, ADMIN = "tok-files-reader-3c9a", "tok-files-admin-81d2"
SECRET = "the private secret"
UNGRANTED = "files://private/secret.txt"
ESCAPES = [
    "files://public/../private/secret.txt",
    "files://public/./../private/secret.txt",
    "files://public/a/../../private/secret.txt",
    "files://public/%2E%2E/private/secret.txt",
    "files://public/%2e%2e/private/secret.txt",
    "files://public/.%2E/private/secret.txt",
    "files://public/..%2Fprivate%2Fsecret.txt",
    "files://public/..%2fprivate/secret.txt",
    "files://public/..%5Cprivate/secret.txt",
    "files://public/%252E%252E/private/secret.txt",
    "docs://public/..%2Fprivate%2Fsecret.txt",
    "docs://public/%2E%2E%2Fprivate%2Fsecret.txt",
    "docs://public/%2E%2E",
]


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[HttpServer]:
    root = tmp_path_factory.mktemp("files")
    (root / "public" / "docs").mkdir(parents=True)
    (root / "private").mkdir()
    (root / "public" / "readme.txt").write_text("hello")
    (root / "public" / "docs" / "guide.txt").write_text("the guide")
    (root / "private" / "secret.txt").write_text(SECRET)
    tokens = root / "tokens.toml"
    tokens.write_text(
        f'[agents.reader]\ntoken = "{READER}"\ntools = ["files://public/*", "docs://public/*"]\n'
        f'[agents.admin]\ntoken = "{ADMIN}"\ntools = ["*"]\n'
    )
    with HttpServer(SURFACE, "--tokens", str(tokens), env={"TOOLWIRE_TEST_FILES": str(root)}) as running:
        yield running


async def _refusal(client: object, uri: str) -> str:
    with pytest.raises(MCPError) as refused:
        contents = await client.read_resource(uri)  # type: ignore[attr-defined]
        pytest.fail(f"{uri} was read: {contents}")
    assert refused.value.error.code == types.INVALID_PARAMS, uri
    assert refused.value.error.data == {"uri": uri}, uri  # what was asked, as sent (SEP-2164), nothing more
    return refused.value.error.message


@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_escaping_uris_are_refused_as_ungranted_ones_are(
    server: HttpServer, mode: Literal["auto", "legacy"]
) -> None:
    async with http_client(server.url, token=READER, mode=mode) as reader:
        ungranted = await _refusal(reader, UNGRANTED)
        assert ungranted == (
            f"unknown resource '{UNGRANTED}'. Resources and templates on this server: docs://public/{{name}}."
        )
        for uri in ESCAPES:
            message = await _refusal(reader, uri)
            assert message == ungranted.replace(UNGRANTED, uri), uri  # nothing tells it apart from "not granted"
            assert SECRET not in message
        if mode == "legacy":  # a subscription is checked the same way
            for uri in ESCAPES[:4]:
                with pytest.raises(MCPError) as refused, pytest.warns(MCPDeprecationWarning):
                    await reader.subscribe_resource(uri)
                assert refused.value.error.message == ungranted.replace(UNGRANTED, uri)


async def test_granted_uris_still_read_in_canonical_form(server: HttpServer) -> None:
    async with http_client(server.url, token=READER) as reader:
        for uri, canonical, text in [
            ("files://public/readme.txt", "files://public/readme.txt", "hello"),
            ("files://public/docs/guide.txt", "files://public/docs/guide.txt", "the guide"),
            ("files://public/docs/../readme.txt", "files://public/readme.txt", "hello"),  # stays inside public
            ("files://public/./docs/%67uide.txt", "files://public/docs/guide.txt", "the guide"),
            ("docs://public/readme.txt", "docs://public/readme.txt", "hello"),
        ]:
            contents = (await reader.read_resource(uri)).contents[0]
            assert isinstance(contents, types.TextResourceContents), uri
            assert (str(contents.uri), contents.text) == (canonical, text), uri


def test_a_static_resource_must_be_registered_in_canonical_form() -> None:
    registry = Registry("non-canonical")
    with pytest.raises(ValueError, match="register it as 'docs://a/b'"):
        registry.resource("docs://a/./b")(lambda: "x")
    with pytest.raises(ValueError, match="climbs above its root"):
        registry.resource("docs://a/../../b")(lambda: "x")


async def test_an_agent_granted_everything_reads_the_secret(server: HttpServer) -> None:
    """The refusals above are the grant's doing: the file is there, and the canonical URI of an escape names it."""
    async with http_client(server.url, token=ADMIN) as admin:
        for uri in (UNGRANTED, "files://private/x/../secret.txt"):
            contents = (await admin.read_resource(uri)).contents[0]
            assert isinstance(contents, types.TextResourceContents) and contents.text == SECRET
            assert str(contents.uri) == UNGRANTED
