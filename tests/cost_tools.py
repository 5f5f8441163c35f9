"""A tool server for the seed's cost arithmetic: one tool whose result is 600 tokens (2,400 characters)."""

from typing import Annotated

from pydantic import Field

from toolwire_server import Registry

PAGE_CHARS = 2400
"""600 tokens at four characters a token: the seed's tool result."""

registry = Registry("toolwire-cost-seed")


@registry.tool(description="Read one page of the report. Use it to read the report page by page.")
def read_page(page: Annotated[int, Field(ge=1)]) -> str:
    line = f"page {page}: quarterly figures, all regions, all products. "
    return (line * (PAGE_CHARS // len(line) + 1))[:PAGE_CHARS]
