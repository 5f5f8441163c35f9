"""A user's first `tools.py`: one plain tool and one risky one (a run of it pauses for a person), as the README's first
hour writes it. The wheel's walk (test_package.py) and the command vocabulary tests (test_cli_vocabulary.py) use it."""

TOOLS = '''
from toolwire_server import Registry

registry = Registry("installed")


@registry.tool()
def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


@registry.tool(risky=True)
def send_invoice(customer: str, amount: int) -> str:
    """Send an invoice to a customer (asks a person first)."""
    return f"invoice of {amount} sent to {customer}"
'''
