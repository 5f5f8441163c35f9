"""`agent serve --a2a` against a2a-sdk's own Python client (not ours): send, stream, get and cancel; a task waiting for
approval (input-required) answered through A2A, also after the server was killed -9 and started again; a decision
made with `toolwire approve` seen by the A2A client; the bearer tokens: none, a wrong one, another agent's task; and
what the door does not offer (push notifications, tasks/list) refused saying so."""

import json
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest
from a2a.client import Client, ClientConfig, create_client
from a2a.types import (
    CancelTaskRequest,
    DeleteTaskPushNotificationConfigRequest,
    GetTaskPushNotificationConfigRequest,
    GetTaskRequest,
    ListTaskPushNotificationConfigsRequest,
    ListTasksRequest,
    Message,
    Part,
    Role,
    SendMessageConfiguration,
    SendMessageRequest,
    StreamResponse,
    Task,
    TaskPushNotificationConfig,
    TaskState,
)
from google.protobuf.json_format import MessageToDict
from google.protobuf.struct_pb2 import Value

from agent2agent.a2a_model import tool_turns
from agent2agent.a2a_serve import ALICE, BOB, A2AServer
from helpers.cli import clean_env, run_toolwire
from helpers.fake_providers import FakeProvider
from helpers.polling import await_until
from helpers.servers import tokens_file
from toolwire_client.store import open_store


@asynccontextmanager
async def a2a_client(url: str, token: str | None, streaming: bool = False) -> AsyncIterator[Client]:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    async with httpx.AsyncClient(headers=headers, timeout=60) as http:
        client = await create_client(url, ClientConfig(httpx_client=http, streaming=streaming))
        yield client


def message(text: str, task_id: str = "") -> Message:
    return Message(
        message_id=f"m-{text[:8]}-{task_id[-6:]}", role=Role.ROLE_USER, task_id=task_id, parts=[Part(text=text)]
    )


async def send(client: Client, text: str, task_id: str = "", now: bool = False) -> Task:
    request = SendMessageRequest(message=message(text, task_id))
    if now:
        request.configuration.CopyFrom(SendMessageConfiguration(return_immediately=True))
    events = [event async for event in client.send_message(request)]
    assert len(events) == 1 and events[0].HasField("task"), events
    return events[0].task


def said(task: Task) -> str:
    return "\n".join(p.text for p in task.status.message.parts)


def waiting(task: Task) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = MessageToDict(task.metadata)["waiting"]
    return found


async def test_send_get_and_stream_a_run_with_the_a2a_sdk_client(served: A2AServer) -> None:
    async with a2a_client(served.url, ALICE) as client:
        task = await send(client, 'call shout {"text": "hi"}')
        assert task.status.state == TaskState.TASK_STATE_COMPLETED, said(task)
        assert [p.text for p in task.artifacts[0].parts] == ["done: HI"]
        got = await client.get_task(GetTaskRequest(id=task.id))
        assert got.status.state == TaskState.TASK_STATE_COMPLETED and said(got) == "done: HI"
    store = await open_store(str(served.db))
    try:
        run = await store.load(task.id)  # the task is the run: no second record
    finally:
        await store.aclose()
    assert run.status == "done" and run.final_answer == "done: HI" and run.task == 'call shout {"text": "hi"}'

    async with a2a_client(served.url, ALICE, streaming=True) as client:
        events: list[StreamResponse] = [
            e async for e in client.send_message(SendMessageRequest(message=message('call shout {"text": "yo"}')))
        ]
    assert events[0].HasField("task")
    assert events[-1].HasField("status_update"), events[-1]
    assert events[-1].status_update.status.state == TaskState.TASK_STATE_COMPLETED
    artifacts = [e.artifact_update.artifact for e in events if e.HasField("artifact_update")]
    assert [p.text for a in artifacts for p in a.parts] == ["done: YO"]


async def test_cancel_stops_the_run_while_its_tool_works(served: A2AServer, tmp_path: Path) -> None:
    hold = tmp_path / "hold"
    async with a2a_client(served.url, ALICE) as client:
        task = await send(client, f"call hold {json.dumps({'path': str(hold)})}", now=True)
        assert task.status.state == TaskState.TASK_STATE_WORKING
        await await_until(anyio.Path(f"{hold}.started").exists, "the hold tool to start", proc=served.proc)
        canceled = await client.cancel_task(CancelTaskRequest(id=task.id))
        assert canceled.status.state == TaskState.TASK_STATE_CANCELED
        got = await client.get_task(GetTaskRequest(id=task.id))
        assert got.status.state == TaskState.TASK_STATE_CANCELED
        with pytest.raises(Exception, match="has ended"):
            await client.cancel_task(CancelTaskRequest(id=task.id))
    store = await open_store(str(served.db))
    try:
        run = await store.load(task.id)
    finally:
        await store.aclose()
    assert (run.status, run.stop_reason, run.pending) == ("stopped", "canceled", [])
    assert "outcome unknown" in run.steps[-1].results[0].content.lower() or run.steps[-1].results[0].is_error


async def test_an_approval_answered_through_a2a_after_the_server_was_killed(served: A2AServer, tmp_path: Path) -> None:
    notes = tmp_path / "notes"
    async with a2a_client(served.url, ALICE) as client:
        task = await send(client, f"call note {json.dumps({'text': 'refund', 'path': str(notes)})}")
        assert task.status.state == TaskState.TASK_STATE_INPUT_REQUIRED, said(task)
        [wanted] = waiting(task)
        assert (wanted["wants"], wanted["tool"], wanted["arguments"]["text"]) == ("approval", "note", "refund")
        assert "approve" in said(task)
        with pytest.raises(Exception, match="not a decision"):
            await send(client, "maybe", task.id)
    assert not notes.exists()

    served.kill()
    served.start()
    async with a2a_client(served.url, ALICE) as client:
        again = await client.get_task(GetTaskRequest(id=task.id))
        assert again.status.state == TaskState.TASK_STATE_INPUT_REQUIRED  # the task is the run in the run store
        done = await send(client, "approve", task.id)
        assert done.status.state == TaskState.TASK_STATE_COMPLETED, said(done)
        assert said(done) == "done: noted refund"
    assert notes.read_text() == "refund\n"  # run once, after the approval


async def test_a_rejection_and_a_decision_made_with_toolwire_approve(served: A2AServer, tmp_path: Path) -> None:
    notes = tmp_path / "notes"
    async with a2a_client(served.url, ALICE) as client:
        first = await send(client, f"call note {json.dumps({'text': 'one', 'path': str(notes)})}")
        rejected = await send(client, "reject: not today", first.id)
        assert rejected.status.state == TaskState.TASK_STATE_COMPLETED
        assert "not today" in said(rejected)

        second = await send(client, f"call note {json.dumps({'text': 'two', 'path': str(notes)})}")
        assert second.status.state == TaskState.TASK_STATE_INPUT_REQUIRED
        approved = await anyio.to_thread.run_sync(
            lambda: run_toolwire("approve", second.id, "--db", str(served.db), env=clean_env())
        )
        assert approved.returncode == 0, approved.stderr

        async def completed() -> Task | None:
            got = await client.get_task(GetTaskRequest(id=second.id))
            return got if got.status.state == TaskState.TASK_STATE_COMPLETED else None

        done = await await_until(completed, "the task approved with `toolwire approve` to complete", proc=served.proc)
    assert said(done) == "done: noted two"
    assert notes.read_text() == "two\n"


async def test_no_token_a_wrong_token_and_another_agents_task_are_refused(served: A2AServer) -> None:
    async with a2a_client(served.url, ALICE) as client:
        task = await send(client, 'call shout {"text": "mine"}')
    for token in (None, "wrong-token"):
        async with a2a_client(served.url, token) as client:
            with pytest.raises(Exception, match="401"):
                await client.get_task(GetTaskRequest(id=task.id))
    async with a2a_client(served.url, BOB) as client:
        for call in (
            client.get_task(GetTaskRequest(id=task.id)),
            client.cancel_task(CancelTaskRequest(id=task.id)),
            send(client, "approve", task.id),
        ):
            with pytest.raises(Exception, match="of yours"):
                await call
    async with httpx.AsyncClient() as http:
        card = (await http.get(served.url + ".well-known/agent-card.json")).json()  # the card is public
        rebound = await http.post(served.url, headers={"Host": "evil.example", "Authorization": f"Bearer {ALICE}"})
    assert card["securitySchemes"]["bearer"]["httpAuthSecurityScheme"]["scheme"] == "Bearer"
    assert rebound.status_code == 421  # a page on another name (DNS rebinding) is refused before anything runs


async def test_what_the_door_does_not_offer_is_refused_saying_so(served: A2AServer) -> None:
    """The SDK's handler methods this door has no part for (push notifications, tasks/list) answer the caller that
    the agent does not offer them."""
    async with a2a_client(served.url, ALICE) as client:
        for call in (
            client.create_task_push_notification_config(TaskPushNotificationConfig(task_id="t1")),
            client.get_task_push_notification_config(GetTaskPushNotificationConfigRequest(task_id="t1")),
            client.list_task_push_notification_configs(ListTaskPushNotificationConfigsRequest(task_id="t1")),
            client.delete_task_push_notification_config(DeleteTaskPushNotificationConfigRequest(task_id="t1")),
        ):
            with pytest.raises(Exception, match="this toolwire agent does not offer push notifications"):
                await call
        with pytest.raises(Exception, match="this toolwire agent does not offer tasks/list"):
            await client.list_tasks(ListTasksRequest())


async def test_a_task_whose_tool_server_will_not_start_fails_saying_why(tmp_path: Path) -> None:
    """The run cannot start (its tool server exits at once): the task fails with the reason, never left working."""
    tokens = tokens_file(tmp_path, {"alice": (ALICE, ["*"])})
    broken = f"{sys.executable} -c 'import sys; sys.exit(3)'"
    with FakeProvider(tool_turns) as model:
        server = A2AServer(model.openai_url, tmp_path / "runs.db", tokens, tmp_path / "a2a.log", broken).start()
        try:
            async with a2a_client(server.url, ALICE) as client:
                task = await send(client, 'call shout {"text": "hi"}')
                assert task.status.state == TaskState.TASK_STATE_FAILED, said(task)
                assert "could not go on" in said(task) and "initialize" in said(task), said(task)
        finally:
            server.stop()


async def test_a_task_working_when_the_server_was_killed_is_driven_on_after_the_restart(tmp_path: Path) -> None:
    """Killed -9 while its tool works: started again, the server takes the run up once the dead driver's lease has run
    out (2 s here), settles the call the kill cut off (not idempotent: outcome unknown, never run twice) and ends it."""
    tokens, hold = tokens_file(tmp_path, {"alice": (ALICE, ["*"])}), tmp_path / "hold"
    with FakeProvider(tool_turns) as model:
        server = A2AServer(
            model.openai_url, tmp_path / "runs.db", tokens, tmp_path / "a2a.log", TOOLWIRE_LEASE_S="2"
        ).start()
        try:
            async with a2a_client(server.url, ALICE) as client:
                task = await send(client, f"call hold {json.dumps({'path': str(hold)})}", now=True)
                await await_until(anyio.Path(f"{hold}.started").exists, "the hold tool to start", proc=server.proc)
            server.kill()
            server.start()
            async with a2a_client(server.url, ALICE) as client:

                async def ended() -> Task | None:
                    got = await client.get_task(GetTaskRequest(id=task.id))
                    return got if got.status.state == TaskState.TASK_STATE_COMPLETED else None

                done = await await_until(ended, "the task to be driven on after the restart", proc=server.proc)
        finally:
            server.stop()
    assert "outcome" in said(done).lower(), said(done)
    assert not hold.exists()  # the hold call was not sent again: nobody released it, yet the run ended


async def test_a_tools_question_is_answered_through_a2a(served: A2AServer) -> None:
    async with a2a_client(served.url, ALICE) as client:
        task = await send(client, "call paint {}")
        assert task.status.state == TaskState.TASK_STATE_INPUT_REQUIRED, said(task)
        [wanted] = waiting(task)
        assert (wanted["wants"], wanted["question"]) == ("input", "Which colour?")
        assert wanted["schema"]["required"] == ["colour"]
        with pytest.raises(Exception, match="colour"):  # checked against the question's schema: nothing recorded
            await send_data(client, {"action": "accept", "content": {"hue": "red"}}, task.id)
        done = await send_data(client, {"action": "accept", "content": {"colour": "red"}}, task.id)
        assert done.status.state == TaskState.TASK_STATE_COMPLETED, said(done)
        assert said(done) == "done: painted red"


async def send_data(client: Client, data: dict[str, Any], task_id: str) -> Task:
    value = Value()
    value.struct_value.update(data)
    reply = Message(message_id=f"d-{task_id[-6:]}-{len(str(data))}", role=Role.ROLE_USER, task_id=task_id)
    reply.parts.append(Part(data=value))
    events = [event async for event in client.send_message(SendMessageRequest(message=reply))]
    return events[0].task
