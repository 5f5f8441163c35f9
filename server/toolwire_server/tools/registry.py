"""The registry: the tools a server offers (what tools/list shows and the allow-list for tools/call), and its
prompts and resources (prompts.py, resources.py). Registering after a server started tells its clients."""

import inspect
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import AbstractAsyncContextManager, AsyncExitStack, asynccontextmanager
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, TypedDict, TypeVar, Unpack, get_args

import anyio
import mcp_types as types
from mcp.shared.inbound import find_invalid_x_mcp_header
from pydantic import BaseModel

from toolwire_server.functions.awaits import never_awaits
from toolwire_server.functions.output import OutputShape, output_shape
from toolwire_server.functions.schema import arguments_model, injected_params, json_schema
from toolwire_server.isolation.workers import DEFAULT_WORKERS, WorkerPool
from toolwire_server.policy.guard import CallPolicy
from toolwire_server.surface.changes import (
    Changes,
    PromptsListChanged,
    ResourcesListChanged,
    ResourceUpdated,
    ToolsListChanged,
)
from toolwire_server.surface.completion import Completer
from toolwire_server.surface.prompts import RegisteredPrompt, make_prompt
from toolwire_server.surface.resources import Resources
from toolwire_shared.options import refuse_unknown
from toolwire_shared.tools import DEFAULT_TIMEOUT_S, ToolPolicy, ToolSpec

F = TypeVar("F", bound=Callable[..., Any])
Isolation = Literal["none", "process"]
"""Where a tool runs: "none" = in the server (an async tool on its event loop, a sync one in a thread);
"process" = in a worker process, killed on timeout or cancel (see docs/ISOLATION.md for what it cannot get)."""
TaskSupport = Literal["optional", "required"]
"""A tool that runs as an MCP task (docs/tasks-and-input.md): "optional" = as a task for a client that declared the
tasks extension, a plain call for others; "required" = only as a task (others get error -32021)."""


class ToolOptions(TypedDict, total=False):
    description: str | None
    """Tells the model *when* to use the tool; defaults to the docstring."""
    timeout_s: float | None
    max_concurrency: int | None
    risky: bool
    """Needs a person's approval before it runs."""
    idempotent: bool
    """Safe to send again with the same idempotency key (it receives the key as `idempotency_key`)."""
    isolation: Isolation
    """"process": run it in a worker process, so a timeout or cancel really stops it (default: the registry's)."""
    task: TaskSupport | None
    """Run it as an MCP task: the call is answered with a handle at once and followed with tasks/get."""
    ask_before_task: bool
    """With `task`: questions the tool asks as it starts go out as the call's InputRequiredResult (SEP-2322 rounds)
    and the task handle comes back with the answers (SEP-2663's composition): for a tool that asks, then works."""


@dataclass
class RegisteredTool:
    """One tool: the function, its argument model and schema, its policy, and its concurrency gate."""

    name: str
    description: str
    fn: Callable[..., Any]
    model: type[BaseModel]
    schema: dict[str, Any]
    policy: ToolPolicy
    injected: dict[str, str]
    is_async: bool
    limiter: anyio.CapacityLimiter | None = field(default=None, repr=False)
    isolation: Isolation = "none"
    workers: WorkerPool | None = field(default=None, repr=False)
    """The registry's worker pool (used when `isolation` is "process")."""
    output: OutputShape | None = None
    """From the return annotation: the `outputSchema`, and how a result becomes `structuredContent`."""
    task: TaskSupport | None = None
    """See TaskSupport; None: never a task."""
    ask_before_task: bool = False
    """See ToolOptions.ask_before_task."""
    awaits_nothing: bool = False
    """An `async def` with no await in its body (functions/awaits.py): it runs without a timeout scope."""

    def spec(self) -> ToolSpec:
        return ToolSpec(
            name=self.name,
            description=self.description,
            input_schema=self.schema,
            output_schema=self.output.schema if self.output else None,
            policy=self.policy,
        )

    def mcp_tool(self) -> types.Tool:
        return types.Tool(
            name=self.name,
            description=self.description,
            input_schema=self.schema,
            output_schema=self.output.schema if self.output else None,
            annotations=types.ToolAnnotations(
                destructive_hint=self.policy.risky,
                idempotent_hint=self.policy.idempotent,
            ),
            meta=self.policy.to_meta(),
            execution=types.ToolExecution(task_support=self.task) if self.task else None,
        )


class Mount(Protocol):
    """Tools that come from elsewhere while a server runs (upstreams/: another MCP server's). `serving()` is entered
    with each server's lifespan and keeps them in the registry (`put`, `remove`); `prefix` is the start of every
    name it puts there, so a grant or limit can name them before they exist."""

    prefix: str

    def serving(self) -> AbstractAsyncContextManager[None]: ...


class Registry:
    """Register plain functions (sync or async) with `@registry.tool(...)`; nothing outside it ever runs."""

    def __init__(
        self,
        name: str = "toolwire",
        *,
        default_timeout_s: float = DEFAULT_TIMEOUT_S,
        isolation: Isolation = "none",
        workers: int = DEFAULT_WORKERS,
    ) -> None:
        self.name = name
        self.default_timeout_s = default_timeout_s
        self.isolation: Isolation = _checked(isolation, name)
        self.source: str | None = None
        """The MODULE:ATTR this registry was loaded from (set by `load_registry`): how a worker finds its tools."""
        self.workers = WorkerPool(self, workers)
        self._tools: dict[str, RegisteredTool] = {}
        self.prompts: dict[str, RegisteredPrompt] = {}
        self.resources = Resources()
        self.changes = Changes()
        """Reaches the sessions of every server built from this registry while it runs."""
        self.version = 0
        """Counts registrations of tools, so a server's cached tools/list is rebuilt after one."""
        self._policy: CallPolicy | None = None
        self.chains: dict[str, Any] = {}
        """The call pipeline's chains (tools/pipeline.py): its head, and each tool's, built at its first call and
        forgotten when a tool, the policy or isolation changes."""
        self.mounts: list[Mount] = []
        """Tools from elsewhere, kept here while a server runs (`serve --config` with [upstreams])."""
        self.discovery: Literal["list", "search"] = "list"
        """How clients find the tools (`serve --config` with [discovery]): listed, or by search (discovery.py)."""

    @property
    def policy(self) -> CallPolicy | None:
        """Limits and the audit trail around every call (set from `serve --config`); None: calls go straight in."""
        return self._policy

    @policy.setter
    def policy(self, policy: CallPolicy | None) -> None:
        self._policy = policy
        self.chains.clear()

    def tool(self, name: str | None = None, **options: Unpack[ToolOptions]) -> Callable[[F], F]:
        """Decorator. The description should tell the model *when* to use the tool (defaults to the docstring)."""

        def register(fn: F) -> F:
            self.add(fn, name=name, **options)
            return fn

        return register

    def add(self, fn: Callable[..., Any], *, name: str | None = None, **options: Unpack[ToolOptions]) -> RegisteredTool:
        tool_name = name or fn.__name__
        refuse_unknown(options, ToolOptions.__optional_keys__, f"tool '{tool_name}'")
        if tool_name in self._tools:
            raise ValueError(f"tool '{tool_name}' is already registered")
        text = options.get("description") or inspect.getdoc(fn)
        if not text:
            raise ValueError(f"tool '{tool_name}' needs a description telling the model when to use it")
        max_concurrency, timeout_s = options.get("max_concurrency"), options.get("timeout_s")
        if max_concurrency is not None and max_concurrency < 1:
            raise ValueError(f"tool '{tool_name}': max_concurrency must be at least 1")
        policy = ToolPolicy(
            timeout_s=self.default_timeout_s if timeout_s is None else timeout_s,
            max_concurrency=max_concurrency,
            risky=options.get("risky", False),
            idempotent=options.get("idempotent", False),
        )
        isolation = _checked(options.get("isolation") or self.isolation, tool_name)
        task = options.get("task")
        if task is not None and task not in get_args(TaskSupport):
            choices = ", ".join(get_args(TaskSupport))
            raise ValueError(f"tool '{tool_name}': task must be one of {choices}, not {task!r}")
        ask_first = options.get("ask_before_task", False)
        if ask_first and task is None:
            raise ValueError(f"tool '{tool_name}': ask_before_task needs task='optional' or task='required'")
        model = arguments_model(tool_name, fn)
        schema = json_schema(model)
        if (bad_header := find_invalid_x_mcp_header(schema)) is not None:
            # clients drop such a tool from their list (SEP-2243), so it would be offered to nobody: say so now
            raise ValueError(f"tool '{tool_name}': {bad_header}")
        registered = RegisteredTool(
            name=tool_name,
            description=text,
            fn=fn,
            model=model,
            schema=schema,
            policy=policy,
            injected=injected_params(fn),
            is_async=inspect.iscoroutinefunction(fn),
            limiter=anyio.CapacityLimiter(max_concurrency) if max_concurrency else None,
            isolation=isolation,
            workers=self.workers,
            output=output_shape(fn),
            task=task,
            ask_before_task=ask_first,
            awaits_nothing=never_awaits(fn),
        )
        self._tools[tool_name] = registered
        self.chains.clear()
        self.version += 1
        self.changes.post(ToolsListChanged())
        return registered

    def put(self, tool: RegisteredTool) -> None:
        """Add or replace a tool a mount made (its own RegisteredTool); the servers' clients are told."""
        self._tools[tool.name] = tool
        self.chains.clear()
        self.version += 1
        self.changes.post(ToolsListChanged())

    def remove(self, name: str) -> None:
        """Take a tool out (a mount's upstream dropped it); the servers' clients are told."""
        if self._tools.pop(name, None) is not None:
            self.chains.clear()
            self.version += 1
            self.changes.post(ToolsListChanged())

    def prefixes(self) -> list[str]:
        """The name prefixes of the mounts' tools: names a grant or a limit may use before those tools exist."""
        return [mount.prefix for mount in self.mounts]

    @asynccontextmanager
    async def mounted(self) -> AsyncIterator[None]:
        """While a server runs: every mount serving (entered once per server's lifespan)."""
        async with AsyncExitStack() as stack:
            for mount in self.mounts:
                await stack.enter_async_context(mount.serving())
            yield

    def prompt(
        self, name: str | None = None, *, description: str | None = None, complete: Completer | None = None
    ) -> Callable[[F], F]:
        """Decorator. The function's parameters are the prompt's arguments (required = no default); it returns a
        string, content blocks or `PromptMessage`s. `complete(argument, partial)` offers values for an argument."""

        def register(fn: F) -> F:
            prompt = make_prompt(fn, name, description, complete)
            if prompt.name in self.prompts:
                raise ValueError(f"prompt '{prompt.name}' is already registered")
            self.prompts[prompt.name] = prompt
            self.changes.post(PromptsListChanged())
            return fn

        return register

    def resource(
        self, uri: str, *, name: str | None = None, mime_type: str | None = None, description: str | None = None
    ) -> Callable[[F], F]:
        """Decorator for a static resource: the function returns its text, bytes (a blob), or JSON-able data."""

        def register(fn: F) -> F:
            self.resources.add(uri, fn, name, description, mime_type)
            self.changes.post(ResourcesListChanged())
            return fn

        return register

    def resource_template(
        self,
        uri_template: str,
        *,
        name: str | None = None,
        mime_type: str | None = None,
        description: str | None = None,
        complete: Completer | None = None,
    ) -> Callable[[F], F]:
        """Decorator for a resource template such as "orders://{order_id}": one function parameter per variable.
        `complete(variable, partial)` offers values for a variable."""

        def register(fn: F) -> F:
            self.resources.add_template(uri_template, fn, name, description, mime_type, complete)
            self.changes.post(ResourcesListChanged())
            return fn

        return register

    def notify_resource_updated(self, uri: str) -> None:
        """Tell the sessions subscribed to `uri` that it changed (safe from a tool, a thread, or outside a call)."""
        self.changes.post(ResourceUpdated(uri=uri))

    def isolate_all(self) -> None:
        """Run every tool, registered or yet to be, in a worker process (`toolwire serve --isolate`)."""
        self.isolation = "process"
        self.chains.clear()
        for tool in self._tools.values():
            tool.isolation = "process"

    def isolated(self) -> bool:
        """Whether any tool runs in a worker process (the server then starts its workers ahead of the first call)."""
        return any(tool.isolation == "process" for tool in self._tools.values())

    def get(self, name: str) -> RegisteredTool | None:
        return self._tools.get(name)

    def names(self) -> list[str]:
        return list(self._tools)

    def __iter__(self) -> Iterator[RegisteredTool]:
        return iter(self._tools.values())

    def __len__(self) -> int:
        return len(self._tools)

    def __contains__(self, name: object) -> bool:
        return name in self._tools


def _checked(isolation: str, where: str) -> Isolation:
    if isolation not in get_args(Isolation):
        raise ValueError(f"{where}: isolation must be one of {', '.join(get_args(Isolation))}, not {isolation!r}")
    return isolation  # type: ignore[return-value]
