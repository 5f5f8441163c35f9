"""The tools.py a new user writes first (tests/test_first_hour.py walks through it: `add`, `divide`, `greet`), for the
tests that drive `toolwire` in a user's folder as they do, served over stdio as SERVER says."""

TOOLS = """
from typing import Literal

from toolwire_server import Registry

registry = Registry("math")


@registry.tool(description="Add two whole numbers.", idempotent=True)
def add(a: int, b: int = 1) -> int:
    return a + b


@registry.tool(description="Divide a by b.")
def divide(a: float, b: float) -> float:
    return a / b


@registry.tool(description="Greet someone by name, in the tone asked for.")
def greet(name: str, tone: Literal["warm", "curt"], times: int = 1) -> str:
    return " ".join([f"Hello, {name}!" if tone == "warm" else f"{name}."] * times)
"""
SERVER = ("--server", "toolwire serve tools.py:registry --stdio")
