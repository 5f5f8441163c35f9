"""Resources: static ones (`@registry.resource(uri)`) and templates (`@registry.resource_template("orders://{id}")`,
whose variables are the function's parameters). A function returns text, bytes (sent as a base64 blob) or anything
JSON-serialisable (sent as JSON text); `resources/read` finds a static URI first, then the first template it fits.

A URI is looked up in its canonical form (uris.py: dot segments removed, unreserved escapes decoded; one that climbs
out of its root is unknown), and a template fits only if no variable would carry a path out of where the URI points:
a `{var}` never holds `/`, `\\`, `.` or `..` (nor their encodings); a `{+var}` or `{#var}` (RFC 6570 reserved
expansion: the template says the value is a path) may hold `/`, but no `.`/`..` segment and no leading `/`."""

import base64
import inspect
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

import anyio.to_thread
import mcp_types as types
from mcp.shared.exceptions import MCPError
from mcp.shared.uri_template import UriTemplate
from pydantic import BaseModel, ValidationError
from pydantic_core import to_jsonable_python

from toolwire_server import texts
from toolwire_server.functions.schema import arguments_model, describe_problems
from toolwire_server.surface.completion import Completer
from toolwire_server.uris import canonical, unsafe_value
from toolwire_shared import errors


@dataclass
class RegisteredResource:
    """One static resource."""

    uri: str
    name: str
    description: str | None
    mime_type: str | None
    fn: Callable[..., Any]

    def mcp_resource(self) -> types.Resource:
        return types.Resource(uri=self.uri, name=self.name, description=self.description, mime_type=self.mime_type)


@dataclass
class RegisteredTemplate:
    """One resource template: its parsed URI template, and the model its variables are checked with."""

    template: UriTemplate
    name: str
    description: str | None
    mime_type: str | None
    fn: Callable[..., Any]
    model: type[BaseModel]
    complete: Completer | None = field(default=None, repr=False)

    def mcp_template(self) -> types.ResourceTemplate:
        return types.ResourceTemplate(
            uri_template=str(self.template), name=self.name, description=self.description, mime_type=self.mime_type
        )


class ResourceSource(Protocol):
    """Resources from elsewhere (upstreams/: another MCP server's), each URI starting with `namespace`, which no
    other source's and no resource or template of the registry's own starts with: a URI is routed by its start."""

    namespace: str

    def listed(self) -> list[types.Resource]: ...

    def listed_templates(self) -> list[types.ResourceTemplate]: ...

    async def read(self, uri: str) -> types.ReadResourceResult:
        """`uri` is canonical and starts with `namespace`."""
        ...

    async def subscribe(self, uri: str, agent: str) -> None:
        """`agent` subscribed to `uri` (canonical, under `namespace`): the source posts its updates from now on (or
        raises an MCPError saying why not)."""
        ...

    async def complete(self, uri_template: str, variable: str, partial: str) -> types.CompleteResult:
        """Values for a variable of one of its listed templates."""
        ...


class Resources:
    """The resources and templates of one registry, and the sources it routes URIs under their namespaces to."""

    def __init__(self) -> None:
        self.static: dict[str, RegisteredResource] = {}
        self.templates: list[RegisteredTemplate] = []
        self.sources: list[ResourceSource] = []

    def add(
        self, uri: str, fn: Callable[..., Any], name: str | None, description: str | None, mime: str | None
    ) -> None:
        if uri in self.static:
            raise ValueError(f"resource '{uri}' is already registered")
        if UriTemplate.is_template(uri):
            raise ValueError(f"resource '{uri}' has {{variables}}: register it with @registry.resource_template")
        if canonical(uri) != uri:  # reads look URIs up in canonical form: this one could never be read
            form = canonical(uri)
            hint = f"register it as '{form}'" if form is not None else "its path climbs above its root"
            raise ValueError(f"resource '{uri}' is not a canonical URI: {hint}")
        self.static[uri] = RegisteredResource(uri, name or fn.__name__, _described(fn, description), mime, fn)

    def add_template(
        self,
        uri_template: str,
        fn: Callable[..., Any],
        name: str | None,
        description: str | None,
        mime: str | None,
        complete: Completer | None,
    ) -> None:
        template = UriTemplate.parse(uri_template)
        params = set(inspect.signature(fn).parameters)
        if set(template.variable_names) != params:
            raise ValueError(texts.template_mismatch(uri_template, template.variable_names, sorted(params)))
        if any(str(known.template) == uri_template for known in self.templates):
            raise ValueError(f"resource template '{uri_template}' is already registered")
        model = arguments_model(name or fn.__name__, fn)
        described = _described(fn, description)
        self.templates.append(RegisteredTemplate(template, name or fn.__name__, described, mime, fn, model, complete))

    def knows(self, uri: str) -> bool:
        return self._resolve(uri) is not None or self.source_of(uri) is not None

    def source_of(self, uri: str) -> ResourceSource | None:
        """The source whose namespace the URI (in canonical form) is under."""
        target = canonical(uri)
        return next((s for s in self.sources if target is not None and target.startswith(s.namespace)), None)

    async def subscribed(self, uri: str, agent: str) -> None:
        """`agent` subscribed to `uri` (canonical, allowed): a source it is under is told (the registry's own
        resources post their updates themselves)."""
        source = self.source_of(uri)
        if source is not None:
            await source.subscribe(uri, agent)

    def template_source(self, uri_template: str) -> ResourceSource | None:
        """The source that listed this template (as listed here, under its namespace)."""
        listed = (s for s in self.sources if any(t.uri_template == uri_template for t in s.listed_templates()))
        return next(listed, None)

    def listed(self) -> list[types.Resource]:
        return [*(r.mcp_resource() for r in self.static.values()), *(r for s in self.sources for r in s.listed())]

    def listed_templates(self) -> list[types.ResourceTemplate]:
        own = (t.mcp_template() for t in self.templates)
        return [*own, *(t for s in self.sources for t in s.listed_templates())]

    def template(self, uri_template: str) -> RegisteredTemplate | None:
        return next((t for t in self.templates if str(t.template) == uri_template), None)

    async def read(self, uri: str) -> types.ReadResourceResult:
        """The resource's contents; an unknown URI or a bad variable is a JSON-RPC error saying what exists."""
        source = self.source_of(uri)
        if source is not None:
            return await source.read(canonical(uri) or uri)
        resolved = self._resolve(uri)
        if resolved is None:
            raise self.unknown(uri)
        target, entry, found = resolved
        if isinstance(entry, RegisteredResource):
            return _contents(target, entry.mime_type, await _call(uri, entry.fn, {}))
        try:
            variables = dict(entry.model.model_validate(found))
        except ValidationError as exc:
            problems = describe_problems(exc)
            raise MCPError(code=types.INVALID_PARAMS, message=texts.bad_resource_uri(uri, problems)) from None
        return _contents(target, entry.mime_type, await _call(uri, entry.fn, variables))

    def _resolve(self, uri: str) -> tuple[str, RegisteredResource | RegisteredTemplate, dict[str, Any]] | None:
        """The canonical URI and what serves it (a template's variables still unchecked by its model), or None."""
        target = canonical(uri)
        if target is None:
            return None
        static = self.static.get(target)
        if static is not None:
            return target, static, {}
        for template in self.templates:
            found = template.template.match(target)
            if found is not None and _contained(template.template, found):
                return target, template, found
        return None

    def unknown(self, uri: str) -> MCPError:
        return unknown_resource(uri, [*self.static, *(str(t.template) for t in self.templates)])


def unknown_resource(uri: str, known: list[str]) -> MCPError:
    """-32602 naming the resources `known` to the caller, with the URI asked for as `data.uri` (SEP-2164's SHOULD:
    a client matches the error to its request without parsing the message)."""
    return MCPError(code=types.INVALID_PARAMS, message=errors.unknown_resource(uri, known), data={"uri": uri})


def _contained(template: UriTemplate, found: dict[str, str | list[str]]) -> bool:
    """No variable climbs out (see the module docstring): only `{+var}`/`{#var}` may carry several segments."""
    for variable in template.variables:
        value = found.get(variable.name)
        values = [] if value is None else [value] if isinstance(value, str) else value
        multi_segment = variable.operator in ("+", "#")
        if any(unsafe_value(v, multi_segment=multi_segment) for v in values):
            return False
    return True


def _described(fn: Callable[..., Any], description: str | None) -> str | None:
    return description or inspect.getdoc(fn)


async def _call(uri: str, fn: Callable[..., Any], kwargs: dict[str, Any]) -> Any:
    """The function's value; its failure is a JSON-RPC error naming the resource, its message clipped."""
    try:
        if inspect.iscoroutinefunction(fn):
            return await fn(**kwargs)
        return await anyio.to_thread.run_sync(lambda: fn(**kwargs))
    except Exception as exc:
        message = errors.clip(str(exc) or type(exc).__name__, errors.QUOTE_CHARS)
        raise MCPError(code=types.INTERNAL_ERROR, message=texts.resource_failed(uri, message)) from exc


def _contents(uri: str, mime: str | None, value: Any) -> types.ReadResourceResult:
    content: types.TextResourceContents | types.BlobResourceContents
    if isinstance(value, bytes):
        blob = base64.b64encode(value).decode("ascii")
        content = types.BlobResourceContents(uri=uri, mime_type=mime or "application/octet-stream", blob=blob)
    elif isinstance(value, str):
        content = types.TextResourceContents(uri=uri, mime_type=mime or "text/plain", text=value)
    else:
        text = json.dumps(to_jsonable_python(value), ensure_ascii=False)
        content = types.TextResourceContents(uri=uri, mime_type=mime or "application/json", text=text)
    return types.ReadResourceResult(contents=[content])
