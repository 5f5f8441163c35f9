"""Counts in messages: "1 step", "2 steps", never "1 steps" (one helper, so every message gets it right)."""


def counted(n: int, noun: str, plural: str | None = None) -> str:
    """`n` and the noun in the number it takes: counted(1, "step") is "1 step", counted(2, "run") "2 runs"."""
    return f"{n} {noun if n == 1 else plural or noun + 's'}"
