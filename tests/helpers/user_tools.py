"""The tools.py a new user writes first, for the tests that drive `toolwire` in a user's folder as they do: TOOLS
(`add`, `divide`, `greet`: tests/test_first_hour.py walks through them), served over stdio as SERVER says, and
RISKY_TOOLS, the same file with one risky tool more (`send_invoice`: a run that calls it pauses for a person), for
the wheel's walk (test_package.py) and the command vocabulary tests (test_cli_vocabulary.py)."""

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

RISKY_TOOLS = (
    TOOLS
    + '''

@registry.tool(risky=True)
def send_invoice(customer: str, amount: int) -> str:
    """Send an invoice to a customer (asks a person first)."""
    return f"invoice of {amount} sent to {customer}"
'''
)
