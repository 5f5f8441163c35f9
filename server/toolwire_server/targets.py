"""The object a `MODULE:ATTR` target names (`toolwire serve MODULE:ATTR`): the module imported by name or from a
path, like uvicorn does, and a factory called. Both the server (`tools/loading.py`, which checks that it is a
Registry) and a worker process (`isolation/worker.py`, which finds a tool's function in it) start here."""

import importlib
import importlib.util
import os
import sys
from pathlib import Path


class TargetError(ValueError):
    """The MODULE:ATTR target cannot be loaded; the message says what a correct one looks like."""


EXAMPLE = "e.g. examples.support_tools:registry or path/to/tools.py:registry"


def load_target(target: str) -> object:
    """The value `target` names; a callable one (a factory, or a class) is called and its result returned (a Registry
    instance is not callable)."""
    module_name, _, attr = target.partition(":")
    if not module_name or not attr:
        raise TargetError(f"'{target}' is not MODULE:ATTR ({EXAMPLE})")
    if os.getcwd() not in sys.path:
        sys.path.insert(0, os.getcwd())  # like uvicorn: modules next to where the command runs
    try:
        if module_name.endswith(".py"):
            path = Path(module_name)
            spec = importlib.util.spec_from_file_location(path.stem, path)
            if spec is None or spec.loader is None:
                raise TargetError(f"cannot load {path} ({EXAMPLE})")
            module = importlib.util.module_from_spec(spec)
            sys.modules[path.stem] = module
            spec.loader.exec_module(module)
        else:
            module = importlib.import_module(module_name)
    except (ImportError, FileNotFoundError) as exc:
        raise TargetError(f"cannot import '{module_name}': {exc} ({EXAMPLE})") from exc
    try:
        value: object = getattr(module, attr)
    except AttributeError as exc:
        raise TargetError(f"module '{module_name}' has no attribute '{attr}' ({EXAMPLE})") from exc
    return value() if callable(value) else value
