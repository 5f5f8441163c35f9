"""The seed's two tools (copied from the seed document), as in-process tools for replay tests."""

import ast
import operator
from typing import Any

from toolwire_client.tools.registry_source import RegistrySource
from toolwire_server import Registry

ORDERS = {"A123": {"item": "keyboard", "unit_price": 2500, "qty": 2}}
OPS = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Div: operator.truediv}


def get_order(order_id: str) -> dict[str, Any]:
    """Look up one order by its id. Use it before answering any question about an order."""
    if order_id not in ORDERS:
        raise ValueError(f"no order with id {order_id}; ids look like A123")
    return ORDERS[order_id]


def calculator(expression: str) -> float:
    """Evaluate arithmetic such as '2500 * 2 * 1.18'. Use it for every calculation."""

    def ev(node: ast.AST) -> float:
        if isinstance(node, ast.Constant) and isinstance(node.value, int | float):
            return node.value
        if isinstance(node, ast.BinOp) and type(node.op) in OPS:
            return float(OPS[type(node.op)](ev(node.left), ev(node.right)))
        raise ValueError("only numbers and + - * / are allowed")

    return round(ev(ast.parse(expression, mode="eval").body), 2)


def seed_source() -> RegistrySource:
    registry = Registry("seed")
    registry.add(get_order)
    registry.add(calculator)
    return RegistrySource(registry)
