"""What an MCP client sees of the support desk beside its tools: its prompt, resources and template, and the
completion of their arguments. Runs the desk as a real server over stdio:

    python examples/desk_surface.py          (TOOLWIRE_SUPPORT_DB picks the SQLite file, as for the tools)
"""

import os
import sys
from pathlib import Path

import anyio
import mcp_types as types
from mcp import Client, StdioServerParameters

REPO = Path(__file__).resolve().parents[1]
"""Where `examples.support_tools` imports from."""


async def main() -> None:
    server = StdioServerParameters(
        command=sys.executable,
        args=["-m", "toolwire_server", "examples.support_tools:desk", "--stdio"],
        env={key: os.environ[key] for key in ("TOOLWIRE_SUPPORT_DB",) if key in os.environ},
        cwd=str(REPO),
    )
    async with Client(server) as desk:
        for prompt in (await desk.list_prompts()).prompts:
            arguments = ", ".join(f"{a.name}{'' if a.required else '?'}" for a in prompt.arguments or [])
            print(f"prompt   {prompt.name}({arguments}): {prompt.description}")
        for resource in (await desk.list_resources()).resources:
            print(f"resource {resource.uri} [{resource.mime_type}]")
        for template in (await desk.list_resource_templates()).resource_templates:
            print(f"template {template.uri_template} [{template.mime_type}]")

        ids = await desk.complete(
            types.ResourceTemplateReference(type="ref/resource", uri="orders://{order_id}"),
            {"name": "order_id", "value": "A"},
        )
        print("complete orders://{order_id} from 'A':", ", ".join(ids.completion.values))
        order = (await desk.read_resource(f"orders://{ids.completion.values[0]}")).contents[0]
        print("read    ", order.uri, "->", getattr(order, "text", ""))
        policy = (await desk.read_resource("policy://refunds")).contents[0]
        print("read     policy://refunds ->", getattr(policy, "text", ""))

        got = await desk.get_prompt("answer_ticket", {"order_id": "A123", "topic": "damaged_item"})
        for message in got.messages:
            print(f"message  {message.role}: {getattr(message.content, 'text', message.content)}")


if __name__ == "__main__":
    anyio.run(main)
