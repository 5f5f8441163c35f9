"""Find the Registry a `toolwire serve MODULE:ATTR` command names."""

import importlib
import importlib.util
import os
import sys
from pathlib import Path

from toolwire_server.tools.registry import Registry


class TargetError(ValueError):
    """The MODULE:ATTR target cannot be loaded; the message says what a correct one looks like."""


_EXAMPLE = "e.g. examples.support_tools:registry or path/to/tools.py:registry"


def load_registry(target: str) -> Registry:
    module_name, _, attr = target.partition(":")
    if not module_name or not attr:
        raise TargetError(f"'{target}' is not MODULE:ATTR ({_EXAMPLE})")
    if os.getcwd() not in sys.path:
        sys.path.insert(0, os.getcwd())  # like uvicorn: modules next to where the command runs
    try:
        if module_name.endswith(".py"):
            path = Path(module_name)
            spec = importlib.util.spec_from_file_location(path.stem, path)
            if spec is None or spec.loader is None:
                raise TargetError(f"cannot load {path} ({_EXAMPLE})")
            module = importlib.util.module_from_spec(spec)
            sys.modules[path.stem] = module
            spec.loader.exec_module(module)
        else:
            module = importlib.import_module(module_name)
    except (ImportError, FileNotFoundError) as exc:
        raise TargetError(f"cannot import '{module_name}': {exc} ({_EXAMPLE})") from exc
    try:
        value = getattr(module, attr)
    except AttributeError as exc:
        raise TargetError(f"module '{module_name}' has no attribute '{attr}' ({_EXAMPLE})") from exc
    if callable(value) and not isinstance(value, Registry):
        value = value()
    if not isinstance(value, Registry):
        raise TargetError(f"'{target}' is a {type(value).__name__}, not a toolwire_server.Registry")
    if value.source is None:  # an absolute path, so a worker process finds the same file
        value.source = f"{Path(module_name).resolve()}:{attr}" if module_name.endswith(".py") else target
    return value
