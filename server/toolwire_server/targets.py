"""The object a `MODULE:ATTR` target names (`toolwire serve MODULE:ATTR`): the module imported by name or from a
path, like uvicorn does, and a factory called. Both the server (`tools/loading.py`, which checks that it is a
Registry) and a worker process (`isolation/worker.py`, which finds a tool's function in it) start here."""

import importlib
import importlib.util
import os
import sys
import traceback
from pathlib import Path
from types import ModuleType


class TargetError(ValueError):
    """The MODULE:ATTR target cannot be loaded; the message says what a correct one looks like."""


EXAMPLE = "e.g. examples.support_tools:registry or path/to/tools.py:registry"


def load_target(target: str) -> object:
    """The value `target` names; a callable one (a factory, or a class) is called and its result returned (a Registry
    instance is not callable)."""
    module_name, _, attr = target.partition(":")
    if not module_name or not attr:
        raise TargetError(f"'{target}' is not MODULE:ATTR ({EXAMPLE})")
    module = load_module(module_name)
    try:
        value: object = getattr(module, attr)
    except AttributeError as exc:
        raise TargetError(f"module '{module_name}' has no attribute '{attr}' ({EXAMPLE})") from exc
    if not callable(value):
        return value
    try:
        return value()
    except Exception as exc:
        raise TargetError(where_it_failed(exc)) from exc


def load_module(module_name: str) -> ModuleType:
    """The module a dotted name or a .py path names, imported (a .py file as its stem)."""
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
    except TargetError:
        raise
    except Exception as exc:  # the user's module failed: their file and line, not a bug of ours
        raise TargetError(where_it_failed(exc)) from exc
    return module


def where_it_failed(exc: BaseException) -> str:
    """`tools.py line 12: NameError: name 'x' is not defined`: the error of the user's code at the line of theirs
    that raised it (the innermost frame outside Python's import machinery and outside toolwire_server and the
    installed packages, else the innermost frame); a SyntaxError at the line it names."""
    said = f"{type(exc).__name__}: {exc}"
    if isinstance(exc, SyntaxError) and exc.filename and exc.lineno:
        return f"{_shown(exc.filename)} line {exc.lineno}: {type(exc).__name__}: {exc.msg}"
    frames = traceback.extract_tb(exc.__traceback__)
    theirs = [f for f in frames if not f.filename.startswith("<") and not _ours_or_installed(f.filename)]
    if not frames:
        return said
    frame = (theirs or frames)[-1]
    return said if frame.lineno is None else f"{_shown(frame.filename)} line {frame.lineno}: {said}"


def _ours_or_installed(filename: str) -> bool:
    path = os.path.abspath(filename)
    here = os.path.dirname(os.path.abspath(__file__))
    installed = ("site-packages", "dist-packages")
    return path.startswith(here + os.sep) or any(part in installed for part in Path(path).parts)


def _shown(filename: str) -> str:
    """The path relative to the working directory when it is under it (as the user typed it), else as it is."""
    path = Path(filename).resolve()
    try:
        return str(path.relative_to(Path.cwd().resolve()))
    except ValueError:
        return filename
