"""The console's HTML from saved runs, without a server: a sub-agent nested under the delegate call that started it
and drawn in the tree, hostile text escaped everywhere, no saved config (secrets) on the page, the trace linked only
when a backend is named and the run was traced."""

from toolwire_client.models.base import ModelReply
from toolwire_client.run.script_record import ScriptRecord
from toolwire_client.run.state import PendingCall, RunState, StepRecord, args_hash
from toolwire_client.ui import pages
from toolwire_client.ui.reads import RunView, Waiting, waits_for
from toolwire_shared.messages import AssistantMessage, ToolCall
from toolwire_shared.results import SubRun, ToolResult
from toolwire_shared.usage import Usage

HOSTILE = '<script>alert("x")</script>'
TRACE = "4bf92f3577b34da6a3ce929d0e0e4736"


def family() -> RunView:
    delegate = ToolCall(id="c1", name="delegate", arguments={"task": HOSTILE})
    child_call = ToolCall(id="c2", name="issue_refund", arguments={"order_id": HOSTILE})
    child = RunState(
        run_id="run_child",
        agent_name="agent",
        task=HOSTILE,
        model="m",
        parent_run_id="run_parent",
        steps=[StepRecord(index=1, tool_calls=[child_call])],
        pending=[PendingCall(call=child_call, state="pending_approval", args_hash=args_hash(child_call.arguments))],
    )
    child.status = "waiting_for_approval"
    parent = RunState(
        run_id="run_parent",
        agent_name="agent",
        task="parent task",
        model="m",
        trace_id=TRACE,
        config={"servers": [{"name": "s", "env": {"API_KEY": "sk-secret-value"}}]},
        steps=[
            StepRecord(
                index=1, tool_calls=[delegate], results=[ToolResult(call_id="c1", name="delegate", content=HOSTILE)]
            )
        ],
        children={"c1": SubRun(run_id="run_child", status="waiting_for_approval")},
    )
    return RunView(parent, {"run_child": child}, {}, [])


def test_a_sub_agent_is_nested_under_its_delegate_call_and_drawn_in_the_tree() -> None:
    view = family()
    steps = pages.steps_fragment(view)
    assert steps.index('data-call="c1"') < steps.index('href="/runs/run_child"') < steps.index('data-call="c2"')
    tree = pages.tree_fragment(view)
    assert tree.index("run_parent") < tree.index("run_child") and "<ul><li>" in tree
    assert waits_for(view.children["run_child"]) == "a person: issue_refund"


def test_hostile_text_is_escaped_and_the_saved_config_never_shown() -> None:
    view = family()
    child = view.children["run_child"]
    html = "".join(
        [
            pages.run_body(view, pages.decide_fragment([Waiting(child, child.pending[0])], "tok", "/"), "", None),
            pages.run_head(child, None),
        ]
    )
    assert "<script>" not in html and "&lt;script&gt;" in html
    assert "sk-secret-value" not in html and "API_KEY" not in html


def test_the_trace_is_a_link_only_with_a_backend_and_a_real_trace_id() -> None:
    parent = family().root
    assert f'href="http://jaeger:16686/trace/{TRACE}"' in pages.run_head(parent, "http://jaeger:16686/trace/{trace_id}")
    assert "href" not in pages.run_head(parent, None) and TRACE in pages.run_head(parent, None)
    untraced = parent.model_copy(update={"trace_id": "0" * 32})
    assert "none recorded" in pages.run_head(untraced, "http://jaeger:16686/trace/{trace_id}")


def test_a_step_shows_the_tools_a_tool_search_had_loaded() -> None:
    run = RunState(run_id="run_search", agent_name="agent", task="t", model="m")
    run.steps = [StepRecord(index=1, loaded=[]), StepRecord(index=2, loaded=["crm_get_contact", HOSTILE])]
    steps = pages.steps_fragment(RunView(run, {}, {}, []))
    assert "tools loaded: none" in steps and "tools loaded: crm_get_contact, &lt;script&gt;" in steps
    assert "tools loaded" not in pages.steps_fragment(family())  # a run without tool search says nothing of it


def test_a_step_says_what_the_providers_context_editing_cleared() -> None:
    run = RunState(run_id="run_edited", agent_name="agent", task="t", model="m")
    cleared = {"type": "clear_tool_uses_20250919", "cleared_tool_uses": 3, "cleared_input_tokens": 12000}
    reply = ModelReply(message=AssistantMessage(text="ok"), usage=Usage(), applied_edits=[cleared, {"type": HOSTILE}])
    run.steps = [StepRecord(index=1, model_reply=reply), StepRecord(index=2)]
    steps = pages.steps_fragment(RunView(run, {}, {}, []))
    assert "the provider cleared 3 tool results (12,000 tokens) before the model read it" in steps
    assert "the provider applied &lt;script&gt;" in steps and HOSTILE not in steps  # a provider's text, escaped
    assert steps.count("the provider") == 2  # the step without edits says nothing of them


def test_a_code_mode_script_is_nested_as_a_script_not_a_sub_agent() -> None:
    view = family()
    view.children["run_child"].script = ScriptRecord(code="await issue_refund(order_id='A1')")
    steps = pages.steps_fragment(view)
    assert "<summary>script " in steps and "sub-agent" not in steps
    assert "<summary>sub-agent " in pages.steps_fragment(family())  # a delegate's child is still a sub-agent
