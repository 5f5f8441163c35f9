"""What a tool is, as the model and the harness see it: name, description, schema, and its policy."""

import weakref
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

DEFAULT_TIMEOUT_S = 30.0

# Keys under which the server publishes a tool's policy in the MCP Tool's `_meta`.
META_PREFIX = "io.toolwire/"
META_RISKY = META_PREFIX + "risky"
META_IDEMPOTENT = META_PREFIX + "idempotent"
META_TIMEOUT = META_PREFIX + "timeout_s"
META_MAX_CONCURRENCY = META_PREFIX + "max_concurrency"
IDEMPOTENCY_KEY_META = META_PREFIX + "idempotency_key"
"""Request `_meta` key carrying the idempotency key of a tools/call, so a retried call is answered once."""
RUN_ID_META = META_PREFIX + "run_id"
"""Request `_meta` key carrying the id of the run a tools/call belongs to (many runs may share one connection)."""
SKILL_PREFIX = "skill."
"""An MCP prompt named `skill.NAME` is a skill: saved instructions for one kind of task, which a client with skills
on lists to the model by name and description and loads on demand (client/toolwire_client/skills.py)."""


class ToolPolicy(BaseModel):
    model_config = ConfigDict(frozen=True)

    timeout_s: float = DEFAULT_TIMEOUT_S
    max_concurrency: int | None = None
    risky: bool = False
    """Needs a person's approval before it runs."""
    idempotent: bool = False
    """Safe to send again with the same idempotency key (toolwire's own policy, `_meta` io.toolwire/idempotent)."""
    destructive_hint: bool = False
    """The server's MCP annotations say `destructiveHint: true` and not `readOnlyHint: true`: asks for approval
    unless the user trusts the server (`trusted`)."""
    idempotent_hint: bool = False
    """The server's MCP annotations say `readOnlyHint: true`, or `idempotentHint: true`: allows a resend after a
    crash only when the user trusts the server."""
    trusted: bool = False
    """The user trusts this server's annotations (ServerSpec.trust, `--trust NAME`)."""

    @property
    def resend_ok(self) -> bool:
        """May a call left `sent` by a crash be sent again (same idempotency key)? Toolwire's own idempotency policy,
        or a trusted server's hint; an untrusted server's hint never allows it."""
        return self.idempotent or (self.trusted and self.idempotent_hint)

    def to_meta(self) -> dict[str, Any]:
        meta: dict[str, Any] = {
            META_RISKY: self.risky,
            META_IDEMPOTENT: self.idempotent,
            META_TIMEOUT: self.timeout_s,
        }
        if self.max_concurrency is not None:
            meta[META_MAX_CONCURRENCY] = self.max_concurrency
        return meta

    @classmethod
    def from_meta(cls, meta: dict[str, Any] | None) -> "ToolPolicy":
        meta = meta or {}
        return cls(
            risky=bool(meta.get(META_RISKY, False)),
            idempotent=bool(meta.get(META_IDEMPOTENT, False)),
            timeout_s=float(meta.get(META_TIMEOUT, DEFAULT_TIMEOUT_S)),
            max_concurrency=meta.get(META_MAX_CONCURRENCY),
        )

    def with_annotations(
        self,
        *,
        read_only: bool | None,
        destructive: bool | None,
        idempotent: bool | None,
        trusted: bool,
    ) -> "ToolPolicy":
        """This policy with a listed tool's MCP annotations (`readOnlyHint`, `destructiveHint`, `idempotentHint`;
        None: not given). Only hints a server gives count: a tool with no annotations, or without `destructiveHint`,
        is not taken as destructive (the spec's default is `true`, which would make every tool of every server ask
        for approval); `destructiveHint` and `idempotentHint` mean something only when `readOnlyHint` is not true
        (the spec), and a read-only tool has no effect to repeat."""
        reads_only = read_only is True
        return self.model_copy(
            update={
                "destructive_hint": destructive is True and not reads_only,
                "idempotent_hint": reads_only or idempotent is True,
                "trusted": trusted,
            }
        )


def closed_object(properties: dict[str, Any], required: list[str]) -> dict[str, Any]:
    """The input schema of a tool that takes these arguments and no others (toolwire's own tools)."""
    return {"type": "object", "properties": properties, "required": required, "additionalProperties": False}


class ToolSpec(BaseModel):
    model_config = ConfigDict(frozen=True)

    name: str
    description: str
    input_schema: dict[str, Any] = Field(default_factory=lambda: {"type": "object", "properties": {}})
    output_schema: dict[str, Any] | None = None
    """What its results' `structuredContent` looks like (MCP `outputSchema`); the client checks results against it."""
    policy: ToolPolicy = Field(default_factory=ToolPolicy)
    source: str | None = None
    """Which tool server offers it (for routing and for prefixing duplicate names)."""
    deferred: bool = Field(default=False, exclude_if=lambda deferred: not deferred)
    """Offered for the provider's own tool search, not loaded until it finds it (Anthropic's `defer_loading`);
    left out when False, so the definitions recorded before it load and save unchanged."""


_dumped: dict[int, tuple["weakref.ReferenceType[ToolSpec]", dict[str, Any]]] = {}


def spec_json(spec: ToolSpec) -> dict[str, Any]:
    """`spec.model_dump(mode="json")`, made once per spec object while it lives: the runs offered one listing's
    specs (interned per shared connection) save one dict in their configs, where each made its own copy. Read it,
    never change it. Kept beside the spec, not on it: a private attribute would take part in its equality."""
    key = id(spec)
    found = _dumped.get(key)
    if found is not None and found[0]() is spec:
        return found[1]
    dumped = spec.model_dump(mode="json")
    _dumped[key] = (weakref.ref(spec, lambda _, key=key: _dumped.pop(key, None)), dumped)  # type: ignore[misc]
    return dumped
