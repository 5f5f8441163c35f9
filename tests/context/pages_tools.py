"""Tools whose results are long, for the context tests and bench/context_bench.py, served by the real server
(`python -m toolwire_server tests/context/pages_tools.py:registry`): `page(n)` returns about 20 kB of numbered lines,
the same for the same page in every process."""

from toolwire_server import Registry

registry = Registry("pages", default_timeout_s=60)

LINES = 320
"""Lines of a page: about 19,500 characters, under both sides' default cap of 20,000."""


def page_text(n: int) -> str:
    return "\n".join(
        f"page {n} line {i}: quarterly figure {(n * 7919 + i * 104729) % 100000:05d} for region {i % 12}"
        + (" TOTAL" if i % 60 == 59 else "")
        + " ......"
        for i in range(1, LINES + 1)
    )


@registry.tool(description="Read one page of the report (about 20 kB).", idempotent=True)
def page(n: int) -> str:
    return page_text(n)


@registry.tool(description="Write a note for the reader.")
def note(text: str) -> str:
    return f"noted: {text}"
