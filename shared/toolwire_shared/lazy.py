"""A package's public names, loaded on first use (PEP 562): the `toolwire` command and a module that needs none of
them import no more than they use. Each package keeps its own table of where a name is defined."""

from collections.abc import Callable, Mapping
from importlib import import_module
from typing import Any


def loader(package: str, where: Mapping[str, str], namespace: dict[str, Any]) -> Callable[[str], Any]:
    """The package's module `__getattr__`: `where` maps a public name to the submodule that defines it; once loaded,
    the name is a plain attribute of the package (`namespace` is its `globals()`)."""

    def load(name: str) -> Any:
        module = where.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(import_module(f"{package}.{module}"), name)
        namespace[name] = value
        return value

    return load
