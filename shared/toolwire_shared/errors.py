"""The error texts the model reads. One wording on both sides: a failure says what was wrong and what a
correct call looks like, so the model can repair the call on its next step."""

import json
from collections.abc import Iterable
from typing import Any

QUOTE_CHARS = 200
"""How much of a caller's value (an argument, a tool name) an error quotes: never a hostile value whole."""


def clip(text: str, limit: int) -> str:
    """`text` if it fits in `limit` characters, else its start and how long it was."""
    if len(text) <= limit:
        return text
    return f"{text[:limit]}... [cut: {len(text)} characters in all]"


def quoted(value: Any, limit: int = QUOTE_CHARS) -> str:
    """`repr(value)`, clipped."""
    return clip(repr(value), limit)


def unknown_tool(name: str, available: Iterable[str]) -> str:
    names = sorted(available)
    listing = ", ".join(names) if names else "(none)"
    return f"ERROR: unknown tool '{clip(name, QUOTE_CHARS)}'. Tools you may call: {listing}."


def example_call(name: str, schema: dict[str, Any]) -> str:
    """A correct call built from the schema: required arguments with a placeholder of the right type."""
    props: dict[str, Any] = schema.get("properties", {})
    required = schema.get("required", list(props))
    args = {key: _placeholder(props.get(key, {})) for key in required}
    return f"{name}({json.dumps(args)})"


def _placeholder(prop: dict[str, Any]) -> Any:
    if "enum" in prop:
        return prop["enum"][0]
    if "default" in prop:
        return prop["default"]
    kind = prop.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), "string")
    examples = {"string": "...", "integer": 1, "number": 1.0, "boolean": True, "array": [], "object": {}}
    if kind == "integer" and "minimum" in prop:
        return prop["minimum"]
    return examples.get(kind or "string", "...")


def bad_arguments(name: str, problems: list[str], schema: dict[str, Any]) -> str:
    props = schema.get("properties", {})
    return (
        f"ERROR: bad arguments for {name}: {'; '.join(problems)}. "
        f"{name} expects {json.dumps(props)} (required: {schema.get('required', [])}). "
        f"A correct call looks like {example_call(name, schema)}."
    )


def more_problems(count: int) -> str:
    return f"and {count} more problems"


def unparseable_arguments(name: str, raw: str, problem: str) -> str:
    shown = raw if len(raw) <= 200 else raw[:200] + "..."
    return (
        f"ERROR: the arguments for {name} are not a JSON object ({problem}): {shown!r}. "
        "Send the arguments as one JSON object."
    )


def tool_failed(name: str, message: str) -> str:
    return f"ERROR: {name} failed: {message}"


def output_problem(where: str, message: str, value: Any) -> str:
    """One way a result differs from the tool's output schema; `where` is the path inside the result."""
    return f"at '{clip(where, QUOTE_CHARS) or '(result)'}': {clip(message, QUOTE_CHARS)} (got {quoted(value)})"


def undescribable_output(tool: str, annotation: str, problem: str) -> str:
    return (
        f"tool '{tool}': its return annotation {annotation} cannot be made into an output schema ({problem}). "
        "Return a pydantic model, a TypedDict (from typing_extensions below Python 3.12), a dataclass, "
        "or a list/dict of them; or annotate it `-> Any` for no structured output."
    )


def no_structured_output() -> str:
    return "the tool declares an output schema, but the result has no structuredContent"


def invalid_output_schema(problem: str) -> str:
    return f"the tool's output schema is not valid JSON Schema ({clip(problem, QUOTE_CHARS)})"


def bad_output(name: str, problems: list[str]) -> str:
    return (
        f"ERROR: {name} returned a result that does not match its own output schema: {'; '.join(problems)}. "
        "The result was discarded. This is a fault in the tool, not in your call: do not repeat the call "
        "unchanged; use another tool, or answer with what you have."
    )


def unknown_prompt(name: str, known: Iterable[str]) -> str:
    listing = ", ".join(sorted(known)) or "(none)"
    return f"unknown prompt '{clip(name, QUOTE_CHARS)}'. Prompts on this server: {listing}."


def bad_prompt_arguments(name: str, problems: list[str], example: dict[str, Any]) -> str:
    return (
        f"bad arguments for prompt '{name}': {'; '.join(problems)}. "
        f"Prompt arguments are strings; a correct prompts/get looks like {json.dumps(example)}."
    )


def prompt_failed(name: str, message: str) -> str:
    return f"prompt '{name}' failed: {message}"


def unknown_resource(uri: str, known: Iterable[str]) -> str:
    listing = ", ".join(known) or "(none)"
    return f"unknown resource '{clip(uri, QUOTE_CHARS)}'. Resources and templates on this server: {listing}."


def bad_resource_uri(uri: str, problems: list[str]) -> str:
    return f"bad resource URI '{clip(uri, QUOTE_CHARS)}': {'; '.join(problems)}."


def resource_failed(uri: str, message: str) -> str:
    return f"reading resource '{clip(uri, QUOTE_CHARS)}' failed: {message}"


def template_mismatch(template: str, variables: Iterable[str], params: Iterable[str]) -> str:
    return (
        f"resource template '{template}' has the variables {sorted(variables)}, but its function takes "
        f"{sorted(params)}: give the function exactly one parameter per variable, e.g. "
        "@registry.resource_template('orders://{order_id}') def order(order_id: str) -> str"
    )


def unknown_completion(kind: str, name: str, known: Iterable[str]) -> str:
    listing = ", ".join(sorted(known)) or "(none)"
    return f"nothing to complete: no {kind} '{clip(name, QUOTE_CHARS)}' on this server (known: {listing})."


def completion_failed(argument: str, message: str) -> str:
    return f"completing '{clip(argument, QUOTE_CHARS)}' failed: {message}"


def worker_lost(exitcode: int | None) -> str:
    return (
        f"its worker process ended during the call (exit code {exitcode}), so it may have done part of its work. "
        "Check its effect before repeating it."
    )


def timed_out(name: str, seconds: float) -> str:
    return (
        f"ERROR: {name} timed out after {seconds:g} s and was cancelled. "
        "Try again with a narrower request, or use another tool."
    )


def refused(name: str, agent: str | None) -> str:
    who = f"agent '{agent}'" if agent else "this caller"
    return f"ERROR: tool '{name}' is not permitted for {who}."


def truncated_note(kept: int, total: int) -> str:
    return (
        f"\n[toolwire: result cut to {kept} of {total} characters. "
        "Ask for less: narrow the query, filter, or request one item at a time.]"
    )


def rejected(reason: str) -> str:
    return f"ERROR: a person rejected this action: {reason}"


def outcome_unknown(name: str) -> str:
    return (
        f"ERROR: the outcome of this {name} call is unknown: it was sent, but the run stopped before its result "
        "came back, and the tool is not idempotent, so it was not sent again. Check its effect before repeating it."
    )


def repeated(call: str, times: int) -> str:
    return (
        f"ERROR: {call} was asked for {times} times with the same arguments and was not run again. "
        "Change your approach: different arguments, another tool, or answer with what you have."
    )


def not_run(why: str) -> str:
    return f"ERROR: not run: {why}"


def blocked(name: str, reason: str) -> str:
    return f"ERROR: the harness blocked this {name} call: {reason}. Change the call or use another tool."


def changed_after_approval() -> str:
    return rejected("the arguments changed after they were approved")


def transport_failed(name: str, problem: str, *, retried: bool) -> str:
    again = (
        "It was sent again with the same idempotency key and failed again."
        if retried
        else "It was not sent again because it is not idempotent; check its effect before repeating it."
    )
    return tool_failed(name, f"the tool server connection failed ({problem}). {again}")


def not_recorded(name: str, call_id: str) -> str:
    return f"ERROR: replay: the recorded run has no result for {name} call {call_id}; it was never sent there"


# What the server answers to a peer that broke the protocol (a person reads these, through the client's error).


def parse_error(problem: str) -> str:
    return f"Parse error: the line is not JSON ({problem}). Send one JSON-RPC message per line, as UTF-8 JSON."


INVALID_REQUEST = (
    'Invalid Request: the line is JSON but not a JSON-RPC 2.0 message (an object with "jsonrpc": "2.0", a '
    '"method", and an "id" for a request).'
)


def line_too_long(size: int, limit: int) -> str:
    return (
        f"Request too large: a line of {size} bytes; this server reads at most {limit} bytes per line "
        "(--max-line-bytes). The line was skipped; send smaller arguments."
    )


def not_initialized(method: str) -> str:
    return (
        f"Server not initialized: '{clip(method, QUOTE_CHARS)}' came before the initialize handshake. Send "
        "'initialize' (then 'notifications/initialized') first, or the 2026-07-28 per-request '_meta' envelope."
    )


def body_timeout(seconds: float) -> str:
    return (
        f"the request body did not arrive within {seconds:g} s of its headers; the connection is closed. "
        "Send the whole body at once."
    )


SESSION_NOT_YOURS = (
    "this Mcp-Session-Id belongs to a session another agent opened; a session is bound to the token that "
    "opened it. Open your own session (initialize) with your token."
)


def too_many_sessions(agent: str, limit: int) -> str:
    return (
        f"agent '{agent}' has {limit} sessions open and none of them is idle; this server allows {limit} per agent. "
        "Close a session (HTTP DELETE with its Mcp-Session-Id) or reuse one."
    )


def too_many_listens(agent: str, limit: int) -> str:
    return (
        f"agent '{agent}' has {limit} subscriptions/listen streams open; this server allows {limit} per agent "
        "(toolwire serve --max-listen-streams-per-agent). Close one, or listen for several things on one stream."
    )


def server_full(limit: int) -> str:
    return f"this server has {limit} sessions open and none of them is idle; try again later."


def sessions_off(workers: int) -> str:
    return (
        f"this tool server runs {workers} processes on one port, so it serves only the stateless 2026-07-28 "
        "protocol: a legacy session (initialize, then Mcp-Session-Id) would not find its process again. Connect "
        "with a 2026-07-28 client (the MCP SDK's default mode), or use replicas on their own ports behind a proxy "
        "that routes sessions (toolwire's deploy/nginx.conf)."
    )


# What the HTTP server answers a request whose Host or Origin is not its own (DNS-rebinding protection: 421/403).

NO_HOST = "the request has no Host header. Send the Host of the URL you connect to."
ORIGIN_NULL = (
    "requests from a web page with 'Origin: null' (a sandboxed frame, a file: page) are never served: it does not "
    "say which site the page is from. Clients that are not browsers send no Origin."
)


def host_refused(host: str, option: str | None) -> str:
    text = (
        f"this server does not answer to the name in 'Host: {host}': it answers to its own names only, so a web page "
        "on another name cannot reach it by pointing that name at this machine (DNS rebinding)."
    )
    if option is None:
        return text + " That Host is not a valid name[:port]."
    name = option.rsplit(":", 1)[0] if not option.endswith("]") else option
    return (
        f"{text} If clients really reach this server by that name, start it with '--allowed-host {option}' "
        f"(or '--allowed-host {name}:*' for any port)."
    )


def origin_refused(origin: str, option: str | None) -> str:
    text = (
        f"this server does not serve requests from web pages at 'Origin: {origin}': only pages of its own names "
        "and port, so a page elsewhere cannot use a visitor's browser to call the tools. Clients that are not "
        "browsers send no Origin."
    )
    if option is None:
        return text
    return f"{text} If that page should call these tools, start the server with '--allowed-origin {option}'."


# What the HTTP Gate answers a caller it does not let in (401/403/503 bodies; the short texts also go into
# WWW-Authenticate's error_description).

NO_TOKEN = "no bearer token was sent"
TOKEN_NOT_RECOGNISED = "the bearer token is not recognised"


def unauthorized(problem: str, *, issuer: str | None = None, resource: str | None = None, metadata: str = "") -> str:
    how = "a token from this server's access config"
    if issuer:
        how += f", or an OAuth access token from {issuer} for the resource {resource} (how to get one: {metadata})"
    return f"{problem}. Send the header 'Authorization: Bearer <token>' with {how}."


TOKEN_MALFORMED = "the bearer token is neither a token from the access config nor a well-formed JWT"
TOKEN_EXPIRED = "the access token has expired (exp)"
TOKEN_NOT_YET_VALID = "the access token is not valid yet (nbf or iat lies in the future)"
TOKEN_BAD_SIGNATURE = "the access token's signature does not verify against the issuer's keys"
SCOPE_MISSING = "the access token lacks a required scope"


def token_algorithm(alg: str, accepted: Iterable[str]) -> str:
    return f"the access token's algorithm {quoted(alg, 24)} is not accepted (accepted: {', '.join(accepted)})"


def token_unknown_key(kid: str | None) -> str:
    if kid is None:
        return "the access token names no signing key (kid) and the issuer publishes several"
    return f"the access token's signing key {quoted(kid, 60)} is not among the issuer's published keys"


def token_audience(resource: str) -> str:
    return f"the access token was issued for another resource: its aud must name {resource}"


def token_issuer(issuer: str) -> str:
    return f"the access token was not issued by {issuer} (iss)"


def token_lacks_claim(claim: str) -> str:
    return f"the access token has no '{clip(claim, 40)}' claim"


def token_refused(problem: str, issuer: str, metadata: str) -> str:
    return (
        f"{problem}. Send 'Authorization: Bearer <token>' with a current access token from {issuer} for this server "
        f"(its protected-resource metadata: {metadata})."
    )


def insufficient_scope(missing: Iterable[str], required: Iterable[str]) -> str:
    return (
        f"the access token is valid but lacks the scope(s) {', '.join(missing)}. Request a token with "
        f'scope "{" ".join(required)}" and send it again.'
    )


def unknown_subject(claim: str, value: str) -> str:
    return (
        f"the access token is valid, but its {clip(claim, 40)} {quoted(value, 80)} is no agent of this server. "
        f"Ask its operator to add an agent with subject = {quoted(value, 80)} to the access config."
    )


def keys_unavailable(issuer: str) -> str:
    return (
        f"the signing keys of {issuer} cannot be fetched right now, so no access token can be checked; try again later."
    )


# ---- reflection: the review of a draft answer (client/toolwire_client/review.py) --------------------------------
REVIEW_APPROVED = "APPROVED"


def review_request(criteria: list[str]) -> str:
    listed = "\n".join(f"{i}. {c}" for i, c in enumerate(criteria, 1))
    return (
        "Review your last answer before it is final. Check it against each of these criteria:\n"
        f"{listed}\n"
        f"If it meets every one, reply with exactly {REVIEW_APPROVED}. Otherwise list each problem in one line; "
        "do not call tools in this reply."
    )


REVIEW_RETRY = (
    "Your review found problems. Fix each of them now (call tools if you need facts), then give the corrected "
    "final answer."
)
REVIEW_NO_TOOLS = "not run: a review reply does not run tools; list the problems, then fix them in the next step."


# ---- sub-agents: the delegate tool (client/toolwire_client/delegate.py) ----------------------------------------
DELEGATE_TOOL = "delegate"
DELEGATE_DESCRIPTION = (
    "Hand a self-contained part of your task to a sub-agent: it works in its own conversation with the tools you "
    "name (default: all of yours) and a share of your remaining budget, and you get back only its short final "
    "answer. Use it for a piece of work whose details you do not need to see; say in `task` everything it must "
    "know, since it sees nothing of your conversation."
)
DELEGATE_TASK_HELP = "What the sub-agent must do and answer, complete on its own (it does not see your conversation)."
DELEGATE_TOOLS_HELP = "Names of your tools the sub-agent may call; leave out to give it all of them."
DELEGATE_SYSTEM = (
    "You are a sub-agent: another agent handed you the task below. Do it with your tools, then reply with a short "
    "final answer that says what you found or did; that answer is all the other agent will see."
)


def delegate_unknown_tools(asked: Iterable[str], available: Iterable[str]) -> str:
    listing = ", ".join(sorted(available)) or "(none)"
    unknown = ", ".join(clip(name, QUOTE_CHARS) for name in asked)
    return (
        f"ERROR: a sub-agent can only get tools you have; you have no {unknown}. Tools you may hand over: {listing}. "
        'A correct call: {"task": "...", "tools": ["get_order"]}, or leave out "tools" to hand over all of them.'
    )


def delegate_no_budget(what: str) -> str:
    return (
        f"ERROR: not run: too little of your budget is left for a sub-agent ({what}). Finish the task yourself with "
        "what you have."
    )


def delegate_waiting(run_id: str) -> str:
    return f"not answered yet: the sub-agent (run {run_id}) waits for a person's approval"


def delegate_answer(answer: str, limit: int) -> str:
    return clip(answer, limit)


def delegate_no_answer(run_id: str, why: str, last_text: str, limit: int) -> str:
    said = f" Its last words: {clip(last_text, limit)}" if last_text.strip() else ""
    return f"ERROR: the sub-agent (run {run_id}) ended without a final answer: {why}.{said}"


# ---- plan-and-execute and workflows (client/toolwire_client/plan.py, workflow.py) ---------------------------------
STEP_FAILED = "STEP FAILED"


def plan_request(max_steps: int) -> str:
    return (
        "Before doing anything, make a plan for this task. Reply with the plan only: numbered lines, one step per "
        f"line, at most {max_steps} steps, like\n1. Look up the order\n2. Work out the total\n3. Answer the customer\n"
        "Do not call tools in this reply. The steps will be given back to you one at a time; make the last step "
        "the answer to the task."
    )


def plan_retry(problem: str) -> str:
    return (
        f"That plan could not be read: {problem}. Reply again with the plan only: numbered lines '1. ...', "
        "'2. ...', one step per line, nothing before or after them, and no tool calls."
    )


PLAN_EMPTY = "the reply has no numbered steps"
PLAN_CALLED_TOOLS = "it called tools instead of listing the steps"
PLAN_NO_TOOLS = "not run: a plan runs no tools; reply with the numbered plan, the steps will call the tools."


def plan_unnumbered(n: int, line: str) -> str:
    return f"line {n} ({line[:80]!r}) is not a numbered step like '{n}. Look up the order'"


def plan_misnumbered(n: int, found: str) -> str:
    return f"step {n} is numbered {found}; number the steps 1, 2, 3, ... in order"


def plan_too_long(count: int, max_steps: int) -> str:
    return f"the plan has {count} steps and at most {max_steps} are allowed; merge some steps"


def plan_step(i: int, n: int, text: str) -> str:
    if i == n:
        then = "This is the last step: reply with the final answer to the task."
    else:
        then = "When the step is done, reply in text with what you found (no final answer yet)."
    return (
        f"Step {i} of {n}: {text}\nDo this step now, calling tools as needed. {then} If the step cannot be done, "
        f"reply with {STEP_FAILED}: and the reason."
    )


def replan_request(i: int, n: int, text: str, why: str, max_steps: int) -> str:
    return (
        f"Step {i} of {n} ({text}) failed: {why}\nMake a new plan for what is left of the task, knowing what you "
        f"found so far. Reply with the plan only: numbered lines, at most {max_steps} steps, the last one the "
        "answer to the task, and no tool calls."
    )


def workflow_step(i: int, n: int, name: str, instruction: str, tools: list[str] | None) -> str:
    if tools is None:
        allowed = "You may call any tool."
    elif tools:
        allowed = f"Tools for this step: {', '.join(tools)}."
    else:
        allowed = "Do not call tools in this step."
    then = "Your reply to this step is the final answer." if i == n else "Reply in text with this step's result."
    return (
        f"Step {i} of {n} ({name}): {instruction}\n{allowed} {then} If the step cannot be done, reply with "
        f"{STEP_FAILED}: and the reason."
    )


def not_in_step(name: str, step: str, tools: list[str]) -> str:
    allowed = f"only {', '.join(tools)} may be called" if tools else "no tool may be called"
    return f"not run: {name} is not a tool of step '{step}', where {allowed}; do the step with those."


# ---- prompts, resources and skills (client/toolwire_client/tools/mcp_source.py, skills.py) -------------------------
def server_request_failed(server: str, method: str, message: str) -> str:
    return f"the tool server '{server}' answered {method} with an error: {clip(message, 4 * QUOTE_CHARS)}"


SKILL_TOOL = "load_skill"
SKILL_NAME_HELP = "A skill's name, as listed."


def skills_description(index: list[tuple[str, str]]) -> str:
    """load_skill's description: when to use it, then the skill index (one line per skill, name and description)."""
    lines = "\n".join(f"- {name}: {description}" for name, description in index)
    return (
        "Load a skill: saved instructions for one kind of task. Before a task a skill covers, load it once and "
        f"follow it. Skills:\n{lines}"
    )


def unknown_skill(name: str, known: Iterable[str]) -> str:
    names = sorted(known)
    listing = ", ".join(names) or "(none)"
    example = json.dumps({"name": names[0] if names else "..."})
    return (
        f"ERROR: no skill named '{clip(name, QUOTE_CHARS)}'. Skills you may load: {listing}. A correct call: {example}"
    )


def skill_text(name: str, text: str) -> str:
    return f"Skill '{name}': follow these instructions for this task.\n\n{text}"


def skill_loaded_before(name: str) -> str:
    return f"The skill '{name}' is already loaded earlier in this conversation: follow those instructions."


def skill_failed(name: str, why: str) -> str:
    return f"ERROR: the skill '{name}' could not be loaded: {why}. Go on without it, or try again later."
