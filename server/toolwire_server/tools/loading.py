"""Find the Registry a `toolwire serve MODULE:ATTR` command names."""

from pathlib import Path

from toolwire_server.targets import TargetError, load_target
from toolwire_server.tools.registry import Registry

__all__ = ["TargetError", "load_registry"]


def load_registry(target: str) -> Registry:
    value = load_target(target)
    if not isinstance(value, Registry):
        raise TargetError(f"'{target}' is a {type(value).__name__}, not a toolwire_server.Registry")
    if value.source is None:  # an absolute path, so a worker process finds the same file
        module_name, _, attr = target.partition(":")
        value.source = f"{Path(module_name).resolve()}:{attr}" if module_name.endswith(".py") else target
    return value
