"""A small A2A agent built only of a2a-sdk's own server classes (AgentExecutor, DefaultRequestHandler,
InMemoryTaskStore, its Starlette routes): what a toolwire run calls as a tool in tests/a2a. Run as
`python tests/helpers/a2a_sample.py PORT FOLDER`; every message it receives is one line of FOLDER/messages.log
(`TASK_ID<TAB>TEXT`), so a test counts what was sent.

What it does with a new task's text:
- `wait PATH`: works until PATH exists, then completes with "waited for PATH";
- `ask QUESTION`: asks QUESTION (input-required); the reply on the same task completes it with "you said: REPLY";
- anything else: completes with "echo: TEXT"."""

import asyncio
import sys
from pathlib import Path

import uvicorn
from a2a.helpers import new_task_from_user_message, new_text_message
from a2a.server.agent_execution import AgentExecutor, RequestContext
from a2a.server.events import EventQueue
from a2a.server.request_handlers import DefaultRequestHandler
from a2a.server.routes import create_agent_card_routes, create_jsonrpc_routes
from a2a.server.tasks import InMemoryTaskStore, TaskUpdater
from a2a.types import AgentCapabilities, AgentCard, AgentInterface, AgentSkill, Part
from starlette.applications import Starlette


class SampleExecutor(AgentExecutor):
    def __init__(self, folder: Path) -> None:
        self.log = folder / "messages.log"

    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        assert context.message is not None
        text = context.get_user_input().strip()
        task = context.current_task
        if task is None:
            task = new_task_from_user_message(context.message)
            await event_queue.enqueue_event(task)
        with self.log.open("a") as log:
            log.write(f"{task.id}\t{text}\n")
        updater = TaskUpdater(event_queue, task.id, task.context_id)
        if context.current_task is not None and context.current_task.history:
            await updater.add_artifact([Part(text=f"you said: {text}")], name="answer")
            await updater.complete()
            return
        await updater.start_work()
        verb, _, rest = text.partition(" ")
        if verb == "wait":
            while not Path(rest).exists():  # noqa: ASYNC110, ASYNC240 - another process writes it
                await asyncio.sleep(0.05)
            await updater.add_artifact([Part(text=f"waited for {rest}")], name="answer")
            await updater.complete()
        elif verb == "ask":
            await updater.requires_input(new_text_message(rest, task_id=task.id, context_id=task.context_id))
        else:
            await updater.add_artifact([Part(text=f"echo: {text}")], name="answer")
            await updater.complete()

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        assert context.task_id is not None and context.context_id is not None
        await TaskUpdater(event_queue, context.task_id, context.context_id).cancel()


def app(port: int, folder: Path) -> Starlette:
    card = AgentCard(
        name="sample",
        description="A sample A2A agent: echoes, waits for a file, or asks a question.",
        version="1.0.0",
        supported_interfaces=[
            AgentInterface(url=f"http://127.0.0.1:{port}/", protocol_binding="JSONRPC", protocol_version="1.0")
        ],
        capabilities=AgentCapabilities(streaming=True),
        default_input_modes=["text/plain"],
        default_output_modes=["text/plain"],
        skills=[AgentSkill(id="sample", name="sample", description="echo, wait or ask", tags=["test"])],
    )
    handler = DefaultRequestHandler(
        agent_executor=SampleExecutor(folder), task_store=InMemoryTaskStore(), agent_card=card
    )
    return Starlette(routes=[*create_agent_card_routes(card), *create_jsonrpc_routes(handler, "/")])


if __name__ == "__main__":
    port, folder = int(sys.argv[1]), Path(sys.argv[2])
    uvicorn.run(app(port, folder), host="127.0.0.1", port=port, log_level="warning")
