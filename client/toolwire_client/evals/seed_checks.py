"""Answer checks for the built-in seed eval set (examples/evals/seeds.toml) that a string match cannot express."""

import json

from toolwire_client.run.state import RunState


def refund_went_through(answer: str, state: RunState) -> bool:
    """The answer reports the refund, and the refund tool really answered with a fresh receipt for that order."""
    receipts = [
        json.loads(r.content)
        for step in state.steps
        for r in step.results
        if r.name == "issue_refund" and not r.is_error
    ]
    return answer.startswith("Refunded") and any(
        receipt.get("order_id") == "A123" and receipt.get("repeated") is False for receipt in receipts
    )
