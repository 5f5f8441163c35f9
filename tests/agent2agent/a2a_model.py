"""The model of the A2A tests' runs, behind a FakeProvider: a task `call TOOL {JSON}` calls that tool once with those
arguments, then answers `done: RESULT`."""

import json

from helpers.fake_providers import RecordedRequest, Reply, openai_call, openai_completion


def tool_turns(request: RecordedRequest) -> Reply:
    messages = request.body["messages"]
    results = [m for m in messages if m["role"] == "tool"]
    if not results:
        task = next(m["content"] for m in messages if m["role"] == "user")
        _, tool, arguments = task.split(" ", 2)
        return openai_completion(None, [openai_call("call_1", tool, arguments)])
    return openai_completion(f"done: {results[-1]['content']}")


def asking_turns(request: RecordedRequest) -> Reply:
    """A run whose task is a message for the remote agent: it asks `ask_sample` once, then says what came back."""
    messages = request.body["messages"]
    results = [m for m in messages if m["role"] == "tool"]
    if not results:
        task = next(m["content"] for m in messages if m["role"] == "user")
        return openai_completion(None, [openai_call("call_ask", "ask_sample", json.dumps({"message": task}))])
    return openai_completion(f"Agent said: {results[-1]['content']}")
