"""The public face: every name `toolwire_client` lists loads, is the object its module defines, and importing the
package alone loads none of them (a CLI start pays only for what it uses). The names are listed once (`PUBLIC`):
`__all__`, the lazy loader and the imports type checkers read all say the same."""

import ast
import subprocess
import sys
from importlib import import_module
from pathlib import Path

import toolwire_client


def test_every_public_name_loads() -> None:
    listed = {name: module for module, names in toolwire_client.PUBLIC.items() for name in names}
    assert sorted(listed) == toolwire_client.__all__
    for name, module in listed.items():
        assert getattr(toolwire_client, name) is getattr(import_module(f"toolwire_client.{module}"), name), name


def test_type_checkers_see_exactly_the_listed_names() -> None:
    """The imports under TYPE_CHECKING (what mypy and editors read) name each listed name from its module, re-exported
    (`x as x`), and nothing else: a name added to one list and not the other fails here."""
    tree = ast.parse(Path(toolwire_client.__file__).read_text())
    block = next(n for n in tree.body if isinstance(n, ast.If) and ast.unparse(n.test) == "TYPE_CHECKING")
    seen: dict[str, str] = {}
    for node in block.body:
        assert isinstance(node, ast.ImportFrom) and node.module is not None, ast.unparse(node)
        for alias in node.names:
            assert alias.asname == alias.name, f"{alias.name} is not re-exported (`{alias.name} as {alias.name}`)"
            seen[alias.name] = node.module.removeprefix("toolwire_client.")
    listed = {name: module for module, names in toolwire_client.PUBLIC.items() for name in names}
    assert seen == listed


def test_importing_the_package_loads_nothing_behind_it() -> None:
    probe = "import sys, toolwire_client; print(sorted(m for m in sys.modules if m.startswith('toolwire_client.')))"
    loaded = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout
    assert loaded.strip() == "[]"


def test_an_unknown_name_is_an_attribute_error() -> None:
    try:
        toolwire_client.NoSuchThing  # type: ignore[attr-defined]  # noqa: B018
    except AttributeError as exc:
        assert "NoSuchThing" in str(exc)
    else:
        raise AssertionError("an unknown name loaded")


def test_the_examples_import_only_public_names_of_the_server() -> None:
    """An example shows what a user may write: it imports from `toolwire_server` itself, not its inner modules."""
    for path in sorted(Path("examples").glob("*.py")):
        inner = [
            ast.unparse(node)
            for node in ast.walk(ast.parse(path.read_text()))
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("toolwire_server.")
        ]
        assert not inner, f"{path}: {inner}"
