"""The model of the task tests' runs, behind a FakeProvider: the task says "Run TOOL SECONDS MARKER" (a tool of
task_tools.py); it calls that tool once, then answers with what the tool returned."""

import json

from helpers.fake_providers import RecordedRequest, Reply, openai_call, openai_completion


def job_turns(request: RecordedRequest) -> Reply:
    results = [m for m in request.body["messages"] if m["role"] == "tool"]
    if not results:
        task = next(m["content"] for m in request.body["messages"] if m["role"] == "user")
        _, tool, seconds, marker = task.split(" ", 3)
        arguments = json.dumps({"seconds": float(seconds), "marker": marker})
        return openai_completion(None, [openai_call("call_job", tool, arguments)])
    return openai_completion(f"Job said: {results[-1]['content']}")
