"""`toolwire serve ...` with configure_server_tracing() called first: the one line the serve command needs.

Used by the two-process tests until `toolwire serve` makes the call itself (then this stays harmless: the second
call returns the first handle).
"""

from toolwire_otel.setup import configure_server_tracing
from toolwire_server.cli import serve

if __name__ == "__main__":
    configure_server_tracing()
    serve(prog_name="toolwire serve")
