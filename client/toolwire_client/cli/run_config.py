"""The options that describe a run (model, servers, limits, strategies, the token economy) and the RunConfig they
make: `run`, `agent serve` and `submit` take them (`submit` names its servers from the workers' file)."""

from collections.abc import Callable, Sequence
from typing import Any, TypeVar

import click

from toolwire_client.cli import servers
from toolwire_client.cli.a2a_agents import A2A_OPTIONS, a2a_specs
from toolwire_client.config import ContextNativeMode, RunConfig, RunLimits, ServerSpec, ToolSearchMode
from toolwire_client.context.native import NativeUnavailable, native_form
from toolwire_client.models import default_spec
from toolwire_client.models.anthropic_cache import PROMPT_CACHE_CHOICES, PromptCache
from toolwire_client.models.media import MEDIA_MODES, MediaMode
from toolwire_client.models.providers import spec_help_wrapped
from toolwire_client.models.script_file import absolute
from toolwire_client.run.context_view import DEFAULT_INLINE_RESULT_CHARS
from toolwire_client.run.limits import DEFAULT_MAX_RESULT_CHARS
from toolwire_client.strategies.code_mode import CodeMode
from toolwire_client.strategies.delegation import Delegation
from toolwire_client.strategies.plan import Planning
from toolwire_client.strategies.review import Review
from toolwire_client.tools.code_mode.sandbox import MontyMissing, require_monty
from toolwire_client.tools.roots import RootMissing, resolved_roots
from toolwire_client.tools.tool_search import TOOL_SEARCH_MODES

F = TypeVar("F", bound=Callable[..., Any])


def config_options(fn: F) -> F:
    """The options that make a run's RunConfig (model, servers, limits, ...) for `run`."""
    for option in reversed([_MODEL_OPTION, *_SERVER_OPTIONS, *_CONFIG_OPTIONS]):
        fn = option(fn)
    return fn


def submitted_config_options(fn: F) -> F:
    """`submit`'s: the same but the servers, which are named from the workers' servers file, and no base URL (a
    worker's secrets go only where its own configuration sends them: trusted_servers.py)."""
    for option in reversed([_MODEL_OPTION, _SERVER_NAME_OPTION, *_CONFIG_OPTIONS]):
        fn = option(fn)
    return fn


def _count(flag: str, *, default: int, minimum: int, help: str) -> Callable[[Any], Any]:
    """A whole-number option, its default shown in --help; a value under `minimum` is a usage error."""
    return click.option(flag, default=default, show_default=True, type=click.IntRange(min=minimum), help=help)


def _choice(flag: str, choices: Sequence[str], *, default: str, help: str) -> Callable[[Any], Any]:
    """An option that takes one of `choices`, its default shown in --help."""
    return click.option(flag, type=click.Choice(choices), default=default, show_default=True, help=help)


_MODEL_OPTION = click.option(
    "--model",
    "model_spec",
    metavar="SPEC",
    callback=lambda ctx, param, spec: absolute(spec) if spec else spec,  # script:FILE, found again on resume
    help=spec_help_wrapped(),
)
_SERVER_NAME_OPTION = servers.name_option(
    "--server",
    "server_names",
    "A tool server of the workers' servers file (`toolwire worker --servers FILE`), by name (repeatable).",
)
_SERVER_OPTIONS: list[Callable[[Any], Any]] = [
    click.option("--base-url", metavar="URL", help="Provider base URL (an OpenAI-compatible local server, a proxy)."),
    *servers.CONNECTION_OPTIONS,
    *A2A_OPTIONS,
    click.option(
        "--trust",
        multiple=True,
        metavar="SERVER",
        help="Trust this server's MCP tool annotations (by its name in the run): its destructive tools run without "
        "approval and its idempotent ones are sent again after a crash; never waives --risky.",
    ),
    click.option(
        "--allow-sampling",
        "allow_sampling",
        multiple=True,
        metavar="SERVER",
        help="Let this server (by its name in the run) borrow the run's model (MCP sampling), charged to the run's "
        "budgets and capped by --max-sampling; other servers are refused.",
    ),
    click.option(
        "--root",
        "roots",
        multiple=True,
        metavar="PATH",
        help="Tell the tool servers they may work in this folder (MCP roots; repeatable); none: no roots offered.",
    ),
]
_CONFIG_OPTIONS: list[Callable[[Any], Any]] = [
    click.option(
        "--tool-choice",
        metavar="auto|required|none|TOOL",
        help="Whether the model must call a tool: auto (the default, sent explicitly), required, none, or a tool's "
        "name.",
    ),
    _choice(
        "--prompt-cache",
        PROMPT_CACHE_CHOICES,
        default="5m",
        help="Anthropic cache breakpoints on the tools, system prompt and growing message prefix, and their TTL.",
    ),
    click.option(
        "--stream",
        is_flag=True,
        help="Stream the model's replies (anthropic, openai, openai-responses) and print their text live above the "
        "step table.",
    ),
    _choice(
        "--media",
        MEDIA_MODES,
        default="auto",
        help="Send the images (and audio) tools return to the model: auto (to the provider's own endpoint, not a "
        "--base-url server), on, off (text descriptions only).",
    ),
    click.option(
        "--no-read-resources",
        "read_resources",
        is_flag=True,
        flag_value=False,
        default=True,
        help="Do not offer the read_resource tool (offered once a server lists resources or a tool result links one).",
    ),
    click.option("--allow", multiple=True, metavar="GLOB", help="Only these tools (client-side allow-list)."),
    _choice(
        "--tool-search",
        TOOL_SEARCH_MODES,
        default="off",
        help="Offer a search_tools tool (and the --keep-tool tools) instead of every tool; what a search finds is "
        "loaded for the next request. auto: on past 30 tools or 8,000 tokens of definitions.",
    ),
    click.option(
        "--keep-tool",
        "keep_tools",
        multiple=True,
        metavar="GLOB",
        help="With --tool-search: always offer this tool in full (repeatable).",
    ),
    click.option("--risky", multiple=True, metavar="TOOL", help="Also pause for approval before this tool."),
    click.option(
        "--review",
        "criteria",
        multiple=True,
        metavar="CRITERION",
        help="Reflection: check each draft final answer against this (repeatable); a failing draft is sent back.",
    ),
    _count("--review-retries", default=1, minimum=0, help="How many drafts a review may send back."),
    click.option(
        "--delegate",
        "delegate",
        is_flag=True,
        help="Sub-agents: offer a delegate tool that runs part of the task as a child run with its own conversation, "
        "a subset of the tools and a share of the remaining budget.",
    ),
    click.option(
        "--code-mode",
        type=click.Choice(["on", "only"]),
        is_flag=False,
        flag_value="on",
        default=None,
        help="Code mode: offer run_code, a Python script over the tools run in the Monty sandbox (durable: resumed at "
        "its last tool call); `--code-mode only` offers nothing else. Needs `pip install 'toolwire[code]'`.",
    ),
    click.option(
        "--skills",
        is_flag=True,
        help="Skills: list the skills the servers offer (MCP prompts named skill.*) in a load_skill tool, which "
        "loads one's full text when the model asks for it.",
    ),
    click.option(
        "--plan",
        "planned",
        is_flag=True,
        help="Plan-and-execute: a numbered plan first, then its steps one by one; a step that fails is replanned.",
    ),
    _count(
        "--max-replans",
        default=1,
        minimum=0,
        help="With --plan: how many new plans a failed step may get before the run stops.",
    ),
    click.option("--system", help="System prompt."),
    _count("--max-steps", default=12, minimum=1, help="Step limit."),
    click.option("--max-tokens", type=click.IntRange(min=1), help="Token budget, checked before each model call."),
    click.option(
        "--max-cost", type=click.FloatRange(min=0, min_open=True), help="Budget in USD, checked before each model call."
    ),
    click.option(
        "--max-wall",
        type=click.FloatRange(min=0, min_open=True),
        help="Wall-clock limit for the whole run, in seconds.",
    ),
    click.option(
        "--tool-timeout",
        type=click.FloatRange(min=0, min_open=True),
        metavar="SECONDS",
        help="Timeout of every tool call, in seconds, instead of each tool's own.",
    ),
    _count(
        "--max-sampling",
        default=RunLimits().max_sampling_requests,
        minimum=0,
        help="How many sampling requests (a server borrowing the model, --allow-sampling) the run answers.",
    ),
    _count(
        "--max-result-chars",
        default=DEFAULT_MAX_RESULT_CHARS,
        minimum=100,
        help="Cut any tool result longer than this (from any server), with a note asking the model for less.",
    ),
    _count(
        "--inline-result-chars",
        default=DEFAULT_INLINE_RESULT_CHARS,
        minimum=0,
        help="Send a longer result as its head and a handle; the read_result tool reads the rest (0: all inline).",
    ),
    click.option(
        "--context-budget",
        type=click.IntRange(min=500),
        metavar="TOKENS",
        help="Keep each request under this: clear the oldest results to stubs, then summarise older turns.",
    ),
    _choice(
        "--context-native",
        ["auto", "on", "off"],
        default="auto",
        help="Keep the context budget with the provider's own compaction (Anthropic, OpenAI Responses): auto "
        "where it has one (old results still cleared by toolwire: cheaper), on (Anthropic's context editing "
        "too; an error where there is none), off (toolwire's own).",
    ),
]


def config_from(
    *,
    model_spec: str | None,
    base_url: str | None = None,
    commands: list[servers.Command] | None = None,
    urls: list[servers.Url] | None = None,
    token_env: str | None = None,
    server_env: tuple[dict[str, str], list[str]] = ({}, []),
    server_names: list[str] | None = None,
    a2a_agents: tuple[str, ...] = (),
    a2a_token_env: str | None = None,
    tool_choice: str | None,
    prompt_cache: PromptCache,
    stream: bool,
    media: MediaMode = "auto",
    read_resources: bool = True,
    allow: tuple[str, ...],
    risky: tuple[str, ...],
    tool_search: ToolSearchMode = "off",
    keep_tools: tuple[str, ...] = (),
    trust: tuple[str, ...] = (),
    allow_sampling: tuple[str, ...] = (),
    roots: tuple[str, ...] = (),
    criteria: tuple[str, ...],
    review_retries: int,
    delegate: bool,
    skills: bool,
    planned: bool,
    code_mode: str | None = None,
    max_replans: int,
    system: str | None,
    max_steps: int,
    max_tokens: int | None,
    max_cost: float | None,
    max_wall: float | None,
    max_result_chars: int = DEFAULT_MAX_RESULT_CHARS,
    tool_timeout: float | None = None,
    max_sampling: int = RunLimits().max_sampling_requests,
    inline_result_chars: int = DEFAULT_INLINE_RESULT_CHARS,
    context_budget: int | None = None,
    context_native: ContextNativeMode = "auto",
) -> RunConfig:
    """The RunConfig the config options describe; a combination that makes no sense is a usage error.
    `server_names`: a submitted run's servers, by their names in the workers' servers file."""
    if server_names is not None:
        if not server_names:
            raise click.UsageError("name at least one tool server of the workers' servers file: --server NAME")
        specs = [ServerSpec(name=name) for name in server_names]
    elif not commands and not urls and not a2a_agents:
        raise click.UsageError("name at least one tool server: --server 'CMD' or --server-url URL")
    else:
        specs = servers.server_specs(commands or [], urls or [], token_env, server_env)
    for option, names in (("--trust", trust), ("--allow-sampling", allow_sampling)):
        unknown = sorted(set(names) - {spec.name for spec in specs})
        if unknown:
            named = ", ".join(str(spec.name) for spec in specs)
            raise click.UsageError(
                f"{option} {unknown[0]}: no tool server of this run has that name (its servers: {named})"
            )
    try:
        folders = resolved_roots(list(roots))
    except RootMissing as exc:
        raise click.UsageError(str(exc)) from exc
    specs = [
        spec.model_copy(update={"trust": spec.name in trust, "sampling": spec.name in allow_sampling, "roots": folders})
        for spec in specs
    ]
    if keep_tools and tool_search == "off":
        raise click.UsageError("--keep-tool applies with tool search: add --tool-search on (or auto)")
    if max_replans != 1 and not planned:
        raise click.UsageError("--max-replans applies to planned runs: add --plan (e.g. --plan --max-replans 2)")
    if code_mode is not None:
        try:
            require_monty()
        except MontyMissing as exc:
            raise click.UsageError(f"--code-mode: {exc}") from exc
    limits = RunLimits(
        max_steps=max_steps,
        max_tokens=max_tokens,
        max_cost_usd=max_cost,
        max_wall_s=max_wall,
        max_result_chars=max_result_chars,
        tool_timeout_s=tool_timeout,
        max_sampling_requests=max_sampling,
    )
    config = RunConfig(
        model=model_spec or default_spec(),
        base_url=base_url,
        tool_choice=tool_choice,
        prompt_cache=prompt_cache,
        stream=stream,
        media=media,
        read_resources=read_resources,
        servers=specs,
        a2a_agents=a2a_specs(a2a_agents, a2a_token_env),
        system=system,
        limits=limits,
        risky_tools=list(risky),
        review=Review(criteria=list(criteria), max_retries=review_retries) if criteria else None,
        delegate=Delegation() if delegate else None,
        skills=skills,
        code_mode=CodeMode(only=code_mode == "only") if code_mode is not None else None,
        plan=Planning(max_replans=max_replans) if planned else None,
        allow=list(allow) or None,
        tool_search=tool_search,
        keep_tools=list(keep_tools),
        inline_result_chars=inline_result_chars or None,
        context_budget=context_budget,
        context_native=context_native,
    )
    try:
        native_form(config)
    except NativeUnavailable as exc:
        raise click.UsageError(str(exc)) from exc
    return config
