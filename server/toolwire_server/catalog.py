"""The MCP surface beside tools: prompts, resources and templates, subscriptions, completion, and the listen streams
of change notifications, served from the registry. The caller's grant applies here as it does to tools: its
patterns match prompt names and resource URIs (a template is listed when they match its template text, e.g.
"orders://*" matches "orders://{order_id}"), so an agent limited to some tools sees no prompts or resources unless
its grant names them; on stdio without `--agent` the grant is "*". Refused or unknown, the caller gets the same
error: it cannot tell what exists outside its grant. An upstream's resources (upstreams/resources.py) are among
them, under their namespace: checked here like the registry's own, then routed to the upstream."""

from collections.abc import Callable
from typing import Any

import mcp_types as types
from mcp.server import ServerRequestContext
from mcp.shared.exceptions import MCPError

from toolwire_server import texts
from toolwire_server.auth.access import Grant
from toolwire_server.functions.elicit import InputNeeded, asker_of
from toolwire_server.listen import AgentListens
from toolwire_server.surface.changes import Hub
from toolwire_server.surface.completion import complete
from toolwire_server.surface.resources import unknown_resource
from toolwire_server.tools.registry import Registry
from toolwire_server.uris import canonical
from toolwire_shared import errors

Context = ServerRequestContext[Any, Any]
GrantOf = Callable[[Context], Grant]


def catalog_handlers(registry: Registry, grant_of: GrantOf, hub: Hub, *, max_listens_per_agent: int) -> dict[str, Any]:
    """The `Server(...)` handler keyword arguments for prompts, resources, completion and subscriptions."""
    resources = registry.resources

    def visible_prompts(who: Grant) -> list[str]:
        return [name for name in registry.prompts if who.allows(name)]

    def shown_resources(who: Grant) -> list[types.Resource]:
        return [r for r in resources.listed() if who.allows_uri(r.uri)]

    def shown_templates(who: Grant) -> list[types.ResourceTemplate]:
        return [t for t in resources.listed_templates() if who.allows(t.uri_template)]

    def visible_resources(who: Grant) -> list[str]:
        return [r.uri for r in shown_resources(who)]

    def visible_templates(who: Grant) -> list[str]:
        return [t.uri_template for t in shown_templates(who)]

    async def on_list_prompts(ctx: Context, params: types.PaginatedRequestParams | None) -> types.ListPromptsResult:
        who = grant_of(ctx)
        return types.ListPromptsResult(prompts=[registry.prompts[n].mcp_prompt() for n in visible_prompts(who)])

    async def on_get_prompt(
        ctx: Context, params: types.GetPromptRequestParams
    ) -> types.GetPromptResult | types.InputRequiredResult:
        who = grant_of(ctx)
        prompt = registry.prompts.get(params.name)
        if prompt is None or not who.allows(prompt.name):
            raise MCPError(code=types.INVALID_PARAMS, message=errors.unknown_prompt(params.name, visible_prompts(who)))
        try:
            return await prompt.get(params.arguments, asker_of(ctx))
        except InputNeeded as asked:  # the prompt asked a question (2026-07-28 rounds): that is the answer
            return asked.result

    async def on_list_resources(ctx: Context, params: types.PaginatedRequestParams | None) -> types.ListResourcesResult:
        return types.ListResourcesResult(resources=shown_resources(grant_of(ctx)))

    async def on_list_templates(
        ctx: Context, params: types.PaginatedRequestParams | None
    ) -> types.ListResourceTemplatesResult:
        return types.ListResourceTemplatesResult(resource_templates=shown_templates(grant_of(ctx)))

    def check_uri(ctx: Context, uri: str) -> str:
        """The URI in canonical form (uris.py), if the caller may read it; refused, the same error as unknown."""
        who = grant_of(ctx)
        target = canonical(uri)
        if target is None or not (who.allows(target) and resources.knows(target)):
            known = [*visible_resources(who), *visible_templates(who)]
            raise unknown_resource(uri, known)
        return target

    async def on_read_resource(ctx: Context, params: types.ReadResourceRequestParams) -> types.ReadResourceResult:
        check_uri(ctx, params.uri)
        return await resources.read(params.uri)

    async def on_subscribe(ctx: Context, params: types.SubscribeRequestParams) -> types.EmptyResult:
        target = check_uri(ctx, params.uri)
        await resources.subscribed(target, grant_of(ctx).agent)
        hub.subscribe(ctx.session, grant_of(ctx), target)
        return types.EmptyResult()

    async def on_unsubscribe(ctx: Context, params: types.UnsubscribeRequestParams) -> types.EmptyResult:
        hub.unsubscribe(ctx.session, canonical(params.uri) or params.uri)
        return types.EmptyResult()

    async def on_completion(ctx: Context, params: types.CompleteRequestParams) -> types.CompleteResult:
        who = grant_of(ctx)
        ref, argument = params.ref, params.argument
        if isinstance(ref, types.PromptReference):
            prompt = registry.prompts.get(ref.name)
            if prompt is None or not who.allows(prompt.name):
                message = texts.unknown_completion("prompt", ref.name, visible_prompts(who))
                raise MCPError(code=types.INVALID_PARAMS, message=message)
            return await complete(prompt.complete, argument.name, argument.value)
        template = resources.template(ref.uri)
        source = resources.template_source(ref.uri) if template is None else None
        if (template is None and source is None) or not who.allows(ref.uri):
            message = texts.unknown_completion("resource template", ref.uri, visible_templates(who))
            raise MCPError(code=types.INVALID_PARAMS, message=message)
        if source is not None:
            return await source.complete(ref.uri, argument.name, argument.value)
        return await complete(template.complete if template else None, argument.name, argument.value)

    return {
        "on_list_prompts": on_list_prompts,
        "on_get_prompt": on_get_prompt,
        "on_list_resources": on_list_resources,
        "on_list_resource_templates": on_list_templates,
        "on_read_resource": on_read_resource,
        "on_subscribe_resource": on_subscribe,
        "on_unsubscribe_resource": on_unsubscribe,
        "on_completion": on_completion,
        "on_subscriptions_listen": AgentListens(hub.bus, grant_of, max_listens_per_agent, resources.subscribed),
    }
