"""The seed's scripted models on native tool calls, plus the support demo. Each reads the tool results it got
and derives its next call from them; nothing is hard-coded that a real model would have had to read."""

import json
import re
from typing import Any

from toolwire_client import texts
from toolwire_shared.messages import AssistantMessage, Message, SystemMessage, ToolCall, ToolResultMessage, UserMessage

ORDER_ID = re.compile(r"\b[A-Z]\d{3}\b")


def _calls(messages: list[Message], *calls: tuple[str, dict[str, Any]]) -> AssistantMessage:
    turn = len(messages)
    return AssistantMessage(
        tool_calls=[ToolCall(id=f"call_{turn}_{i}", name=name, arguments=args) for i, (name, args) in enumerate(calls)]
    )


def _final(text: str) -> AssistantMessage:
    return AssistantMessage(text=text)


def last_results(messages: list[Message]) -> list[ToolResultMessage]:
    """The results that answered the latest assistant turn, in order."""
    results: list[ToolResultMessage] = []
    for message in reversed(messages):
        if not isinstance(message, ToolResultMessage):
            break
        results.insert(0, message)
    return results


def all_results(messages: list[Message], name: str) -> list[ToolResultMessage]:
    return [m for m in messages if isinstance(m, ToolResultMessage) and m.name == name]


def task_order_id(messages: list[Message]) -> str:
    task = next(m.content for m in messages if isinstance(m, UserMessage))
    found = ORDER_ID.search(task)
    return found.group(0) if found else "A123"


def value_of(content: str) -> Any:
    """A tool's text as a value: JSON when it is JSON, unwrapping MCP's {"result": x} wrapper for scalars."""
    try:
        value = json.loads(content)
    except ValueError:
        return content
    if isinstance(value, dict) and set(value) == {"result"}:
        return value["result"]
    return value


def recovers(messages: list[Message]) -> AssistantMessage:
    """Wrong argument name first, repaired from the error text, then calculator, then the answer (worked out by
    hand from the order when there is no calculator to call)."""
    order_id = task_order_id(messages)
    results = last_results(messages)
    if not results:
        return _calls(messages, ("get_order", {"id": order_id}))
    last = results[-1]
    if last.is_error and last.name == "get_order":
        return _calls(messages, ("get_order", {"order_id": order_id}))
    if last.name == "get_order":
        order = value_of(last.content)
        return _calls(messages, ("calculator", {"expression": _gst_expression(order)}))
    if last.is_error and last.name == "calculator":
        orders = [r for r in all_results(messages, "get_order") if not r.is_error]
        if orders:
            order = value_of(orders[-1].content)
            total = float(order["unit_price"]) * float(order["qty"]) * 1.18
            return _final(f"Order {order_id} costs {total} rupees with 18% GST.")
    return _final(f"Order {order_id} costs {value_of(last.content)} rupees with 18% GST.")


def _gst_expression(order: dict[str, Any]) -> str:
    return f"{order['unit_price']} * {order['qty']} * 1.18"


def repeats(messages: list[Message]) -> AssistantMessage:
    """Never changes its approach."""
    return _calls(messages, ("get_order", {"order_id": "Z999"}))


def wanders(messages: list[Message]) -> AssistantMessage:
    """A new wrong guess every step."""
    return _calls(messages, ("get_order", {"order_id": f"Z{len(messages)}"}))


def support_demo(messages: list[Message]) -> AssistantMessage:
    """Two calls in parallel (one with a wrong argument), the repair, a refund that needs approval, the answer."""
    order_id = task_order_id(messages)
    results = last_results(messages)
    if not results:
        return _calls(messages, ("get_order", {"order_id": order_id}), ("search_orders", {"customer": order_id}))
    orders = [r for r in all_results(messages, "get_order") if not r.is_error]
    order = value_of(orders[-1].content) if orders else None
    by_name = {r.name: r for r in results}
    if "issue_refund" in by_name:
        refund = by_name["issue_refund"]
        if refund.is_error:
            return _final(f"I could not refund order {order_id}: {refund.content}")
        return _final(f"Refunded one {order['item'] if order else 'item'} from order {order_id}: {refund.content}")
    if order is None:
        return _final(f"I could not find order {order_id}: {results[-1].content}")
    search = by_name.get("search_orders")
    if search is not None and search.is_error:
        return _calls(messages, ("search_orders", {"customer_id": order["customer_id"]}))
    amount_cents = round(float(order["unit_price"]) * 100)
    return _calls(messages, ("issue_refund", {"order_id": order_id, "amount_cents": amount_cents}))


def delegates(messages: list[Message]) -> AssistantMessage:
    """Hands its whole task to a sub-agent and answers with what came back. As the sub-agent (its opening is the
    sub-agent's system prompt) it does the task like support_demo for a refund, else like recovers."""
    task = next(m.content for m in messages if isinstance(m, UserMessage))
    if isinstance(messages[0], SystemMessage) and messages[0].content == texts.DELEGATE_SYSTEM:
        return support_demo(messages) if "refund" in task.lower() else recovers(messages)
    results = last_results(messages)
    if not results:
        return _calls(messages, (texts.DELEGATE_TOOL, {"task": task}))
    return _final(f"A sub-agent worked on it: {results[-1].content}")


# ---- reflection ---------------------------------------------------------------------------------------------------
def reviews(messages: list[Message]) -> AssistantMessage:
    """`recovers`, reviewed: the reviewer approves only a draft that gives the currency as INR, and a draft sent
    back is fixed ('rupees' becomes INR)."""
    last = messages[-1]
    draft = next((m.text for m in reversed(messages) if isinstance(m, AssistantMessage) and m.text), "")
    if isinstance(last, UserMessage) and last.content.startswith("Review your last answer"):
        return _final(texts.REVIEW_APPROVED if "INR" in draft else "- the currency is rupees, not INR")
    if isinstance(last, UserMessage) and last.content == texts.REVIEW_RETRY:
        drafts = [m.text for m in messages if isinstance(m, AssistantMessage) and m.text]
        return _final(drafts[-2].replace("rupees", "INR"))  # the draft before the verdict
    return recovers(messages)


# ---- plan-and-execute ---------------------------------------------------------------------------------------------
STEP = re.compile(r"Step (\d+) of (\d+)(?: \((\w+)\))?: (.*)")
PLAN = "1. Look up order {order}\n2. Work out the total with 18% GST on the calculator\n3. Answer with the total"
WRONG_PLAN = (
    "1. Find order {order} among the customer's orders\n2. Work out the total with 18% GST on the calculator\n"
    "3. Answer with the total"
)


def last_user(messages: list[Message]) -> str:
    return next((m.content for m in reversed(messages) if isinstance(m, UserMessage)), "")


def asked_for_plan(messages: list[Message]) -> bool:
    """The latest turn is a request for a plan (the first, a re-ask, or a new plan after a failed step)."""
    return isinstance(messages[-1], UserMessage) and "the plan only" in messages[-1].content


def planned(messages: list[Message]) -> AssistantMessage:
    """Plan-and-execute: plans look-up, total, answer, then does each step with the tools it needs."""
    if asked_for_plan(messages):
        return _final(PLAN.format(order=task_order_id(messages)))
    return _plan_step(messages)


def replans(messages: list[Message]) -> AssistantMessage:
    """A first plan that searches by customer with the order id, reports that step failed, and replans."""
    if asked_for_plan(messages):
        first = not any(isinstance(m, AssistantMessage) and m.text.startswith("1. ") for m in messages)
        return _final((WRONG_PLAN if first else PLAN).format(order=task_order_id(messages)))
    return _plan_step(messages)


def _plan_step(messages: list[Message]) -> AssistantMessage:
    """Each step by what it says: a search, a look-up, the total, the answer; reads what came back."""
    order_id, results = task_order_id(messages), last_results(messages)
    step = STEP.match(last_user(messages))
    what = step.group(4).split("\n", 1)[0] if step else ""
    if what.startswith("Find"):
        if not results:
            return _calls(messages, ("search_orders", {"customer_id": order_id}))
        if value_of(results[-1].content) in ([], "[]", ""):
            return _final(f"STEP FAILED: no orders for customer {order_id}; {order_id} looks like an order id")
        return _final(f"Found: {results[-1].content}")
    if what.startswith("Look up"):
        if not results:
            return _calls(messages, ("get_order", {"order_id": order_id}))
        order = value_of(results[-1].content)
        return _final(f"Order {order_id}: {order['qty']} x {order['item']} at {order['unit_price']} each.")
    orders = [r for r in all_results(messages, "get_order") if not r.is_error]
    if what.startswith("Work out"):
        if not results and orders:
            return _calls(messages, ("calculator", {"expression": _gst_expression(value_of(orders[-1].content))}))
        if not results:
            return _final("STEP FAILED: the order was not looked up, so there is nothing to total")
        return _final(f"The total is {value_of(results[-1].content)}.")
    totals = [r for r in all_results(messages, "calculator") if not r.is_error]
    total = value_of(totals[-1].content) if totals else "unknown"
    return _final(f"Order {order_id} costs {total} INR with 18% GST.")


# ---- the support desk workflow (examples/support_workflow.py) ------------------------------------------------------
TOPICS = [
    ("broken", "damaged_item"),
    ("damaged", "damaged_item"),
    ("late", "late_delivery"),
    ("not arrived", "late_delivery"),
    ("cancel", "cancellation"),
    ("refund", "refund"),
]
"""The first word found in the ticket names its category (the classify step of the scripted support desk)."""


def support_workflow(messages: list[Message]) -> AssistantMessage:
    """classify -> policy -> reply: a category from the ticket's words, the policy for it, a reply built from the
    order and the policy it read (the step names are the workflow's, the facts are the tools')."""
    step = STEP.match(last_user(messages))
    name = step.group(3) if step else ""
    results = last_results(messages)
    if name == "classify":
        ticket = next(m.content for m in messages if isinstance(m, UserMessage)).lower()
        return _final(next((topic for word, topic in TOPICS if word in ticket), "other"))
    if name == "policy":
        if not results or results[-1].name != "get_policy":
            answers = [m.text for m in messages if isinstance(m, AssistantMessage) and m.text]
            return _calls(messages, ("get_policy", {"topic": answers[-1].strip() if answers else "other"}))
        return _final(str(value_of(results[-1].content)))
    if not results or results[-1].name != "get_order":
        return _calls(messages, ("get_order", {"order_id": task_order_id(messages)}))
    order = value_of(results[-1].content)
    if not isinstance(order, dict):
        return _final(f"STEP FAILED: the order could not be read: {results[-1].content}")
    policies = [value_of(r.content) for r in all_results(messages, "get_policy") if not r.is_error]
    policy = str(policies[-1]).split(": ", 1)[-1] if policies else "a person will look at your ticket"
    return _final(
        f"Dear customer, we are sorry about the {order['item']} in order {order['order_id']}. Our policy: "
        f"{policy} Reply to tell us which you prefer and we will arrange it."
    )


# ---- a long tool's progress (audit_orders on the support desk) ----------------------------------------------------
CUSTOMER_ID = re.compile(r"\bcus_\w+")


def audits(messages: list[Message]) -> AssistantMessage:
    """Asks for the audit of the customer its task names (a long call that reports progress), then answers with
    what each order's check said."""
    results = last_results(messages)
    if not results:
        task = next(m.content for m in messages if isinstance(m, UserMessage))
        found = CUSTOMER_ID.search(task)
        return _calls(messages, ("audit_orders", {"customer_id": found.group(0) if found else "cus_8123"}))
    findings = value_of(results[-1].content)
    if results[-1].is_error or not isinstance(findings, list):
        return _final(f"The audit failed: {results[-1].content}")
    return _final("; ".join(f"{f['order_id']} ({f['status']}): {f['note']}" for f in findings))


# ---- skills (examples/support_tools.py's skills, loaded with load_skill) -------------------------------------------
SKILL_FOR = [
    ("return", "process_return"),
    ("refund", "process_return"),
    ("broken", "damaged_item"),
    ("damaged", "damaged_item"),
    ("not arrived", "shipping_delay"),
    ("late", "shipping_delay"),
]
"""The first word found in the ticket names the skill to load (what a model reads from the skill index)."""
SKILL_STEP = re.compile(r"^\s*\d+\.\s+", re.MULTILINE)
"""Where a skill's numbered step starts (a step may go on over several lines)."""
CALL_IN_STEP = re.compile(r"\bCall (\w+)")
TOPIC_IN_STEP = re.compile(r"\btopic (\w+)")
ONLY_STATUS = re.compile(r"only an? (\w+) order")


def follows_skill(messages: list[Message]) -> AssistantMessage:
    """Loads the skill its ticket calls for (or reads it from the system prompt, where every skill is inlined), then
    does what the skill's numbered steps say, in order: a step that says "Call TOOL" calls it (arguments from the
    ticket and the results so far), a step "only a STATUS order ..." stops with what it says to tell the customer
    when the order's status is another, and the last step is the answer."""
    ticket = next(m.content for m in messages if isinstance(m, UserMessage))
    wanted = next((name for word, name in SKILL_FOR if word in ticket.lower()), "other")
    text, since = _inlined_skill(messages, wanted), 0
    if text is None:
        loads = all_results(messages, texts.SKILL_TOOL)
        if not loads:
            return _calls(messages, (texts.SKILL_TOOL, {"name": wanted}))
        loaded = next((r for r in loads if not r.is_error), None)
        if loaded is None:
            return _final(f"I found no skill for this ticket: {loads[-1].content}")
        text, since = loaded.content, messages.index(loaded) + 1
    done = {m.name: value_of(m.content) for m in messages[since:] if isinstance(m, ToolResultMessage)}
    order_id = task_order_id(messages)
    for step in (" ".join(part.split()) for part in SKILL_STEP.split(text)[1:]):
        call, only = CALL_IN_STEP.search(step), ONLY_STATUS.search(step)
        if call is not None and call.group(1) not in done:
            return _calls(messages, (call.group(1), _skill_arguments(call.group(1), step, order_id, done)))
        order = done.get("get_order")
        if only is not None and isinstance(order, dict) and order["status"] != only.group(1):
            guidance = step.rsplit(": ", 1)[-1]  # what the step says to tell the customer instead
            return _final(
                f"Order {order_id} is {order['status']}, and only a {only.group(1)} order qualifies: {guidance}"
            )
    return _final(_skill_answer(order_id, done))


def _inlined_skill(messages: list[Message], name: str) -> str | None:
    """The text of skill `name` when the system prompt carries every skill's text (the run without load_skill)."""
    system = messages[0].content if messages and isinstance(messages[0], SystemMessage) else ""
    marker = texts.skill_text(name, "")
    start = system.find(marker)
    if start < 0:
        return None
    end = system.find("\nSkill '", start + len(marker))  # where the next inlined skill starts
    return system[start + len(marker) : end if end >= 0 else len(system)]


def _order_in(done: dict[str, Any]) -> dict[str, Any]:
    order = done.get("get_order")
    return order if isinstance(order, dict) else {}


def _skill_arguments(tool: str, step: str, order_id: str, done: dict[str, Any]) -> dict[str, Any]:
    order = _order_in(done)
    if tool == "get_policy":
        topic = TOPIC_IN_STEP.search(step)
        return {"topic": topic.group(1) if topic else "other"}
    if tool == "calculator":
        return {"expression": f"{order.get('unit_price', 0)} * {order.get('qty', 1)} * 100"}
    if tool == "issue_refund":
        return {"order_id": order_id, "amount_cents": round(float(done.get("calculator", 0)))}
    return {"order_id": order_id}


def _skill_answer(order_id: str, done: dict[str, Any]) -> str:
    """The skill's last step, written out: a refund's receipt, or the policy the customer is offered."""
    order = _order_in(done)
    item, qty = order.get("item", "item"), order.get("qty", 1)
    refund = done.get("issue_refund")
    if isinstance(refund, dict):
        return (
            f"Refunded {qty} x {item} from order {order_id}: {refund['amount_cents']} cents, back to the original "
            f"payment method within 5 working days (refund {refund['refund_id']})."
        )
    policy = str(done.get("get_policy", "")).split(": ", 1)[-1]
    return f"About the {item} in order {order_id} ({order.get('status', 'unknown')}): {policy}"


SCRIPTS = {
    "reviews": reviews,
    "support_workflow": support_workflow,
    "recovers": recovers,
    "repeats": repeats,
    "wanders": wanders,
    "support_demo": support_demo,
    "delegates": delegates,
    "planned": planned,
    "replans": replans,
    "audits": audits,
    "skills": follows_skill,
}
