"""The public face: every name `toolwire_client` lists loads, is the object its module defines, and importing the
package alone loads none of them (a CLI start pays only for what it uses)."""

import subprocess
import sys
from importlib import import_module

import toolwire_client


def test_every_public_name_loads() -> None:
    where = toolwire_client._WHERE
    assert sorted(where) == toolwire_client.__all__
    for name, module in where.items():
        assert getattr(toolwire_client, name) is getattr(import_module(f"toolwire_client.{module}"), name), name


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
