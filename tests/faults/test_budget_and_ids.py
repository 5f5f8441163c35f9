"""Never overspend, and every call addressed once: each request carries an output cap of at most what the budget
leaves; a provider that reports more than the budget stops the run as over budget with the overspend said; missing
or repeated call ids in one turn are made unique before the turn is saved."""

from typing import Any

from helpers.fake_providers import FakeProvider, openai_call, openai_completion
from toolwire_client.config import RunLimits
from toolwire_client.loop import Agent
from toolwire_client.models.openai_chat import OpenAIChatModel
from toolwire_client.run.call_ids import unique_call_ids
from toolwire_client.run.ordering import check_order
from toolwire_client.tools.registry_source import RegistrySource
from toolwire_client.tools.toolbox import ToolBox
from toolwire_server import Registry
from toolwire_shared.messages import AssistantMessage, ToolCall

SENT: list[str] = []


def toolbox() -> ToolBox:
    registry = Registry("local")

    def get_order(order_id: str) -> dict[str, Any]:
        """Look up an order."""
        SENT.append(order_id)
        return {"order_id": order_id, "item": "keyboard"}

    registry.add(get_order)
    return ToolBox([RegistrySource(registry)])


def usage(prompt: int, completion: int) -> dict[str, int]:
    return {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion}


async def test_each_request_carries_what_the_budget_leaves_and_an_over_report_stops_the_run() -> None:
    SENT.clear()
    with FakeProvider() as fake:
        fake.push(
            openai_completion(None, [openai_call("c1", "get_order", '{"order_id": "A123"}')], usage=usage(300, 40)),
            # the provider ignores the cap and reports far more than was left: the run must not end `done`
            openai_completion(None, [openai_call("c2", "get_order", '{"order_id": "B200"}')], usage=usage(600, 900)),
        )
        model = OpenAIChatModel("gpt-fake", api_key="sk-test", base_url=fake.openai_url)
        state = await Agent.of(model, toolbox(), limits=RunLimits(max_tokens=1500, output_reserve_tokens=50)).run("t")
        await model.aclose()
    first, second = (r.body["max_completion_tokens"] for r in fake.requests)
    assert 0 < first <= 1500 and 0 < second <= 1500 - 340  # never more than the budget leaves
    assert second < first
    assert (state.status, state.stop_reason) == ("stopped", "token_budget")
    assert "stopped over the token budget at step 2: the provider reported 1840 tokens in all, 340 over" in (
        state.report or ""
    )
    assert SENT == ["A123"]  # the over-budget turn's call was not run
    assert state.steps[-1].results[0].error_kind == "blocked"
    check_order(state.messages)


async def test_a_budget_too_small_for_the_next_reply_stops_before_the_call() -> None:
    with FakeProvider() as fake:
        model = OpenAIChatModel("gpt-fake", api_key="sk-test", base_url=fake.openai_url)
        state = await Agent.of(model, toolbox(), limits=RunLimits(max_tokens=60, output_reserve_tokens=50)).run("t")
        await model.aclose()
    assert fake.requests == [] and state.stop_reason == "token_budget"


async def test_missing_and_repeated_call_ids_are_made_unique_before_the_turn_is_saved() -> None:
    SENT.clear()
    with FakeProvider() as fake:
        fake.push(
            openai_completion(
                None,
                [
                    openai_call(None, "get_order", '{"order_id": "A1"}'),
                    openai_call("dup", "get_order", '{"order_id": "A2"}'),
                    openai_call("dup", "get_order", '{"order_id": "A3"}'),
                ],
            ),
            openai_completion("three orders"),
        )
        model = OpenAIChatModel("gpt-fake", api_key="sk-test", base_url=fake.openai_url)
        state = await Agent(model, toolbox()).run("t")
        await model.aclose()
    ids = [c.id for c in state.steps[0].tool_calls]
    assert len(set(ids)) == 3 and ids[1] == "dup" and all(ids)
    assert sorted(SENT) == ["A1", "A2", "A3"] and state.status == "done"
    echoed = fake.requests[1].body["messages"]
    assert [m["tool_call_id"] for m in echoed if m["role"] == "tool"] == ids  # each result answers its own call
    assert [c["id"] for c in echoed[1]["tool_calls"]] == ids


def test_the_providers_own_blocks_are_renamed_with_the_calls() -> None:
    blocks = [{"type": "text", "text": "two"}] + [
        {"type": "tool_use", "id": "t", "name": "get_order", "input": {"order_id": o}} for o in ("A", "B")
    ]
    calls = [ToolCall(id="t", name="get_order", arguments={"order_id": o}) for o in ("A", "B")]
    fixed = unique_call_ids(AssistantMessage(tool_calls=calls, provider="anthropic", provider_content=blocks))
    assert fixed.provider_content is not None
    assert [b.get("id") for b in fixed.provider_content[1:]] == [c.id for c in fixed.tool_calls]
    assert fixed.tool_calls[0].id == "t" and fixed.tool_calls[1].id != "t"
