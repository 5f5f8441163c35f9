"""The support desk as a workflow: classify the ticket, look up the policy, draft the reply. The path is this code;
the model fills in each step, with only the tools that step needs, on the support tools over stdio.

    python examples/support_workflow.py ["TICKET"] [--db PATH]

With no API key it runs on the scripted model (`scripted:support_workflow`); with ANTHROPIC_API_KEY or
OPENAI_API_KEY set it runs on that provider's default model ($TOOLWIRE_MODEL names another). One run, one trace,
one saved message list: `toolwire trace show RUN_ID` shows the steps afterwards."""

import sys
from pathlib import Path

import anyio

from toolwire_client import (
    RunConfig,
    RunLimits,
    RunState,
    ServerSpec,
    Step,
    StepRecord,
    Workflow,
    run_task,
    spec_or_script,
    step_lines,
)

HERE = Path(__file__).resolve().parent
TICKET = "Ticket from cus_8123: the keyboard in order A123 arrived broken. What can you do?"
TOPICS = "damaged_item, late_delivery, refund, cancellation, other"

SUPPORT_DESK = Workflow(
    [
        Step("classify", f"Classify the ticket as one of: {TOPICS}. Reply with the category only.", tools=[]),
        Step(
            "policy",
            "Look up the support policy for a {classify} ticket with get_policy and reply with its text.",
            tools=["get_policy"],
        ),
        Step(
            "reply",
            "Draft the reply to the customer. Read the order the ticket names with get_order, then follow this "
            "policy: {policy} Do not promise anything the policy does not allow.",
            tools=["get_order"],
        ),
    ]
)
SYSTEM = "You are a support agent for an online store. State only facts you read from a tool."


def config(spec: str) -> RunConfig:
    server = ServerSpec(
        name="support",
        command=[sys.executable, "-m", "toolwire_server", f"{HERE}/support_tools.py:desk", "--stdio"],
    )
    return RunConfig(model=spec, servers=[server], system=SYSTEM, limits=RunLimits(max_steps=10), workflow=SUPPORT_DESK)


def show(state: RunState, step: StepRecord) -> None:
    for line in step_lines(state, step):
        print(f"  {line}")


async def main(ticket: str, db: str | None) -> RunState:
    return await run_task(config(spec_or_script("support_workflow")), ticket, db=db, on_step=show)


if __name__ == "__main__":
    args = sys.argv[1:]
    db = None
    if "--db" in args:
        at = args.index("--db")
        db, args = args[at + 1], args[:at] + args[at + 2 :]
    state = anyio.run(main, args[0] if args else TICKET, db)
    print(f"-> {state.status}: {state.report}")
    print(f"reply: {state.final_answer}")
    print(f"saved as {state.run_id}: toolwire trace show {state.run_id}" + (f" --db {db}" if db else ""))
    sys.exit(0 if state.status == "done" else 1)
