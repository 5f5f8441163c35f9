"""Safe arithmetic for the example calculator: an AST walk over numbers and + - * / // % ** (never eval()), which
bounds every result before computing it, so no expression (`9**9**9**9`, `(10**10**8)`, a tower of powers) can
hold the server for more than microseconds or answer with anything but a readable error."""

import ast
import math
import operator
from collections.abc import Callable
from typing import Any

MAX_CHARS = 1000
MAX_DEPTH = 100
MAX_BITS = 4000
"""Integers up to about 1200 digits: far past any amount of money, far below what takes time to compute."""

Number = int | float
_OPS: dict[type[ast.operator], Callable[[Any, Any], Any]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv,
    ast.Mod: operator.mod,
    ast.Pow: operator.pow,
}
_ALLOWED = "only numbers, parentheses and + - * / // % ** are allowed, e.g. '2500 * 2 * 1.18'"
_TOO_LARGE = f"the result would be too large (this calculator handles numbers up to about {MAX_BITS * 3 // 10} digits)"


def evaluate(expression: str) -> Number:
    """The value of `expression`; ValueError with a sentence the model can act on for anything else."""
    if len(expression) > MAX_CHARS:
        raise ValueError(f"the expression is {len(expression)} characters long; at most {MAX_CHARS} are allowed")
    try:
        tree = ast.parse(expression, mode="eval")
    except (SyntaxError, RecursionError, MemoryError) as exc:
        shown = expression if len(expression) <= 100 else expression[:100] + "..."
        raise ValueError(f"not an arithmetic expression: {shown!r}; write e.g. '2500 * 2 * 1.18'") from exc
    except ValueError as exc:  # e.g. an integer literal past Python's digit limit
        raise ValueError(f"not a usable number in {expression[:50]!r}...: {exc}") from exc
    return _evaluate(tree.body, 0)


def _evaluate(node: ast.AST, depth: int) -> Number:
    if depth > MAX_DEPTH:
        raise ValueError(f"the expression is nested more than {MAX_DEPTH} levels deep; split it into steps")
    if isinstance(node, ast.Constant) and type(node.value) in (int, float):
        return _finite(node.value)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub | ast.UAdd):
        value = _evaluate(node.operand, depth + 1)
        return -value if isinstance(node.op, ast.USub) else value
    if isinstance(node, ast.BinOp) and type(node.op) in _OPS:
        left, right = _evaluate(node.left, depth + 1), _evaluate(node.right, depth + 1)
        _check_size(node.op, left, right)
        try:
            return _finite(_OPS[type(node.op)](left, right))
        except ZeroDivisionError as exc:
            raise ValueError("division by zero") from exc
        except OverflowError as exc:
            raise ValueError(_TOO_LARGE) from exc
    raise ValueError(_ALLOWED)


def _check_size(op: ast.operator, left: Number, right: Number) -> None:
    """Refuse before computing an integer result past MAX_BITS (float results overflow at once, and are checked)."""
    if not (isinstance(left, int) and isinstance(right, int)):
        return
    if isinstance(op, ast.Pow) and right > 0 and abs(left) > 1:
        bits = right * math.log2(abs(left)) if right.bit_length() < 64 else math.inf
    elif isinstance(op, ast.Mult):
        bits = left.bit_length() + right.bit_length()
    else:
        return
    if bits > MAX_BITS:
        raise ValueError(f"{_TOO_LARGE}: this step alone would need about {bits:.3g} bits")


def _finite(value: Any) -> Number:
    if isinstance(value, complex):  # a negative number to a fractional power
        raise ValueError("the result is not a real number (a negative number to a fractional power)")
    if isinstance(value, float) and not math.isfinite(value):
        raise ValueError(_TOO_LARGE)
    number: Number = value
    return number
