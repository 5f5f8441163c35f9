"""Prompts: `@registry.prompt(...)` functions whose parameters are the prompt's arguments (required = no default)
and which return the messages (a string, content blocks, or `PromptMessage`s); `prompts/get` checks the arguments
with the same kind of pydantic model a tool's are checked with. A prompt that declares a `ToolContext` parameter can
ask the person a question (`ctx.elicit`) the way a tool does (functions/elicit.py)."""

import inspect
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import anyio.to_thread
import mcp_types as types
from mcp.shared.exceptions import MCPError
from pydantic import BaseModel, ValidationError

from toolwire_server import texts
from toolwire_server.functions.context import ToolContext
from toolwire_server.functions.elicit import Asker, InputNeeded
from toolwire_server.functions.schema import arguments_model, describe_problems, injected_params
from toolwire_server.surface.completion import Completer
from toolwire_shared import errors


@dataclass
class RegisteredPrompt:
    """One prompt: the function, its argument model and listing, and its completer."""

    name: str
    description: str
    fn: Callable[..., Any]
    model: type[BaseModel]
    arguments: list[types.PromptArgument]
    complete: Completer | None = field(default=None, repr=False)

    def mcp_prompt(self) -> types.Prompt:
        return types.Prompt(name=self.name, description=self.description, arguments=self.arguments)

    async def get(self, given: dict[str, str] | None, asker: Asker | None = None) -> types.GetPromptResult:
        """The prompt's messages; bad arguments are a JSON-RPC error naming each and showing a correct call.
        `asker`: how its questions reach this request's client (InputNeeded is raised through, in rounds)."""
        try:
            validated = self.model.model_validate(given or {})
        except ValidationError as exc:
            raise MCPError(
                code=types.INVALID_PARAMS,
                message=texts.bad_prompt_arguments(self.name, describe_problems(exc), self.example()),
            ) from None
        kwargs = dict(validated)
        for param, kind in injected_params(self.fn).items():
            if kind == "context":
                kwargs[param] = ToolContext(self.name) if asker is None else ToolContext(self.name, asker=asker)
        try:
            if inspect.iscoroutinefunction(self.fn):
                value = await self.fn(**kwargs)
            else:
                value = await anyio.to_thread.run_sync(lambda: self.fn(**kwargs))
            return types.GetPromptResult(description=self.description, messages=messages(value))
        except InputNeeded:  # 2026-07-28: the question is the answer; the client asks again with its answer
            raise
        except Exception as exc:  # a readable JSON-RPC error naming the prompt, not the SDK's bare "Internal error"
            message = errors.clip(str(exc) or type(exc).__name__, errors.QUOTE_CHARS)
            raise MCPError(code=types.INTERNAL_ERROR, message=texts.prompt_failed(self.name, message)) from exc

    def example(self) -> dict[str, Any]:
        """A correct prompts/get: every required argument with a placeholder."""
        required = {argument.name: "..." for argument in self.arguments if argument.required}
        return {"name": self.name, "arguments": required}


def make_prompt(
    fn: Callable[..., Any], name: str | None, description: str | None, complete: Completer | None
) -> RegisteredPrompt:
    prompt_name = name or fn.__name__
    text = description or inspect.getdoc(fn)
    if not text:
        raise ValueError(f"prompt '{prompt_name}' needs a description (description=... or a docstring)")
    model = arguments_model(prompt_name, fn)
    arguments = [
        types.PromptArgument(name=key, description=info.description, required=info.is_required())
        for key, info in model.model_fields.items()
    ]
    return RegisteredPrompt(prompt_name, text, fn, model, arguments, complete)


def messages(value: Any) -> list[types.PromptMessage]:
    """A prompt's return value as messages: each string or content block is a user message."""
    items = value if isinstance(value, list | tuple) else [value]
    out: list[types.PromptMessage] = []
    for item in items:
        if isinstance(item, types.PromptMessage):
            out.append(item)
        elif isinstance(item, str):
            out.append(types.PromptMessage(role="user", content=types.TextContent(type="text", text=item)))
        elif isinstance(item, dict):
            out.append(types.PromptMessage.model_validate(item))
        else:
            out.append(types.PromptMessage(role="user", content=item))
    return out
