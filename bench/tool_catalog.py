"""A generated catalog of tools with realistic names, descriptions and input schemas (a SaaS estate's worth: CRM,
billing, tickets, calendars, ...), for tool search's benchmark and tests. Deterministic: tool N is always the same.

    python bench/tool_catalog.py N     # an MCP server over stdio offering the first N tools of the catalog

Each tool answers `NAME done: {arguments}`, so a run's answer shows which tool ran with what."""

import json
import sys
from typing import Any

DOMAINS: list[tuple[str, str, str, list[tuple[str, str]]]] = [
    # (prefix, thing, where it lives, its fields: (name, description))
    ("crm", "contact", "the CRM", [("email", "The contact's email address"), ("company", "The company name")]),
    ("billing", "invoice", "the billing system", [("amount_cents", "Total in cents"), ("currency", "ISO 4217 code")]),
    ("helpdesk", "ticket", "the help desk", [("priority", "low, normal, high or urgent"), ("subject", "One line")]),
    ("calendar", "event", "the team calendar", [("starts_at", "ISO 8601 start time"), ("attendees", "Emails")]),
    ("wiki", "page", "the internal wiki", [("title", "The page title"), ("body_markdown", "The page text")]),
    ("repo", "pull_request", "the code host", [("branch", "The source branch"), ("reviewers", "Usernames")]),
    ("ci", "pipeline", "continuous integration", [("commit_sha", "The commit to build"), ("stage", "Stage name")]),
    ("storage", "bucket_object", "object storage", [("key", "The object's key"), ("content_type", "MIME type")]),
    ("dns", "record", "the DNS zone", [("record_type", "A, AAAA, CNAME, TXT or MX"), ("ttl", "Seconds")]),
    ("inventory", "sku", "the warehouse inventory", [("quantity", "Units on hand"), ("location", "Bin code")]),
    ("shipping", "shipment", "the carrier integration", [("tracking_number", "Carrier tracking id"), ("carrier", "")]),
    ("hr", "employee", "the HR system", [("department", "Department name"), ("manager_id", "Manager's employee id")]),
    ("payroll", "payslip", "payroll", [("period", "Pay period, YYYY-MM"), ("gross_cents", "Gross pay in cents")]),
    ("marketing", "campaign", "the marketing platform", [("audience", "Segment name"), ("budget_cents", "Budget")]),
    ("analytics", "dashboard", "the analytics warehouse", [("metric", "Metric name"), ("window_days", "Days")]),
    ("chat", "channel_message", "team chat", [("channel", "Channel name"), ("text", "Message text")]),
    ("email", "mail_draft", "the mail server", [("to", "Recipient addresses"), ("subject", "Subject line")]),
    ("docs", "document", "the document store", [("folder", "Folder path"), ("mime_type", "Document type")]),
    ("security", "access_key", "the identity provider", [("scope", "What the key may do"), ("expires_in_days", "")]),
    ("monitoring", "alert_rule", "the monitoring system", [("threshold", "Value that fires it"), ("severity", "")]),
    ("legal", "contract", "contract management", [("counterparty", "The other party"), ("renewal_date", "Date")]),
    ("procurement", "purchase_order", "procurement", [("vendor", "Vendor name"), ("total_cents", "Order total")]),
    ("fleet", "vehicle", "the fleet tracker", [("plate", "Licence plate"), ("odometer_km", "Odometer reading")]),
    ("survey", "survey_response", "the survey tool", [("score", "0 to 10"), ("comment", "Free text")]),
    ("booking", "reservation", "the booking system", [("party_size", "How many people"), ("date", "YYYY-MM-DD")]),
]

ACTIONS: list[tuple[str, str, str]] = [
    # (verb, what it does, what to use it for)
    ("create", "Create a new {thing} in {where}", "Use it when the user asks to add or open a new {thing}"),
    ("get", "Fetch one {thing} from {where} by its id, with every field", "Use it to read a single {thing}"),
    ("update", "Change fields of an existing {thing} in {where}", "Only the fields given are changed"),
    ("delete", "Delete a {thing} from {where} permanently", "This cannot be undone; ask before deleting"),
    ("list", "List {things} in {where}, newest first, paginated", "Filter by the fields given; at most 100 a page"),
    ("search", "Full-text search over {things} in {where}", "Matches words in any text field of the {thing}"),
    ("archive", "Archive a {thing} in {where} so it no longer shows in lists", "Archived items can be restored"),
    ("restore", "Restore an archived or deleted {thing} in {where}", "Works within 30 days of the deletion"),
    ("export", "Export {things} from {where} as CSV or JSON", "Large exports are delivered as a download link"),
    ("import", "Import {things} into {where} from a CSV file", "Rows that fail validation are reported back"),
    ("assign", "Assign a {thing} in {where} to a person or team", "The assignee is notified by email"),
    ("comment", "Add a comment to a {thing} in {where}", "Comments are visible to everyone with access"),
    ("tag", "Add or remove tags on a {thing} in {where}", "Tags are free text, at most 20 per {thing}"),
    ("history", "Show the change history of a {thing} in {where}", "Each entry says who changed what, and when"),
    ("count", "Count {things} in {where} matching a filter", "Cheaper than listing when only the number matters"),
    ("duplicate", "Make a copy of a {thing} in {where}", "The copy gets a new id and no history"),
    ("merge", "Merge two {things} in {where} into one", "The second is folded into the first and removed"),
    ("validate", "Check a {thing} in {where} for missing or invalid fields", "Reports problems without changing it"),
    ("share", "Share a {thing} in {where} with another user", "Give read or write access"),
    ("summarize", "Summarize recent activity on {things} in {where}", "Totals by day for the window given"),
]


def _words(text: str) -> str:
    return text.replace("_", " ")


def tool(n: int) -> dict[str, Any]:
    """The catalog's tool number `n` (0-based): {name, description, inputSchema}."""
    prefix, thing, where, fields = DOMAINS[n % len(DOMAINS)]
    verb, does, use = ACTIONS[(n // len(DOMAINS)) % len(ACTIONS)]
    spoken, things = _words(thing), _words(thing) + "s"
    fill = {"thing": spoken, "things": things, "where": where}
    description = (
        f"{does.format(**fill)}. {use.format(**fill)}. Needs a {prefix} account with access to {where}; "
        f"returns the {spoken} as JSON."
    )
    properties: dict[str, Any] = {
        f"{thing}_id": {"type": "string", "description": f"The {spoken}'s id in {where}"},
        "workspace": {"type": "string", "description": "The workspace (tenant) to act in; default: the user's"},
    }
    for name, about in fields:
        properties[name] = {"type": "string", "description": about or f"The {_words(name)}"}
    if verb in ("list", "search", "export", "count", "summarize"):
        properties["limit"] = {"type": "integer", "description": "At most this many", "minimum": 1, "maximum": 100}
    required = [f"{thing}_id"] if verb not in ("create", "list", "search", "import", "count") else []
    return {
        "name": f"{prefix}_{verb}_{thing}",
        "description": description,
        "inputSchema": {"type": "object", "properties": properties, "required": required},
    }


def catalog(count: int) -> list[dict[str, Any]]:
    return [tool(n) for n in range(count)]


def serve(count: int) -> None:
    """The first `count` tools as an MCP server over stdio (the SDK's low-level Server: the schemas as written)."""
    import anyio
    import mcp_types as types
    from mcp.server import Server, ServerRequestContext
    from mcp.server.stdio import stdio_server

    tools = [
        types.Tool(name=t["name"], description=t["description"], input_schema=t["inputSchema"]) for t in catalog(count)
    ]
    names = {t.name for t in tools}

    async def on_list_tools(ctx: ServerRequestContext[Any, Any], params: Any) -> types.ListToolsResult:
        return types.ListToolsResult(tools=tools)

    async def on_call_tool(ctx: ServerRequestContext[Any, Any], params: Any) -> types.CallToolResult:
        if params.name not in names:
            text = f"no tool {params.name}"
            return types.CallToolResult(content=[types.TextContent(type="text", text=text)], is_error=True)
        text = f"{params.name} done: {json.dumps(params.arguments or {}, sort_keys=True)}"
        return types.CallToolResult(content=[types.TextContent(type="text", text=text)])

    async def main() -> None:
        server: Server[Any] = Server("catalog", on_list_tools=on_list_tools, on_call_tool=on_call_tool)
        async with stdio_server() as (read, write):
            await server.run(read, write, server.create_initialization_options())

    anyio.run(main)


if __name__ == "__main__":
    serve(int(sys.argv[1]) if len(sys.argv) > 1 else 500)
