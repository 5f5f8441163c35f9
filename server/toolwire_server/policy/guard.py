"""The policy around every call: the limit rules that match it (`spend` before it runs: a refusal is a readable
`limited` result with the wait in `_meta`, and the tool never runs; `counters.give_back` when a call that holds an
`in_flight` slot ends) and its audit record and metric (`record`, once it ended). The call pipeline's stages apply
them (tools/stages.py: `Limited`, `Audited`), on every path into it, tasks included."""

import logging
import os
import socket
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import anyio.to_thread
import mcp_types as types
from opentelemetry import trace

from toolwire_otel import audit_logs
from toolwire_otel.metrics import record_server_call
from toolwire_server import texts
from toolwire_server.functions.results import TextAnswer
from toolwire_server.policy.audit import NAME_CHARS, AuditLog, AuditRecord, fingerprint
from toolwire_server.policy.config import LimitRule
from toolwire_server.policy.counting import Counters, Refusal, named_wait
from toolwire_shared.results import ERROR_KIND_META, RETRY_AFTER_META, failed_call

REQUEST_RULES_FROM = 1_000_000
"""Counter numbers of the request limits start here, after any call limit's."""
log = logging.getLogger("toolwire.server")


class CallPolicy:
    """Limits (counted in `counters`) and the audit trail (`audit`, if any) for one server's calls."""

    def __init__(
        self,
        rules: list[LimitRule],
        counters: Counters,
        audit: AuditLog | None = None,
        *,
        request_rules: list[LimitRule] | None = None,
        keep_arguments: bool = False,
        secret_fields: frozenset[str] = frozenset(),
        replica: str | None = None,
    ) -> None:
        self.rules, self.counters, self.audit = rules, counters, audit
        self.request_rules = request_rules or []
        self.keep_arguments, self.secret_fields = keep_arguments, secret_fields
        self.replica = replica or f"{socket.gethostname()}:{os.getpid()}"
        self._matching: dict[tuple[str, str], list[tuple[int, LimitRule]]] = {}

    @asynccontextmanager
    async def serving(self) -> AsyncIterator[None]:
        """For as long as a server runs: on its way out (a clean stop, SIGTERM included) the audit records still
        queued are written (and exported, as log records) and the counters' connections closed."""
        try:
            yield
        finally:
            with anyio.CancelScope(shield=True):
                if self.audit is not None:
                    await anyio.to_thread.run_sync(self.audit.close)
                    await anyio.to_thread.run_sync(audit_logs.flush)
                await self.counters.aclose()

    def rules_for(self, agent: str, tool: str) -> list[tuple[int, LimitRule]]:
        found = self._matching.get((agent, tool))
        if found is None:
            found = [(i, rule) for i, rule in enumerate(self.rules) if rule.matches(agent, tool)]
            if len(self._matching) < 100_000:  # agents and tools are few; names an agent made up are not kept
                self._matching[(agent, tool)] = found
        return found

    async def admit_request(self, agent: str) -> Refusal | None:
        """HTTP: one request of `agent`, whatever it asks, against the request limits (counted apart from the call
        limits: their counters are numbered after them)."""
        first = REQUEST_RULES_FROM
        rules = [(first + i, rule) for i, rule in enumerate(self.request_rules) if rule.matches(agent, "*")]
        return await self.counters.take(agent, rules) if rules else None

    async def spend(self, agent: str, tool: str, rules: list[tuple[int, LimitRule]]) -> types.CallToolResult | None:
        """Take one call from each matching rule's counter: None, admitted; else the result the call ends with (a
        readable `limited` with the wait in `_meta`; the same, without a wait, while the shared store is away)."""
        try:
            refusal = await self.counters.take(agent, rules)
        except Exception as exc:  # the shared store is away: fail closed, readably, the tool not run
            log.warning("limits: cannot count %s for agent %r (%s); refused", tool, agent, exc)
            return failed_call("limited", texts.limits_unavailable(tool))
        return None if refusal is None else limited(tool, agent, refusal)

    def record(
        self,
        agent: str,
        tool: str,
        arguments: dict[str, Any] | None,
        result: types.CallToolResult | TextAnswer | None,
        started: float,
        outcome: str,
    ) -> None:
        took = time.perf_counter() - started
        record_server_call(agent, tool, outcome, took)
        if self.audit is None:
            return
        digest, shown = fingerprint(arguments, self.secret_fields)
        context = trace.get_current_span().get_span_context()
        record = AuditRecord(
            at=time.time(),
            agent=agent[:NAME_CHARS],
            tool=tool[:NAME_CHARS],
            arguments_sha256=digest,
            arguments=shown if self.keep_arguments else None,
            outcome=outcome,
            latency_ms=took * 1000,
            result_chars=_size(result),
            trace_id=format(context.trace_id, "032x") if context.is_valid else None,
            replica=self.replica,
        )
        self.audit.append(record)
        if audit_logs.enabled():  # the trace id and the time are the log record's own
            fields = {k: v for k, v in record._asdict().items() if v is not None and k not in ("at", "trace_id")}
            audit_logs.emit_audit_record(record.tool, outcome, record.at, fields)


def limited(tool: str, agent: str, refusal: Refusal) -> types.CallToolResult:
    """The refusal the model reads, with the wait as data for the client to back off exactly that long: rounded up
    to the millisecond, never down, so a call sent after it is admitted (counting.ADMIT_EARLY_S covers a client
    that wakes a little early)."""
    result = failed_call("limited", texts.limited(tool, agent, refusal.reason, _amount(refusal), refusal.wait_s))
    wait = named_wait(refusal.wait_s)
    if wait is not None:
        result.meta = {**(result.meta or {}), RETRY_AFTER_META: wait}
    return result


def _amount(refusal: Refusal) -> float:
    rule = refusal.rule
    value = {"per_minute": rule.per_minute, "per_day": rule.per_day, "in_flight": rule.in_flight}[refusal.reason]
    return float(value or 0)


def outcome_of(result: types.CallToolResult | TextAnswer) -> str:
    """`ok`, or the error kind the result carries."""
    if isinstance(result, TextAnswer) or not result.is_error:
        return "ok"
    kind = (result.meta or {}).get(ERROR_KIND_META)
    return kind if isinstance(kind, str) else "tool_failed"


def _size(result: types.CallToolResult | TextAnswer | None) -> int:
    if result is None:
        return 0
    if isinstance(result, TextAnswer):
        return len(result.text)
    return sum(len(block.text) for block in result.content if isinstance(block, types.TextContent))
