"""`--model script:FILE`: the turns you write, played in order, no network and no key. FILE is JSON (a list of
turns, or {"turns": [...]}) or TOML ([[turns]] tables), each turn `{"calls": [{"name": ..., "args": {...}}]}` or
`{"text": ...}`; or `FILE.py:FUNCTION`, a function of (messages, tools) returning the next turn (FunctionModel)."""

import importlib.util
import json
import tomllib
from pathlib import Path
from typing import Any

import pydantic

from toolwire_client.models.function_model import TURN_EXAMPLE, FunctionModel, ScriptTurn, TurnFn
from toolwire_client.models.providers import UnknownModel
from toolwire_shared.messages import AssistantMessage, Message
from toolwire_shared.tools import ToolSpec

PREFIX = "script:"


def script_model(where: str) -> FunctionModel:
    """The model `script:WHERE` names; a file that cannot be read or a turn that is not one is an UnknownModel
    (a usage error), said with the file and the turn."""
    path, function = _parts(where)
    if not path.is_file():
        raise UnknownModel(
            f"model 'script:{where}': no file {path} (give a JSON or TOML file of turns: {TURN_EXAMPLE})"
        )
    if function is not None:
        return FunctionModel(_function(path, function), name=f"{path.name}:{function}")
    return FunctionModel(Played(path, read_turns(path)), name=path.name)


def absolute(spec: str) -> str:
    """`script:FILE` with FILE made absolute (saved with the run, so `resume` from elsewhere finds it); any other
    spec as it is."""
    if not spec.startswith(PREFIX):
        return spec
    path, function = _parts(spec[len(PREFIX) :])
    return PREFIX + str(path.resolve()) + (f":{function}" if function else "")


def _parts(where: str) -> tuple[Path, str | None]:
    """FILE, or FILE.py:FUNCTION."""
    file, colon, function = where.rpartition(":")
    if colon and file.endswith(".py") and function.isidentifier():
        return Path(file).expanduser(), function
    return Path(where).expanduser(), None


def read_turns(path: Path) -> list[ScriptTurn]:
    text = path.read_text(encoding="utf-8")
    try:
        data: Any = tomllib.loads(text) if path.suffix == ".toml" else json.loads(text)
    except (ValueError, tomllib.TOMLDecodeError) as exc:
        kind = "TOML" if path.suffix == ".toml" else "JSON"
        raise UnknownModel(f"model 'script:{path}': not valid {kind}: {exc}") from exc
    turns = data.get("turns") if isinstance(data, dict) else data
    if not isinstance(turns, list) or not turns:
        shape = "[[turns]] tables" if path.suffix == ".toml" else 'a list of turns (or {"turns": [...]})'
        raise UnknownModel(f"model 'script:{path}': the file holds no turns; write {shape}, each {TURN_EXAMPLE}")
    checked = []
    for number, turn in enumerate(turns, 1):
        try:
            checked.append(ScriptTurn.model_validate(turn))
        except pydantic.ValidationError as exc:
            problem = "; ".join(f"{'.'.join(map(str, e['loc'])) or 'turn'}: {e['msg']}" for e in exc.errors())
            raise UnknownModel(f"model 'script:{path}': turn {number}: {problem}; a turn is {TURN_EXAMPLE}") from exc
    return checked


class Played:
    """The turns in order: the turn after as many as the run's messages answer already (so a resumed or replayed
    run goes on where it was); past the last, a final answer that says the script ran out."""

    def __init__(self, path: Path, turns: list[ScriptTurn]) -> None:
        self.path, self.turns = path, turns

    def __call__(self, messages: list[Message], tools: list[ToolSpec]) -> AssistantMessage | ScriptTurn:
        done = sum(isinstance(m, AssistantMessage) for m in messages)
        if done < len(self.turns):
            return self.turns[done]
        return AssistantMessage(
            text=f"The script {self.path.name} ran out of turns: its {len(self.turns)} turns were all played. End it "
            'with a {"text": "..."} turn to give the answer yourself.'
        )


def _function(path: Path, name: str) -> TurnFn:
    """FUNCTION of the Python file at `path`, imported from there."""
    spec = importlib.util.spec_from_file_location(f"toolwire_script_{path.stem}", path)
    if spec is None or spec.loader is None:
        raise UnknownModel(f"model 'script:{path}:{name}': {path} is not a Python file")
    module = importlib.util.module_from_spec(spec)
    try:
        spec.loader.exec_module(module)
    except Exception as exc:
        raise UnknownModel(
            f"model 'script:{path}:{name}': importing {path} failed: {type(exc).__name__}: {exc}"
        ) from exc
    fn = getattr(module, name, None)
    if not callable(fn):
        found = ", ".join(n for n, v in vars(module).items() if callable(v) and not n.startswith("_")) or "none"
        raise UnknownModel(f"model 'script:{path}:{name}': {path.name} has no function {name} (its functions: {found})")
    turn_fn: TurnFn = fn
    return turn_fn
