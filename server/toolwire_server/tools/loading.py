"""Find the Registry a `toolwire serve TARGET` command names: `MODULE:ATTR`, or a module or .py file alone when it
holds one Registry, or several and one of them named `registry` (`toolwire serve tools.py`)."""

from pathlib import Path
from types import ModuleType

from toolwire_server.targets import TargetError, load_module, load_target
from toolwire_server.tools.registry import Registry

__all__ = ["TargetError", "load_registry"]


def load_registry(target: str) -> Registry:
    module_name, colon, attr = target.partition(":")
    if colon or not module_name:
        value = load_target(target)
    else:
        module = load_module(module_name)
        attr = _only_registry(module, module_name)
        target, value = f"{module_name}:{attr}", getattr(module, attr)
    if not isinstance(value, Registry):
        raise TargetError(f"'{target}' is a {type(value).__name__}, not a toolwire_server.Registry")
    if value.source is None:  # an absolute path, so a worker process finds the same file
        value.source = f"{Path(module_name).resolve()}:{attr}" if module_name.endswith(".py") else target
    return value


def _only_registry(module: ModuleType, module_name: str) -> str:
    """The name of the one Registry at the top level of the module; several or none is the user's to settle."""
    found = sorted(name for name, value in vars(module).items() if isinstance(value, Registry))
    if len(found) == 1:
        return found[0]
    if "registry" in found:  # the name every example and the docs use
        return "registry"
    if not found:
        raise TargetError(
            f"'{module_name}' holds no Registry: create one at its top level (registry = Registry()), or name a "
            f"function that returns one: {module_name}:FUNCTION"
        )
    raise TargetError(
        f"'{module_name}' holds {len(found)} registries ({', '.join(found)}): name one, e.g. {module_name}:{found[0]}"
    )
