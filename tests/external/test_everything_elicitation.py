"""server-everything's `trigger-elicitation-request` (a form of thirteen fields, asked in the middle of the call) from
toolwire's client: offered now that the client declares elicitation; a run that calls it pauses durably (`toolwire
approvals` shows the question, `toolwire answer` records an answer checked against the server's schema, `resume`
sends it and the run ends with the tool's result), or an `on_elicit` callback answers at once.

server-everything speaks only the handshake era, so the question is a server-to-client request mid-call. With no one
to answer it then, toolwire answers it `cancel` and drops the tool's result (docs/durable-runs.md); on `resume` a new
server process runs the tool again from its start, it asks again, and the recorded answer is given. The tool has no
side effects, so running it twice is harmless here; a tool that has them should ask before them."""

import json
from pathlib import Path

from external.driver import calls
from external.servers import needs, npm_server, toolwire
from toolwire_client.config import RunConfig, RunLimits
from toolwire_client.loop import Agent
from toolwire_client.mistakes import WAITING
from toolwire_client.models.scripted import ScriptedModel
from toolwire_client.tools.mcp_source import McpSource
from toolwire_client.tools.toolbox import ToolBox
from toolwire_shared.elicitation import InputAnswer, InputWanted

EVERYTHING = npm_server("server-everything")
TOOL = "trigger-elicitation-request"
QUESTION = "Please provide inputs for the following fields:"
TASK = json.dumps([[TOOL, {}]])

pytestmark = needs(EVERYTHING)


def test_a_run_pauses_on_the_question_the_cli_answers_it_and_resume_ends_with_the_result(tmp_path: Path) -> None:
    server = " ".join(EVERYTHING)
    code, out, err = toolwire(tmp_path, "run", TASK, "--model", "scripted:calls", "--server", server, "--json")
    assert code == WAITING, err  # the run waits for a person: exit 4
    paused = json.loads(out)
    run_id = paused["run_id"]
    assert paused["status"] == "waiting_for_approval", paused["stop_reason"]
    [pending] = paused["pending"]
    assert pending["call"]["name"] == TOOL and pending["state"] == "pending_input"
    assert (pending["input"]["era"], pending["input"]["message"]) == ("handshake", QUESTION)
    assert pending["input"]["requested_schema"]["required"] == ["name"]
    assert f"toolwire answer {run_id} call_0 --value" in err

    code, table, err = toolwire(tmp_path, "approvals")
    assert code == 0 and "input requested" in table and run_id in table and TOOL in table, table + err
    code, listed, err = toolwire(tmp_path, "approvals", "--json")
    [asked] = json.loads(listed)["waiting"]
    assert (asked["run_id"], asked["call"]["id"], asked["state"]) == (run_id, "call_0", "pending_input")
    assert asked["input"]["message"] == QUESTION and "integer" in asked["input"]["requested_schema"]["properties"]

    code, _, err = toolwire(tmp_path, "answer", run_id, "--value", '{"name": "Ada", "integer": 500}')
    assert code != 0 and len(err.strip().splitlines()) == 1, err
    assert "integer: 500 is greater than the maximum of 100" in err and "(required: name)" in err
    answer = '{"name": "Ada Lovelace", "check": true, "integer": 7}'
    code, said, err = toolwire(tmp_path, "answer", run_id, "--value", answer, "--as", "ada")
    assert code == 0 and f"answered call_0: {TOOL} of run {run_id}" in said and "by ada" in said, err

    # a new server process runs the tool again from its start; it asks again and gets the recorded answer (the first
    # send's question was answered `cancel` and its result dropped: the model never saw it)
    code, out, err = toolwire(tmp_path, "resume", run_id)
    assert code == 0 and f"{run_id}: done" in out, out + err
    [result] = json.loads(out.split("answer: ", 1)[1].splitlines()[0])
    assert result.startswith("✅ User provided the requested information!")
    assert "- Name: Ada Lovelace\n- Agreed to terms: true\n- Favorite Integer: 7" in result
    assert '"action": "accept"' in result


async def test_on_elicit_answers_at_once_and_a_decline_reaches_the_tool() -> None:
    asked: list[InputWanted] = []
    answers = [InputAnswer(action="accept", content={"name": "Grace"}), InputAnswer(action="decline")]

    async def on_elicit(wanted: InputWanted) -> InputAnswer:
        asked.append(wanted)
        return answers[len(asked) - 1]

    config = RunConfig(model="scripted:calls", limits=RunLimits(max_steps=3))
    async with ToolBox([McpSource("everything", command=EVERYTHING)]) as box:
        assert TOOL in [spec.name for spec in box.specs]  # listed only for a client that declares elicitation
        finals = []
        for _ in answers:
            agent = Agent(ScriptedModel(calls), box, config=config, on_elicit=on_elicit)
            state = await agent.run(TASK)
            assert state.status == "done", state.stop_reason
            finals.append(json.loads(state.final_answer or "[]"))
    assert [(w.message, w.era, w.mode) for w in asked] == [(QUESTION, "handshake", "form")] * 2
    [accepted], [declined] = finals
    assert "- Name: Grace" in accepted and '"action": "accept"' in accepted
    assert declined.startswith("❌ User declined to provide the requested information.")
