"""The agent loop's own texts, for its model: the system prompts, the prompts of plans, workflows and reviews, the
delegate and load_skill tools' names and descriptions, and the failures only the client reports (a call a person
rejected, a hook blocked, a lost connection, a replay without the result). Imports nothing of toolwire_client, so
every client layer may use it; the tool-call failure texts the server writes too are in toolwire_shared.errors."""

import json
from collections.abc import Iterable
from typing import Any

from toolwire_shared.errors import QUOTE_CHARS, clip, tool_failed
from toolwire_shared.words import counted

# What the agent loop answers for a call it did not send, or sent and lost (the model reads it as the call's result).


def unparseable_arguments(name: str, raw: str, problem: str) -> str:
    shown = raw if len(raw) <= 200 else raw[:200] + "..."
    return (
        f"ERROR: the arguments for {name} are not a JSON object ({problem}): {shown!r}. "
        "Send the arguments as one JSON object."
    )


def invalid_output_schema(problem: str) -> str:
    return f"the tool's output schema is not valid JSON Schema ({clip(problem, QUOTE_CHARS)})"


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


HTTP_ERROR_NO_RESULT = "answered the call with an HTTP error status and no result: a proxy cut its answer, or it failed"


def transport_failed(name: str, problem: str, *, retried: bool) -> str:
    again = (
        "It was sent again with the same idempotency key and failed again."
        if retried
        else "It was not sent again because it is not idempotent; check its effect before repeating it."
    )
    return tool_failed(name, f"the tool server connection failed ({problem}). {again}")


def result_cut(kept: int, total: int) -> str:
    """The note after a result the client cut to its cap (`--max-result-chars`)."""
    return (
        f"\n[toolwire: result cut to the first {kept} of {total} characters. "
        "Ask for less: narrow the query, filter, page, or request one item at a time.]"
    )


def not_recorded(name: str, call_id: str) -> str:
    return f"ERROR: replay: the recorded run has no result for {name} call {call_id}; it was never sent there"


# ---- reflection: the review of a draft answer (client/toolwire_client/strategies/review.py) ------------------------
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


# ---- sub-agents: the delegate tool (client/toolwire_client/tools/delegate.py) --------------------------------------
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
    return not_run(
        f"too little of your budget is left for a sub-agent ({what}). Finish the task yourself with what you have."
    )


def _not_answered_yet(child: str, run_id: str, waits_for: str) -> str:
    """What a call answers while the child run it started (a sub-agent, a script) waits for a person."""
    return f"not answered yet: the {child} (run {run_id}) waits for {waits_for}"


def delegate_waiting(run_id: str) -> str:
    return _not_answered_yet("sub-agent", run_id, "a person's approval")


def delegate_answer(answer: str, limit: int) -> str:
    return clip(answer, limit)


def delegate_no_answer(run_id: str, why: str, last_text: str, limit: int) -> str:
    said = f" Its last words: {clip(last_text, limit)}" if last_text.strip() else ""
    return f"ERROR: the sub-agent (run {run_id}) ended without a final answer: {why}.{said}"


# ---- plan-and-execute and workflows (client/toolwire_client/strategies/plan.py, workflow.py) -----------------------
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


def status_and_why(status: str, why: str | None) -> str:
    """`STATUS (WHY)`, the why left out where it only says the status again (`waiting_for_approval`)."""
    return f"{status} ({why})" if why and why != status else status


def resumed_elsewhere(run_id: str) -> str:
    """What a console that could not go on with a decided run adds: it resumes with its own environment."""
    return (
        "the console resumes runs with its own environment (provider keys, OPENAI_BASE_URL and the like); "
        f"`toolwire resume {run_id}` in the shell the run was started from goes on"
    )


def decided_not_resumed(run_id: str) -> str:
    """`toolwire approvals` on a run whose calls are all decided but that has not gone on."""
    return f"run {run_id} waits for nobody now (its calls are decided) but has not gone on: {resumed_elsewhere(run_id)}"


def printed_to_stdout(server: str, line: str) -> str:
    """A stdio server wrote a line that is not MCP (a tool's print()): stdout is the protocol's channel."""
    return (
        f"the tool server '{server}' wrote a line to stdout that is not an MCP message ({clip(line, QUOTE_CHARS)!r}, "
        "ignored): a stdio server's stdout carries the protocol; print to stderr (print(..., file=sys.stderr)) or "
        "use logging"
    )


def tool_changes_unheard(server: str, why: str) -> str:
    return f"the tool server '{server}' says its tools may change, but its subscriptions/listen stream failed ({why})"


def server_instructions(server: str, text: str) -> str:
    """A server's `instructions`, as joined to a run's system prompt."""
    return f"Instructions from the tool server '{server}':\n{text}"


def tool_listing_skipped(server: str, tool: str, problem: str) -> str:
    return f"tool '{tool}' of server '{server}': {problem}; skipped, the server's other tools are offered"


def tool_needs_tasks(server: str, tool: str) -> str:
    return (
        f"tool '{tool}' of server '{server}' is not offered to the model: it runs only as a task (taskSupport "
        '"required"), and this handshake-era connection has no tasks extension (a 2026-07-28 connection has)'
    )


SKILL_TOOL = "load_skill"
SKILL_NAME_HELP = "A skill's name, as listed."


def skills_description(index: list[tuple[str, str]]) -> str:
    """load_skill's description: when to use it, then the skill index (one line per skill, name and description)."""
    lines = "\n".join(f"- {name}: {description}" for name, description in index)
    return (
        "Load a skill: saved instructions for one kind of task. Before a task a skill covers, load it once and "
        f"follow it. Skills:\n{lines}"
    )


def _example(argument: str, known: list[str]) -> str:
    """A correct call's arguments: `argument` set to the first of `known` (a placeholder when there is none)."""
    return json.dumps({argument: known[0] if known else "..."})


def unknown_skill(name: str, known: Iterable[str]) -> str:
    names = sorted(known)
    listing = ", ".join(names) or "(none)"
    example = _example("name", names)
    return (
        f"ERROR: no skill named '{clip(name, QUOTE_CHARS)}'. Skills you may load: {listing}. A correct call: {example}"
    )


def skill_text(name: str, text: str) -> str:
    return f"Skill '{name}': follow these instructions for this task.\n\n{text}"


def skill_loaded_before(name: str) -> str:
    return f"The skill '{name}' is already loaded earlier in this conversation: follow those instructions."


def skill_failed(name: str, why: str) -> str:
    return f"ERROR: the skill '{name}' could not be loaded: {why}. Go on without it, or try again later."


def input_wanted(message: str) -> str:
    """The content of a call paused on a server's question (shown in traces; the model reads the later result)."""
    return f"waiting for a person's answer to the tool's question: {clip(message, QUOTE_CHARS)}"


def unanswerable(server: str, why: str) -> str:
    return f"ERROR: the tool server '{server}' asked for input toolwire cannot give: {why}"


RESOURCE_TOOL = "read_resource"
RESOURCE_URI_HELP = "The resource's URI, exactly as a tool result's resource link or the resource list gave it."


def resources_description(listed: list[tuple[str, str]]) -> str:
    """read_resource's description: what it reads, then the resources the servers list (at most a few lines)."""
    text = (
        "Read a resource a tool server offers: the URI of a resource link a tool returned, or of a resource "
        "listed here. Returns its text (images as images)."
    )
    if listed:
        shown = "\n".join(f"- {uri}: {about}" if about else f"- {uri}" for uri, about in listed[:20])
        more = f"\n(and {len(listed) - 20} more)" if len(listed) > 20 else ""
        text += f" Resources:\n{shown}{more}"
    return text


def unknown_resource_uri(uri: str, known: Iterable[str]) -> str:
    uris = sorted(known)
    listing = ", ".join(uris[:20]) or "(none yet)"
    example = _example("uri", uris)
    return (
        f"ERROR: no tool server of this run listed or linked the resource '{clip(uri, QUOTE_CHARS)}', so it cannot "
        f"be read. Readable: {listing}. A correct call: {example}"
    )


def resource_failed(uri: str, why: str) -> str:
    return f"ERROR: reading '{clip(uri, QUOTE_CHARS)}' failed: {why}"


# ---- code mode (tools/code_mode/) -------------------------------------------------------------------------------


def run_code_description(listing: str, calls: int, seconds: float, megabytes: int, chars: int) -> str:
    """run_code's description: how a script calls the tools, what it gets back, its limits, then the tools."""
    return (
        "Run Python that calls the tools below as async functions with keyword arguments, e.g. "
        '`o = await get_order(order_id="A1")`; `await asyncio.gather(...)` runs calls at once. A tool returns its '
        "structured result (dict or list) or its text; a failed call raises an exception (try/except catches it). "
        "You get back only the last expression's value and what the script prints: filter and total in the script. "
        "A sandboxed Python subset: no imports but asyncio, json, math, re, datetime; no files, network, environment "
        f"or class inheritance. Limits: {calls} tool calls, {seconds:g} s of computing, {megabytes} MB, {chars} "
        f"characters of output.\n\n{listing}"
    )


def run_code_unlisted(count: int) -> str:
    """run_code's last line with tool search on: the tools it does not list are callable too."""
    return (
        f"\n\n{count} more tools are not listed: search_tools finds them by what they do, and the ones it finds are "
        "listed here from your next turn on."
    )


def script_task(code: str) -> str:
    """A script's run's task, as `runs` and `trace show` list it: run_code and its first line."""
    first = next((line.strip() for line in code.splitlines() if line.strip()), "")
    return f"run_code: {clip(first, QUOTE_CHARS)}"


def script_waiting(run_id: str, waiting: list[str]) -> str:
    calls = ", ".join(waiting) or "a call"
    return _not_answered_yet("script", run_id, f"a person at {calls}")


# ---- results kept out of the prompt, the context budget (run/context_view.py, tools/kept_results.py, context/) ----
READ_RESULT_TOOL = "read_result"
READ_RESULT_DESCRIPTION = (
    "Read a tool result that was kept out of the prompt (too long, or cleared to save room): the whole result is "
    "kept. Give the call_id its note names; offset and length (characters) read a part, pattern (a regular "
    "expression) returns only the lines that match it, numbered."
)


def kept_out(call_id: str, shown: int, total: int) -> str:
    """The note after the head of a long result (`--inline-result-chars`)."""
    return (
        f"\n[toolwire: result of {total:,} characters kept out of the prompt; above are the first {shown:,}. "
        f'read_result(call_id="{call_id}", offset={shown}) reads on; pattern="..." returns the lines that match.]'
    )


def cleared_result(name: str, call_id: str, total: int) -> str:
    """An old result cleared from the context (`--context-budget`): the one line the model still reads of it."""
    return (
        f"[toolwire: the {name} result ({total:,} characters) was cleared to save room; "
        f'read_result(call_id="{call_id}") reads it]'
    )


def earlier_turns(summary: str) -> str:
    """The user turn that stands for the turns a compact step summarised."""
    return (
        "[toolwire: the earlier turns of this conversation were summarised to save room; every tool result is "
        f"still readable with read_result(call_id=...)]\n{summary}"
    )


COMPACT_SYSTEM = (
    "You summarise the earlier part of an agent's conversation so that the agent can go on without it. Keep every "
    "fact, number, name and decision it will need, what is done and what is left, and the call_id of each tool "
    "result worth reading again (it can read any of them with read_result). Write plain text, no preamble."
)


NATIVE_COMPACT_INSTRUCTIONS = COMPACT_SYSTEM + " Do not call any tool: answer with the summary text only."
"""A provider's own summariser's instructions (Anthropic's compaction request): they replace its default prompt."""


def provider_compacted(items: int) -> str:
    """The text a provider's opaque compaction stands under in the run's record (`trace show`, the console)."""
    return f"[compacted by the provider: {items} items, the last an encrypted compaction of the earlier turns]"


def provider_cleared(edit: dict[str, Any]) -> str:
    """One edit the provider's context editing applied (`trace show`): what it cleared before the model read."""
    uses, tokens = edit.get("cleared_tool_uses"), edit.get("cleared_input_tokens")
    if isinstance(uses, int) and isinstance(tokens, int):
        return f"the provider cleared {counted(uses, 'tool result')} ({tokens:,} tokens) before the model read it"
    return f"the provider applied {edit.get('type')} before the model read it"


def compact_request(transcript: str) -> str:
    return f"The conversation so far, to summarise:\n\n{transcript}\n\nWrite the summary now."


def read_result_problem(problem: str, example_call_id: str) -> str:
    """A read_result call the tool cannot answer: what was wrong and a correct call."""
    example = json.dumps({"call_id": example_call_id, "offset": 0, "length": 4000})
    return f'ERROR: {problem}. A correct call: read_result({example}), or with pattern="regex" for matching lines.'


def read_result_part(call_id: str, start: int, end: int, total: int) -> str:
    more = f' read_result(call_id="{call_id}", offset={end}) reads on.' if end < total else " (the end)"
    return f"[result {call_id}: characters {start:,} to {end:,} of {total:,}.{more}]\n"


def read_result_lines(call_id: str, pattern: str, start: int, end: int, total: int) -> str:
    if total == 0:
        return f"[result {call_id}: no line matches {pattern!r}]"
    more = f" offset={end} reads on." if end < total else ""
    return f"[result {call_id}: lines matching {pattern!r}, characters {start:,} to {end:,} of {total:,}.{more}]\n"
