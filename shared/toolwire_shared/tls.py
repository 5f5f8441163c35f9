"""One TLS context per process for every HTTP client toolwire makes.

Building a context loads the whole CA bundle: about 30 ms of CPU, paid by each new `httpx2.AsyncClient` that is not
handed one, even for plain http:// on loopback. A worker that opens a model client and an MCP client per run paid it
twice per run (a third of its CPU per loop step in the fleet bench). The context is built on first use, with httpx's
own defaults (so SSL_CERT_FILE / SSL_CERT_DIR are read then), and shared: an `ssl.SSLContext` is safe to share
between clients and threads.
"""

import functools
import ssl

import httpx2


@functools.cache
def ssl_context() -> ssl.SSLContext:
    return httpx2.create_ssl_context()
