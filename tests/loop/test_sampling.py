"""A tool server borrows the run's model (MCP sampling) and reads the run's roots (issue 23), on a real stdio server
of the tests' own (sampling_server.py), in both protocol eras, with the run's model behind a loopback OpenAI Chat
server that records each request: the server's request reaches the provider as the run's own call would, is
charged to the run's usage and budgets, saved with the run, traced as a `chat` span under the tool call's
`execute_tool` span, and refused readably past the cap, past the budget, with tools, or for a server the user did
not allow."""

import sys
from pathlib import Path
from typing import Any, Literal, cast

import click
import mcp_types as types
import pytest
from mcp.client.session import ClientRequestContext
from opentelemetry.sdk.trace import ReadableSpan

from helpers.cli import clean_env, run_toolwire
from helpers.fake_providers import FakeProvider, Reply, openai_call, openai_completion
from helpers.telemetry import install
from toolwire_client import sampling_texts
from toolwire_client.assembly.trusted_servers import resume_trust, worker_trust
from toolwire_client.calls import RunSampling
from toolwire_client.cli.run_config import config_from
from toolwire_client.cli.trace import trace_lines
from toolwire_client.config import RunConfig, RunLimits, ServerSpec
from toolwire_client.loop import Agent
from toolwire_client.models.openai_chat import OpenAIChatModel
from toolwire_client.models.scripted import ScriptedModel
from toolwire_client.replay import replay
from toolwire_client.run.state import RunState
from toolwire_client.store.sqlite import SqliteRunStore
from toolwire_client.tools.mcp_source import McpSource
from toolwire_client.tools.sampling import REFUSALS_KEPT, Asker, Sampler
from toolwire_client.tools.server_asks import ServerAsks
from toolwire_client.tools.source import LentModel, RunContext, ToolRequest
from toolwire_client.tools.toolbox import ToolBox
from toolwire_shared.messages import AssistantMessage, ToolCall

REPO = Path(__file__).resolve().parents[2]
SERVER = [sys.executable, str(REPO / "tests" / "loop" / "sampling_server.py")]
Mode = Literal["auto", "legacy"]
MODES: list[Mode] = ["auto", "legacy"]  # auto: the 2026-07-28 era (the SDK's server speaks it); legacy: a session


def summarize(call_id: str, text: str = "a very long text about otters", **more: Any) -> Reply:
    return openai_completion(None, [openai_call(call_id, "summarize", {"text": text, **more})])


def usage(prompt: int, completion: int) -> dict[str, int]:
    return {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion}


async def run_agent(fake: FakeProvider, mode: Mode, limits: RunLimits, store: SqliteRunStore | None = None) -> RunState:
    source = McpSource("sampler", command=SERVER, mode=mode, sampling=True)
    model = OpenAIChatModel("gpt-fake", api_key="sk-test", base_url=fake.openai_url)
    config = RunConfig(model="openai:gpt-fake", limits=limits)
    try:
        return await Agent(model, ToolBox([source]), config=config, store=store).run("summarise the otter text")
    finally:
        await model.aclose()


@pytest.mark.parametrize("mode", MODES)
async def test_a_sampling_request_is_answered_by_the_run_s_model_charged_saved_and_traced(
    mode: Mode, tmp_path: Path
) -> None:
    telemetry = install()
    telemetry.spans.clear()
    store = await SqliteRunStore(tmp_path / "runs.sqlite3").open()
    try:
        with FakeProvider() as fake:
            fake.push(
                summarize("s1"),
                openai_completion("Otters are very long.", usage=usage(40, 7)),  # the server's sampling request
                openai_completion("done"),
            )
            state = await run_agent(fake, mode, RunLimits(), store)
        saved = await store.load(state.run_id)
    finally:
        await store.aclose()
    assert state.status == "done", state.stop_reason
    asked = fake.requests[1].body
    assert asked["messages"] == [
        {"role": "system", "content": "Summarise in five words."},
        {"role": "user", "content": "a very long text about otters"},
    ]
    assert asked["max_completion_tokens"] == 50 and "tools" not in asked  # the server's maxTokens; no tools
    assert state.steps[0].results[0].content == "summary by gpt-fake (endTurn): Otters are very long."
    assert state.usage.total_tokens == 15 + 47 + 15  # the step, the sampling request, the answer
    [record] = saved.sampling
    assert (record.server, record.call_id, record.answer, record.refused) == (
        "sampler",
        "s1",
        "Otters are very long.",
        None,
    )
    assert record.usage.total_tokens == 47 and saved.usage == state.usage
    table = trace_lines(saved)  # `toolwire trace show`: under the call that asked
    assert table[1] == "  sampling by sampler: 47 tokens -> Otters are very long." and "summarize" in table[0]
    spans = {span.name: span for span in telemetry.spans.get_finished_spans()}
    tool, sampled = spans["execute_tool summarize"], _sampling_span(telemetry.spans.get_finished_spans())
    assert sampled.parent is not None and sampled.parent.span_id == tool.context.span_id
    assert sampled.attributes is not None and sampled.attributes["gen_ai.usage.output_tokens"] == 7
    telemetry.spans.clear()

    replayed = await replay(saved)  # offline: the recorded request is counted where it was
    assert replayed.identical, replayed.difference
    assert replayed.replayed.usage == saved.usage and replayed.replayed.sampling == saved.sampling
    telemetry.spans.clear()


def _sampling_span(spans: tuple[ReadableSpan, ...]) -> ReadableSpan:
    [span] = [s for s in spans if (s.attributes or {}).get("toolwire.step.kind") == "sampling"]
    assert span.name == "chat gpt-fake"
    return span


@pytest.mark.parametrize("mode", MODES)
async def test_the_run_s_model_calls_the_server_s_tool_in_a_sampling_tool_loop(mode: Mode) -> None:
    with FakeProvider() as fake:
        fake.push(
            openai_completion(None, [openai_call("r1", "research", {"question": "do otters hold hands?"})]),
            openai_completion(None, [openai_call("t1", "lookup", '{"key": "otters"}')]),  # the server's round 1
            openai_completion("Yes, they do."),  # round 2, with the tool's result
            openai_completion("done"),
        )
        state = await run_agent(fake, mode, RunLimits())
    assert state.status == "done", state.stop_reason
    first, second = fake.requests[1].body, fake.requests[2].body
    assert [tool["function"]["name"] for tool in first["tools"]] == ["lookup"]
    assert second["messages"][-2]["tool_calls"][0]["function"]["name"] == "lookup"
    assert second["messages"][-1] == {
        "role": "tool",
        "tool_call_id": "t1",
        "content": "fact about otters: otters hold hands",
    }
    assert state.steps[0].results[0].content == "research (endTurn): Yes, they do."
    assert [r.answer for r in state.sampling] == ['lookup({"key": "otters"})', "Yes, they do."]


@pytest.mark.parametrize("mode", MODES)
async def test_a_sampling_request_past_the_run_s_cap_is_refused_readably(mode: Mode) -> None:
    with FakeProvider() as fake:
        fake.push(summarize("s1"), openai_completion("Otters."), summarize("s2", "more"), openai_completion("done"))
        state = await run_agent(fake, mode, RunLimits(max_sampling_requests=1))
    assert state.status == "done", state.stop_reason
    assert len(fake.requests) == 4  # the second sampling request never reached the provider
    refusal = sampling_texts.sampling_cap("sampler", 1)
    second = state.steps[1].results[0]
    if mode == "legacy":  # the server got the error and said so in its result
        assert second.content == f"refused: {refusal}" and not second.is_error
    else:  # 2026-07-28: an input response cannot be an error, so the call ends with the refusal
        assert second.is_error and refusal in second.content
    assert [r.refused for r in state.sampling] == [None, refusal]
    assert f"  sampling by sampler: refused: {refusal}" in trace_lines(state, wide=True)


async def test_a_sampling_request_past_the_token_budget_is_refused_before_the_provider_is_asked() -> None:
    with FakeProvider() as fake:
        fake.push(openai_completion(None, [openai_call("s1", "summarize", {"text": "otters"})], usage=usage(990, 10)))
        state = await run_agent(fake, "legacy", RunLimits(max_tokens=1_200))
    assert len(fake.requests) == 1  # neither the sampling request nor a next step was sent
    result = state.steps[0].results[0].content
    assert result.startswith("refused: sampling refused: stopped by the token budget before a sampling request of")
    assert "1000 tokens spent" in result
    assert state.stop_reason == "token_budget" and state.usage.total_tokens == 1_000


async def call(
    source: McpSource, name: str, state: RunState | None = None, lent: LentModel | None = None, **arguments: Any
) -> str:
    run = RunContext("r1", state, model=lent, sampled=RunSampling(state) if state is not None else None)
    request = ToolRequest(ToolCall(id=f"c-{name}", name=name, arguments=arguments), run, 20)
    return (await source.call(request)).content


@pytest.mark.parametrize("mode", MODES)
async def test_a_server_not_allowed_to_sample_is_refused_and_roots_are_listed(mode: Mode, tmp_path: Path) -> None:
    state = RunState(run_id="r1", agent_name="a", task="t", model="m")
    source = McpSource("plain", command=SERVER, mode=mode, roots=[str(tmp_path)])
    await source.start()
    try:
        assert await call(source, "capabilities") == "sampling=False roots=True sampling.tools=False"  # not lent
        refused = await call(source, "summarize", state, text="x")
        assert await call(source, "my_roots") == tmp_path.as_uri()
    finally:
        await source.aclose()
    said = "sampling is not allowed for server plain; the user can allow it with --allow-sampling plain"
    assert said in refused and (mode == "auto" or refused.startswith("refused: "))
    assert state.sampling[0].refused is not None and said in state.sampling[0].refused  # on the run's record


@pytest.mark.parametrize("mode", MODES)
async def test_without_roots_none_are_advertised_and_a_tool_name_no_provider_takes_is_refused(mode: Mode) -> None:
    state = RunState(run_id="r1", agent_name="a", task="t", model="m")
    source = McpSource("sampler", command=SERVER, mode=mode, sampling=True)
    lent = LentModel(ScriptedModel(lambda messages: AssistantMessage(text="never")), RunLimits())
    await source.start()
    try:
        assert await call(source, "capabilities") == "sampling=True roots=False sampling.tools=True"
        roots = await call(source, "my_roots")
        with_tools = await call(source, "summarize", state, lent, text="x", with_tools=True)
    finally:
        await source.aclose()
    assert sampling_texts.roots_not_given("sampler") in roots  # the server asked though it was not told of roots
    assert mode == "auto" or roots.startswith("refused: ")
    assert sampling_texts.sampling_tool_name("sampler", "look.up") in with_tools
    assert state.sampling[0].refused == sampling_texts.sampling_tool_name("sampler", "look.up")


def test_run_allows_sampling_per_server_and_passes_roots(tmp_path: Path) -> None:
    with FakeProvider() as fake:
        roots = openai_completion(None, [openai_call("r", "my_roots", {})])
        fake.push(summarize("s1"), openai_completion("Otters."), roots, openai_completion("done"))
        args = ["run", "go", "--model", "openai:gpt-fake", "--base-url", fake.openai_url, "--server", " ".join(SERVER)]
        args += ["--allow-sampling", "python", "--root", str(tmp_path), "--db", str(tmp_path / "r.sqlite3")]
        out = run_toolwire(*args, env=clean_env(OPENAI_API_KEY="sk-test"))
    assert out.returncode == 0, out.stderr
    tools = [m["content"] for m in fake.requests[3].body["messages"] if m["role"] == "tool"]
    assert tools == ["summary by gpt-fake (endTurn): Otters.", tmp_path.resolve().as_uri()]


def test_run_refuses_a_missing_root_and_an_unknown_server_with_a_usage_line(tmp_path: Path) -> None:
    """The options as `toolwire run` takes them (a UsageError is its one `Error: ...` line, exit 2)."""
    options: dict[str, Any] = {"model_spec": "openai:gpt-fake", "commands": [SERVER], "tool_choice": None}
    options |= {"prompt_cache": "5m", "stream": False, "allow": (), "risky": (), "criteria": (), "review_retries": 1}
    options |= {"delegate": False, "skills": False, "planned": False, "max_replans": 1, "system": None}
    options |= {"max_steps": 5, "max_tokens": None, "max_cost": None, "max_wall": None}
    missing = tmp_path / "nope"
    with pytest.raises(click.UsageError, match=f"--root {missing}: {missing} does not exist"):
        config_from(**options, roots=(str(missing),))
    with pytest.raises(click.UsageError, match="--allow-sampling nosuch: no tool server of this run has that name"):
        config_from(**options, allow_sampling=("nosuch",))
    (tmp_path / "a file").touch()
    with pytest.raises(click.UsageError, match="is not a folder"):
        config_from(**options, roots=(str(tmp_path / "a file"),))
    config = config_from(**options, allow_sampling=("python",), roots=(str(tmp_path / ".." / tmp_path.name),))
    assert [(s.sampling, s.roots) for s in config.servers] == [(True, [str(tmp_path.resolve())])]


def test_only_the_worker_s_servers_file_lends_a_fleet_run_s_model_to_a_server(tmp_path: Path) -> None:
    """A submitter cannot turn sampling on for a worker's server (it would spend the worker's model and key); the
    worker's own servers file can. A resumed run whose config is not sealed is the same: only the file lends the
    model (an edit in the run store never does)."""
    servers = tmp_path / "servers.toml"
    servers.write_text('[servers.lender]\ncommand = ["x"]\nsampling = true\n[servers.plain]\ncommand = ["y"]\n')
    submitted = RunConfig(
        model="scripted:x", servers=[ServerSpec(name="plain", sampling=True), ServerSpec(name="lender")]
    )
    saved = submitted.model_dump(mode="json")
    worker = worker_trust(str(servers)).specs_for("run-1", saved, submitted)
    assert [(spec.name, spec.sampling) for spec in worker] == [("plain", False), ("lender", True)]
    resumed = resume_trust(str(servers)).specs_for("run-1", saved, submitted)  # no seal: by the file alone
    assert [(spec.name, spec.sampling) for spec in resumed] == [("plain", False), ("lender", True)]


async def test_a_handshake_era_request_on_a_connection_with_calls_of_two_runs_is_refused() -> None:
    """A shared connection: the server's own request does not say which run's call it came during, so none is
    charged; with one run's call in flight, that run is."""
    notes: list[str] = []
    asks = ServerAsks("shared", sampling=True, note=notes.append)
    states = [RunState(run_id=f"r{n}", agent_name="a", task="t", model="m") for n in (1, 2)]
    model = ScriptedModel(lambda messages: AssistantMessage(text="ok"))
    lent = LentModel(model, RunLimits())
    runs = [RunContext(s.run_id, s, model=lent, sampled=RunSampling(s)) for s in states]
    requests = [ToolRequest(ToolCall(id=f"c{n}", name="summarize"), run, 5) for n, run in enumerate(runs)]
    params = types.CreateMessageRequestParams(
        messages=[types.SamplingMessage(role="user", content=types.TextContent(type="text", text="hi"))],
        max_tokens=10,
    )
    context = cast(ClientRequestContext, None)  # not read
    with asks.running(requests[0]), asks.running(requests[1]):
        refused = await asks._sample(context, params)
    with asks.running(requests[1]):
        answered = await asks._sample(context, params)
    assert isinstance(refused, types.ErrorData)
    assert refused.message == sampling_texts.sampling_no_run(
        "shared", "calls of 2 runs were in flight on one shared connection"
    )
    assert isinstance(answered, types.CreateMessageResult) and not states[0].sampling
    assert [(r.call_id, r.answer) for r in states[1].sampling] == [("c1", "ok")]


def answered_tokens(state: RunState) -> int:
    return state.sampling[-1].usage.total_tokens


class CapRecorder(ScriptedModel):
    """A scripted model that keeps the output cap each call was given."""

    def __init__(self) -> None:
        super().__init__(lambda messages: AssistantMessage(text="ok"))
        self.caps: list[int | None] = []

    async def complete(self, messages: Any, tools: Any, max_output_tokens: int | None = None) -> Any:
        self.caps.append(max_output_tokens)
        return await super().complete(messages, tools, max_output_tokens)


async def test_a_hostile_server_s_requests_are_bounded_by_the_budget_and_its_refusals_by_the_record() -> None:
    """A server asking for a billion output tokens gets what the budget leaves; one that asks in a loop though it
    is not allowed is refused every time, and the run's record keeps only the first refusals, without messages."""
    model = CapRecorder()
    state = RunState(run_id="r1", agent_name="a", task="t", model="m")
    lent = LentModel(model, RunLimits(max_tokens=5_000))
    asker = Asker(RunContext("r1", state, model=lent, sampled=RunSampling(state)), "c1")
    huge = types.CreateMessageRequestParams(
        messages=[types.SamplingMessage(role="user", content=types.TextContent(type="text", text="x" * 400))],
        max_tokens=10**9,
    )
    notes: list[str] = []
    answered = await Sampler("greedy", True, notes.append).answer(huge, asker)
    assert isinstance(answered, types.CreateMessageResult)
    assert notes == [sampling_texts.sampled("greedy", answered_tokens(state), 1, RunLimits().max_sampling_requests)]
    assert model.caps[0] is not None and 4_000 < model.caps[0] < 5_000

    for _ in range(50):
        refused = await Sampler("pest", False, lambda note: None).answer(huge, asker)
        assert isinstance(refused, types.ErrorData) and "--allow-sampling pest" in refused.message
    refusals = [r for r in state.sampling if r.refused]
    assert len(refusals) == REFUSALS_KEPT and all(not r.asked for r in refusals)
    assert len(model.caps) == 1  # none of them reached the model


async def test_sampling_with_tools_is_refused_when_a_tool_must_be_called_or_the_run_forces_its_choice() -> None:
    model = CapRecorder()
    state = RunState(run_id="r1", agent_name="a", task="t", model="m")
    asker = Asker(RunContext("r1", state, model=LentModel(model, RunLimits()), sampled=RunSampling(state)), "c1")
    tool = types.Tool(name="lookup", input_schema={"type": "object"})
    message = types.SamplingMessage(role="user", content=types.TextContent(type="text", text="hi"))

    def params(mode: Literal["auto", "required", "none"]) -> types.CreateMessageRequestParams:
        choice = types.ToolChoice(mode=mode)
        return types.CreateMessageRequestParams(messages=[message], max_tokens=10, tools=[tool], tool_choice=choice)

    sampler = Sampler("s", True, lambda note: None)
    required = await sampler.answer(params("required"), asker)
    assert isinstance(required, types.ErrorData) and required.message == sampling_texts.sampling_tool_choice("s")
    model.tool_choice = "lookup"  # --tool-choice lookup: the adapter would force it on the server's tools too
    forced = await sampler.answer(params("auto"), asker)
    assert isinstance(forced, types.ErrorData) and forced.message == sampling_texts.sampling_run_tool_choice(
        "s", "lookup"
    )
    none = await sampler.answer(params("none"), asker)  # no tools offered: the run's choice does not apply
    assert isinstance(none, types.CreateMessageResultWithTools) and model.caps == [10]
