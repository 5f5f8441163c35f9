"""A tool server that tells what environment it was started with (the names, and one value on request)."""

import os

from toolwire_server import Registry

registry = Registry("env")


@registry.tool(description="The names of this server's environment variables, sorted, comma-separated.")
def env_names() -> str:
    return ",".join(sorted(os.environ))


@registry.tool(description="The value of one environment variable of this server ('' when unset).")
def env_value(name: str) -> str:
    return os.environ.get(name, "")
