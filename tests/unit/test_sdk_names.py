"""The `mcp` SDK's private names toolwire uses are all imported in one module (toolwire_shared/mcp_kit/sdk.py), and
each still exists: an SDK release that moves one fails here, naming it, instead of failing toolwire at import."""

import ast
import importlib
from pathlib import Path

import anyio
import pytest
from mcp.client.session import ClientSession
from mcp.shared.message import SessionMessage

REPO = Path(__file__).resolve().parents[2]
SDK = REPO / "shared/toolwire_shared/mcp_kit/sdk.py"
OURS = ("client", "server", "shared", "otel", "examples")
SESSION_PRIVATES = ("_dispatcher", "_sampling_callback", "_list_roots_callback", "_absorb_tool_listing")
"""The SDK session's private attributes sdk.py uses: reached nowhere else either."""


def _private(module: str) -> bool:
    return module.split(".")[0] in ("mcp", "mcp_types") and any(part.startswith("_") for part in module.split("."))


def _private_imports(path: Path) -> list[tuple[str, str]]:
    """(module, name) of each `from mcp... import name` in `path` that reaches into a private module or name."""
    text = path.read_text()
    if "mcp" not in text and not any(name in text for name in SESSION_PRIVATES):
        return []  # nothing to find: parsing every module of the tree is most of this test's time
    found = []
    for node in ast.walk(ast.parse(text, str(path))):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] in ("mcp", "mcp_types"):
            for alias in node.names:
                if _private(node.module) or alias.name.startswith("_"):
                    found.append((node.module, alias.name))
        elif isinstance(node, ast.Import):
            found += [(alias.name, "") for alias in node.names if _private(alias.name)]
        elif isinstance(node, ast.Attribute) and node.attr in SESSION_PRIVATES:
            found.append(("ClientSession", node.attr))
    return found


def test_only_sdk_py_imports_private_sdk_names() -> None:
    elsewhere = [
        f"{path.relative_to(REPO)}: {module}.{name}"
        for folder in OURS
        for path in sorted((REPO / folder).rglob("*.py"))
        if path != SDK
        for module, name in _private_imports(path)
    ]
    assert not elsewhere, "private mcp SDK names imported outside mcp_kit/sdk.py (move them there):\n" + "\n".join(
        elsewhere
    )


@pytest.mark.parametrize(
    "module, name", [found for found in _private_imports(SDK) if found[0] != "ClientSession"], ids=str
)
def test_each_private_name_sdk_py_imports_still_exists(module: str, name: str) -> None:
    try:
        found = importlib.import_module(module)
    except ImportError as exc:
        pytest.fail(f"the mcp SDK has no module {module} any more ({exc}); sdk.py imports {name} from it")
    assert hasattr(found, name), f"the mcp SDK's {module} has no {name} any more; sdk.py imports it from there"


async def test_each_private_session_attribute_sdk_py_uses_still_exists() -> None:
    from toolwire_shared.mcp_kit.sdk import SESSION_ATTRIBUTES

    to_session, read = anyio.create_memory_object_stream[SessionMessage | Exception](1)
    write, from_session = anyio.create_memory_object_stream[SessionMessage](1)
    async with to_session, read, write, from_session:
        session = ClientSession(read, write)
        missing = [name for name in SESSION_ATTRIBUTES if not hasattr(session, name)]
        assert not missing, f"the mcp SDK's ClientSession has no {', '.join(missing)} any more (used in sdk.py)"
        assert callable(getattr(session._dispatcher, "send_raw_request", None)), (
            "the mcp SDK's session dispatcher has no send_raw_request any more (sdk.send_raw_request uses it)"
        )
        assert callable(getattr(ClientSession, "_absorb_tool_listing", None)), (
            "the mcp SDK's ClientSession has no _absorb_tool_listing any more (sdk.absorb_tool_listing uses it)"
        )
