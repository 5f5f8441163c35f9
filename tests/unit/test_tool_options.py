"""A tool's options as `@registry.tool(...)` takes them: each mistake is refused at registration, with a line that
names the tool and says what a right call looks like, and the registry is left without the tool."""

from typing import Any

import pytest

from toolwire_server import Registry


def noop() -> str:
    """Does nothing."""
    return "ok"


@pytest.mark.parametrize(
    ("options", "said"),
    [
        ({"timout_s": 5}, "tool 'noop' got unexpected keyword arguments: timout_s (it takes ask_before_task, "),
        ({"task": "sometimes"}, "tool 'noop': task must be one of optional, required, not 'sometimes'"),
        ({"max_concurrency": 0}, "tool 'noop': max_concurrency must be at least 1"),
        ({"ask_before_task": True}, "tool 'noop': ask_before_task needs task='optional' or task='required'"),
    ],
)
def test_a_wrong_option_is_refused_by_name(options: dict[str, Any], said: str) -> None:
    registry = Registry("options")
    with pytest.raises((TypeError, ValueError)) as refused:
        registry.add(noop, **options)
    assert str(refused.value).startswith(said), refused.value
    assert registry.get("noop") is None  # nothing half-registered


def test_the_right_options_register_the_tool() -> None:
    registry = Registry("options")
    tool = registry.add(noop, timeout_s=5, risky=True, task="optional", ask_before_task=True)
    assert (tool.policy.timeout_s, tool.policy.risky, tool.task, tool.ask_before_task) == (5, True, "optional", True)
