"""One configuration for every run, as data: the limits, the tool servers and the model, saved with the run so any
entry point (`run`, `resume`, `demo`, `eval`, replay) rebuilds exactly the same agent (assembly/ builds it)."""

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from toolwire_client.models.anthropic_cache import PromptCache
from toolwire_client.models.media import MediaMode
from toolwire_client.run.context_view import DEFAULT_INLINE_RESULT_CHARS
from toolwire_client.run.limits import RunLimits
from toolwire_client.run.state import RunState
from toolwire_client.strategies.code_mode import CodeMode
from toolwire_client.strategies.delegation import Delegation
from toolwire_client.strategies.plan import Planning
from toolwire_client.strategies.review import Review
from toolwire_client.strategies.workflow import Workflow
from toolwire_shared.ids import new_run_id
from toolwire_shared.messages import Message, SystemMessage, UserMessage
from toolwire_shared.tools import ToolSpec


class OAuthClientSpec(BaseModel):
    """OAuth client credentials for an HTTP server that takes access tokens: the secret stays in the environment."""

    model_config = ConfigDict(extra="forbid")

    token_url: str
    """The issuer's token endpoint."""
    client_id: str
    client_secret_env: str
    """Name of the environment variable holding the client secret."""
    scope: str | None = None
    resource: str | None = None
    """RFC 8707 resource indicator; defaults to the server's url (the audience its tokens must name)."""
    audience: str | None = None
    """Sent as `audience` too, for issuers that want it instead of `resource`."""


class ServerSpec(BaseModel):
    """One tool server of a run: a stdio command or a Streamable HTTP URL. Secrets are never saved: only the name
    of the environment variable that holds the bearer token."""

    model_config = ConfigDict(extra="forbid")

    command: list[str] | None = None
    url: str | None = None
    name: str | None = None
    """Used to prefix tool names two servers share; defaults to server1, server2, ..."""
    env: dict[str, str] = Field(default_factory=dict)
    """Set for a stdio server on top of the minimal environment it starts with (tools/server_env.py); saved with
    the run, so never a secret: name a secret's variable in pass_env instead."""
    pass_env: list[str] = Field(default_factory=list)
    """Variables a stdio server gets from the environment of the process that starts it (a key it needs); the
    names are saved, never the values."""
    cwd: str | None = None
    token_env: str | None = None
    """Name of the environment variable holding the bearer token for an HTTP server, read where the run runs."""
    oauth: OAuthClientSpec | None = None
    """An HTTP server's token from the OAuth client-credentials grant instead (fetched, refreshed before expiry)."""
    trust: bool = False
    """Trust the server's MCP tool annotations (`--trust NAME`): its `destructiveHint` tools run without asking for
    approval, and its `idempotentHint` (or `readOnlyHint`) tools are sent again after a crash. Never waives a
    `--risky` nor the server's own `risky=True` (docs/durable-runs.md)."""
    instructions: bool = True
    """Join the server's MCP `instructions` to a new run's system prompt (saved with the run's opening system
    message, so resume and replay see the same prompt); False: they are not used."""
    sampling: bool = False
    """Let the server borrow the run's model (MCP sampling, `--allow-sampling NAME`): its requests are answered by
    the run's model, charged to the run's budgets and capped by `RunLimits.max_sampling_requests`. Off: the
    capability is not advertised and a request is refused. Only the user's own config turns it on (a fleet run's
    comes from the worker's servers file)."""
    roots: list[str] = Field(default_factory=list)
    """Folders the server is told it may work in (MCP roots, `--root PATH`): absolute paths, each must exist when the
    server starts. None: the roots capability is not advertised."""
    risky: list[str] = Field(default_factory=list)
    """Tools of this server that always wait for a person's approval, by their names on the server (a servers file's
    `risky = [...]`): what `--risky` does for one server, never waived by `trust`. A name the server does not list
    stops the run before it starts."""

    @model_validator(mode="after")
    def _one_transport(self) -> "ServerSpec":
        if self.command is not None and self.url is not None:
            raise ValueError('a server needs exactly one of command = ["python", "server.py"] or url = "http://..."')
        if self.is_reference and (self.name is None or self.env or self.pass_env or self.cwd or self.token_env):
            raise ValueError(
                'a server needs command = ["python", "server.py"] or url = "http://..." (or only a name, for a '
                "server of the servers file of the process that runs it)"
            )
        if self.command is not None and not self.command:
            raise ValueError("a server's command is empty")
        if self.oauth is not None and (self.url is None or self.token_env is not None):
            raise ValueError("oauth is for an HTTP server (url = ...) and replaces token_env: give one of them")
        return self

    @property
    def is_reference(self) -> bool:
        """Only a name: a server of the servers file of the process that runs it (a fleet run names its servers so;
        see trusted_servers.py)."""
        return self.command is None and self.url is None

    def expand(self, values: dict[str, str]) -> "ServerSpec":
        """Fill {python} (this interpreter), {here} (the eval file's folder), {attempt_dir} (a fresh folder per run),
        {run_id} (in a servers file: the run the server is started for)."""

        def fill(text: str) -> str:
            for key, value in values.items():
                text = text.replace("{" + key + "}", value)
            return text

        return self.model_copy(
            update={
                "command": [fill(part) for part in self.command] if self.command else None,
                "url": fill(self.url) if self.url else None,
                "env": {key: fill(value) for key, value in self.env.items()},
                "cwd": fill(self.cwd) if self.cwd else None,
            }
        )


ToolSearchMode = Literal["auto", "on", "off"]
"""Tool search (tools/tool_search.py): on, off, or on past 30 tools or 8,000 tokens of definitions."""
ContextNativeMode = Literal["auto", "on", "off"]
"""The context budget kept by the provider's own mechanism where it has one (context/native.py)."""


class A2AAgentSpec(BaseModel):
    """A remote A2A agent a run calls as a tool (`--a2a-agent [NAME=]URL`; tools/a2a_source.py): its base URL (the
    Agent Card is at URL/.well-known/agent-card.json), its name in the run, and the variable holding its token."""

    model_config = ConfigDict(extra="forbid")

    url: str
    name: str
    token_env: str | None = None
    """Name of the environment variable holding the bearer token it wants, read where the run runs."""


class RunConfig(BaseModel):
    """The agent's whole configuration, kept in RunState.config (as JSON) from the run's first checkpoint on."""

    model: str
    """A model spec for make_model: 'anthropic:NAME', 'openai:NAME', 'openai-responses:NAME', 'scripted:NAME'."""
    base_url: str | None = None
    """The provider's base URL when it is not the default (an OpenAI-compatible local server, a proxy)."""
    tool_choice: str | None = None
    """"auto" when unset, "required", "none", or a tool's name to force that tool on every call."""
    prompt_cache: PromptCache = "5m"
    """The TTL of Anthropic's cache breakpoints ("off", "5m", "1h"); other providers cache on their own."""
    stream: bool = False
    """Ask the provider for a streamed reply (each text delta reaches the Agent's on_text as it arrives)."""
    media: MediaMode = "auto"
    """Which of the tools' images and audio the model is sent, beside their text descriptions: "auto" (images to
    the provider's own endpoint, none through a custom base URL), "on", "off" (models/media.py)."""
    read_resources: bool = True
    """Offer the client's `read_resource` tool once a server lists resources or returns a resource link
    (tools/resource_reader.py); it reads only from the server that listed or linked the URI."""
    servers: list[ServerSpec] = Field(default_factory=list)
    a2a_agents: list[A2AAgentSpec] = Field(default_factory=list)
    """Remote A2A agents offered as tools, one `ask_NAME` tool each (tools/a2a_source.py)."""
    name: str = "agent"
    system: str | None = None
    limits: RunLimits = Field(default_factory=RunLimits)
    risky_tools: list[str] = Field(default_factory=list)
    review: Review | None = None
    """Reflection: check each draft final answer against these criteria before it stands."""
    delegate: Delegation | None = None
    """Sub-agents: offer the `delegate` tool, which runs part of the task as a child run (delegate.py)."""
    code_mode: CodeMode | None = None
    """Code mode: offer `run_code`, a script over the run's tools run in the Monty sandbox (tools/code_mode/)."""
    skills: bool = False
    """Skills: offer `load_skill`, with the index of the skills (prompts named `skill.*`) the servers offer; the
    model loads a skill's full text when it needs it (skills.py). Off by default: it adds a tool to every request."""
    plan: Planning | None = None
    """Plan-and-execute: a numbered plan first, then its steps one by one, a new plan when a step fails."""
    workflow: Workflow | None = None
    """A path written in code: its steps run in order, each a model turn (see workflow.py); not with `plan`."""
    allow: list[str] | None = None
    tool_search: ToolSearchMode = "off"
    """Offer `search_tools` and the `keep_tools` instead of every tool, loading what a search finds (natively on
    Anthropic): "on", "off", or "auto" (on past 30 tools or 8,000 tokens of definitions)."""
    keep_tools: list[str] = Field(default_factory=list)
    """With tool search on: the tools (names or globs) always offered in full."""
    inline_result_chars: int | None = Field(default=DEFAULT_INLINE_RESULT_CHARS, ge=1)
    """A tool result longer than this reaches the model as its head, its size and a handle: the whole result stays
    in the run, and the `read_result` tool reads any part of it (tools/kept_results.py). None: every result whole."""
    context_budget: int | None = Field(default=None, ge=1)
    """The most tokens a request may hold: past it the oldest results are cleared to a stub, then older turns
    summarised by the run's model (context/, docs/token-economy.md). None: every request sends the whole list."""
    context_native: ContextNativeMode = "auto"
    """With a context budget: keep it by the provider's own mechanism where the run's provider has one (Anthropic's
    context editing and compaction, OpenAI Responses' `responses/compact`; context/native.py): "auto" (where it
    has one), "on" (an error where it has none), "off" (toolwire's own clearing and summaries)."""
    tools: list[ToolSpec] = Field(default_factory=list)
    """The tool definitions the model was offered (filled when the run starts; replay offers the same ones)."""
    eval_task: str | None = None
    """The eval task this run was an attempt at, when `toolwire eval` started it."""

    @model_validator(mode="after")
    def _one_path(self) -> "RunConfig":
        if self.plan is not None and self.workflow is not None:
            raise ValueError("a run follows either a plan the model makes (plan=...) or a workflow, not both")
        return self


def config_of(state: RunState) -> RunConfig:
    if not state.config:
        raise ValueError(
            f"run {state.run_id} has no saved config (model and tool servers), so it cannot be rebuilt here; "
            "start runs with `toolwire run` so their config is saved"
        )
    return RunConfig.model_validate(state.config)


def open_run(
    task: str,
    config: RunConfig,
    *,
    model: str | None = None,
    run_id: str | None = None,
    parent: tuple[str, str] | None = None,
) -> RunState:
    """A new run of `task` under `config`, as every caller opens one (Agent.run, `toolwire submit`): the system
    prompt, if any, and the task as its first messages. `model`: the model's own name (by default the spec's part
    after the provider); `parent`: the run and delegate call id a sub-agent's run is started by."""
    opening: list[Message] = [SystemMessage(content=config.system)] if config.system else []
    return RunState(
        run_id=run_id or new_run_id(),
        agent_name=config.name,
        task=task,
        model=model or config.model.partition(":")[2] or config.model,
        messages=[*opening, UserMessage(content=task)],
        parent_run_id=parent[0] if parent else None,
        parent_call_id=parent[1] if parent else None,
    )


__all__ = ["A2AAgentSpec", "OAuthClientSpec", "RunConfig", "RunLimits", "ServerSpec", "config_of", "open_run"]
